"""Dynamic-axis exports (issue 34, ``python -m bench.bench_latency --dynamic``): Hugging Face GPT-2, BERT and
Llama (2 layers; hidden 128 and hidden 768) exported with a dynamic sequence axis (``Dim("seq", min=2, max=256)``
on ``input_ids``' axis 1), and the same model exported static at each sequence length, in each of ``--formats``
(default ``pt2,onnx``): a ``torch.export`` archive (``.pt2``, imported by the app's PyTorch importer) and a dynamo
ONNX file (:mod:`bench.latency.exporting`).

Per model, format and sequence length (``--seqs``, default 32,128), interleaved in this process on ``--threads``
threads (default 2, as the regular table; :mod:`bench.latency.timing`):

* app dynamic: ``cpu_build.json`` run by the app's engine on the dynamic file, built and exported once
  (``export_library``), the one library run at every length;
* app static: the same pipeline on the static file of that length, same format (one build per length);
* the reference (:data:`REFERENCE`): ONNX Runtime on the dynamic ``.onnx`` file (the file the app imported) for
  ONNX rows; PyTorch eager on the model the ``.pt2`` was exported from for ``.pt2`` rows (no ONNX Runtime
  column there: a ``.pt2`` has no ONNX file of its own).

Ratios: app dynamic ÷ app static (the issue's target: at most 1.2) and app dynamic ÷ the reference; the check is
max |diff| / max |ref| of app dynamic against the reference on the same inputs. Each row records the load average
after its timing.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any, Callable

#: The longest sequence of the dynamic axis (and the models' positions).
SEQ_MAX = 256


def _configs() -> dict[str, Callable[[], Any]]:
    """The models: 2 layers each, vocabulary 2048, positions up to :data:`SEQ_MAX`."""
    from bench.latency import archs

    def gpt2(hidden: int, heads: int) -> Callable[[], Any]:
        def make() -> Any:
            import torch

            tf = archs._quiet_transformers()
            torch.manual_seed(0)
            cfg = tf.GPT2Config(n_layer=2, n_embd=hidden, n_head=heads, vocab_size=archs.VOCAB, n_positions=SEQ_MAX)
            return archs._hf(tf.GPT2LMHeadModel(cfg), "logits")
        return make

    def bert(hidden: int, heads: int) -> Callable[[], Any]:
        def make() -> Any:
            import torch

            tf = archs._quiet_transformers()
            torch.manual_seed(0)
            cfg = tf.BertConfig(hidden_size=hidden, num_hidden_layers=2, num_attention_heads=heads,
                                intermediate_size=4 * hidden, vocab_size=archs.VOCAB, max_position_embeddings=SEQ_MAX)
            return archs._hf(tf.BertModel(cfg, add_pooling_layer=False), "last_hidden_state")
        return make

    def llama(hidden: int, heads: int) -> Callable[[], Any]:
        def make() -> Any:
            import torch

            tf = archs._quiet_transformers()
            torch.manual_seed(0)
            cfg = tf.LlamaConfig(hidden_size=hidden, intermediate_size=int(hidden * 2.6875), num_hidden_layers=2,
                                 num_attention_heads=heads, num_key_value_heads=heads // 2, vocab_size=archs.VOCAB,
                                 max_position_embeddings=SEQ_MAX)
            return archs._hf(tf.LlamaForCausalLM(cfg), "logits")
        return make

    return {"gpt2_h128": gpt2(128, 4), "bert_h128": bert(128, 2), "llama_h128": llama(128, 4),
            "gpt2_h768": gpt2(768, 12), "bert_h768": bert(768, 12), "llama_h768": llama(768, 12)}


def _dynamic_shapes() -> dict[str, Any]:
    """``input_ids``' axis 1 as ``Dim("seq", min=2, max=SEQ_MAX)`` (``torch.export`` and dynamo ONNX alike)."""
    import torch

    return {"input_ids": {1: torch.export.Dim("seq", min=2, max=SEQ_MAX)}}


def _app_library(client: Any, doc: Any, model_path: str, out_dir: str) -> dict[str, Any]:
    """``cpu_build.json`` on ``model_path`` run by the engine, built and exported into ``out_dir``."""
    import copy

    from bench.latency import appside

    one = copy.deepcopy(doc)
    one.model = model_path
    return appside.app_column(client, one, os.path.basename(model_path), out_dir)


#: The reference column of each format: the system the check compares app dynamic with (timed too).
REFERENCE = {"onnx": "ONNX Runtime", "pt2": "PyTorch eager"}


def _reference(fmt: str, model: Any, dyn_path: str, ids: tuple[Any, ...], threads: int) -> Any:
    """ONNX Runtime on the dynamic ``.onnx`` file, or PyTorch eager on the model a ``.pt2`` was exported from."""
    from bench.latency import systems

    if fmt == "onnx":
        return systems.onnxruntime_session(dyn_path, ids, threads)
    return systems.torch_eager(model, ids)


def _bench_model(name: str, make: Callable[[], Any], formats: list[str], seqs: list[int], opts: Any, client: Any,
                 doc: Any, folder: str) -> list[dict[str, Any]]:
    """The rows of one model: per format and sequence length the three systems' samples and the check."""
    import torch

    from bench.latency import exporting, systems, timing

    model, _example = make()
    vocab = 2048
    rows = []
    for fmt in formats:
        dyn_path = exporting.export(model, (torch.randint(0, vocab, (1, seqs[0])),), folder, f"{name}_dyn", fmt,
                                    _dynamic_shapes())
        dyn = _app_library(client, doc, dyn_path, os.path.join(folder, f"{name}_{fmt}_dyn"))
        for seq in seqs:
            ids = (torch.randint(0, vocab, (1, seq), generator=torch.Generator().manual_seed(seq)),)
            st_path = exporting.export(model, ids, folder, f"{name}_s{seq}", fmt)
            static = _app_library(client, doc, st_path, os.path.join(folder, f"{name}_{fmt}_s{seq}"))
            row: dict[str, Any] = {"model": name, "format": fmt, "seq": seq, "build_dyn_s": dyn.get("build_s"),
                                   "build_static_s": static.get("build_s")}
            errors = [c["error"] for c in (dyn, static) if "error" in c]
            if errors:
                row["error"] = errors[0][:300]
                rows.append(row)
                print(f"  {name}.{fmt} seq {seq}: ERROR {row['error']}", file=sys.stderr, flush=True)
                continue
            ref = REFERENCE[fmt]
            cols = {"app dynamic": systems.tvm_system("app dynamic", dyn["lib"], ids, check_shape=False),
                    "app static": systems.tvm_system("app static", static["lib"], ids),
                    ref: _reference(fmt, model, dyn_path, ids, opts.threads)}
            row["check"] = systems.relative_error(cols["app dynamic"].outputs(), cols[ref].outputs())
            row["samples"] = timing.interleaved({k: c.run for k, c in cols.items()}, opts.repeat, opts.sample_ms)
            row["load"] = timing.loadavg()
            rows.append(row)
            print(f"  {name}.{fmt} seq {seq} (load {row['load']}): "
                  + ", ".join(f"{k} {timing.summary(v)['median'] / 1000:.3f} ms" for k, v in row["samples"].items())
                  + f"; check {row['check']:.1e}; dynamic ÷ static per round "
                  + " ".join(f"{a / b:.2f}" for a, b in zip(row["samples"]["app dynamic"], row["samples"]["app static"])),
                  file=sys.stderr, flush=True)
    return rows


def print_rows(rows: list[dict[str, Any]], tol: float) -> None:
    """The Markdown table of the rows (the reference: ORT for ``.onnx``, PyTorch eager for ``.pt2``)."""
    from bench.latency import timing

    print("| model | file | seq | app dynamic ms | app static ms | reference ms | dynamic ÷ static | "
          "dynamic ÷ reference | build dyn / static s | check vs reference | load |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        if "error" in r:
            print(f"| {r['model']} | {r['format']} | {r['seq']} | error: {r['error']} | | | | | | | |")
            continue
        s = r["samples"]
        ref = REFERENCE[r["format"]]
        med = {k: timing.summary(v)["median"] / 1000 for k, v in s.items()}
        vs_static = timing.ratios(s["app dynamic"], s["app static"])
        vs_ref = timing.ratios(s["app dynamic"], s[ref])
        verdict = "pass" if r["check"] <= tol else "FAIL"
        print(f"| {r['model']} | {r['format']} | {r['seq']} | {med['app dynamic']:.3f} | {med['app static']:.3f} | "
              f"{med[ref]:.3f} ({'ORT' if r['format'] == 'onnx' else 'eager'}) | "
              f"{vs_static['median']:.2f} ({vs_static['min']:.2f}) | {vs_ref['median']:.2f} ({vs_ref['min']:.2f}) | "
              f"{r['build_dyn_s']:.1f} / {r['build_static_s']:.1f} | {verdict} {r['check']:.1e} | {r['load']} |")


def main(opts: Any) -> int:
    """Run the dynamic-axis bench (``--dynamic``; ``--models`` picks from :func:`_configs`, ``--seqs``)."""
    from bench.latency import appside, systems, timing
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.resources import resource_path

    configs = _configs()
    names = list(configs) if opts.models in ("", "all") else [m.strip() for m in opts.models.split(",")]
    unknown = [n for n in names if n not in configs]
    if unknown:
        raise SystemExit(f"--dynamic: unknown model {unknown[0]!r}; known: {', '.join(configs)}")
    seqs = [int(s) for s in str(opts.seqs).split(",") if s.strip()]
    formats = [f.strip() for f in str(opts.formats).split(",") if f.strip()]
    bad = [f for f in formats if f not in REFERENCE]
    if bad or not formats:
        raise SystemExit(f"--dynamic: unknown format {bad[0] if bad else ''!r}; known: {', '.join(REFERENCE)}")
    systems.set_threads(opts.threads)
    doc = load_pipeline(resource_path("pipelines", "cpu_build.json"))
    load_before = timing.loadavg()
    client = appside.make_client()
    rows: list[dict[str, Any]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="bench_dynamic_") as folder:
            for name in names:
                rows += _bench_model(name, configs[name], formats, seqs, opts, client, doc, folder)
    finally:
        client.close()
    print(f"dynamic-axis bench: {opts.threads} threads, {opts.repeat} interleaved rounds; load average before "
          f"{load_before}, after {timing.loadavg()}; ratio = median of per-round ratios (ratio of the minimums)")
    print_rows(rows, opts.tol)
    return 1 if any("error" in r or r["check"] > opts.tol for r in rows) else 0
