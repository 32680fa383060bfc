"""The CPU matmul schedule (``app.CPUMatmul``) on small transformers: the app's default CPU pipeline before and
after it, TVM's default build, PyTorch eager, ONNX Runtime and (``--torch-compile``) ``torch.compile``.

Models: Hugging Face GPT-2, BERT and Llama from small configs with random weights (``transformers``; see
``requirements-bench.txt``) and the bench MLP, exported with ``torch.export`` and imported by the app's
importer (weights stay parameters). Columns, all built and timed in this one process on the same thread count
(``TVM_NUM_THREADS``, ``torch.set_num_threads``, ORT ``intra_op_num_threads``), interleaved round by round:

- ``before``: ``cpu_build.json`` as it was before this work (no ``app.SinkReshape`` nor
  ``FastMathTransform``, DLight step ``app.CPUParallel`` only, target ``{"kind": "llvm"}``);
- ``rule``: ``before`` plus ``app.CPUMatmul`` and the native target;
- ``no_fastmath``: ``cpu_build.json`` as shipped without its ``FastMathTransform`` step;
- ``after``: ``cpu_build.json`` as shipped (``app.SinkReshape``, ``FastMathTransform``, ..., DLight
  ``app.CPUMatmul`` then ``app.CPUParallel``, target ``{"kind": "llvm", "mcpu": "native"}``);
- ``tvm``: ``tvm.compile(mod, target=<native target>)`` (TVM's default pipeline);
- ``eager``, ``ort``, ``inductor``: PyTorch eager, ONNX Runtime (dynamo ONNX export), ``torch.compile``.

Prints per model the median per-call latency of each column, the ratios ``after / X`` (median of the per-round
ratios and the ratio of minimums), the build times and the numerical check against PyTorch; then the load.
Run: ``TVM_NUM_THREADS=2 .venv/bin/python -m bench.bench_matmul_rule [--models gpt2,bert] [--rounds 7]``.
"""

from __future__ import annotations

import argparse
import io
import os
import statistics
import sys
import time
from typing import Any, Callable

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)

THREADS = int(os.environ.setdefault("TVM_NUM_THREADS", "2"))


def _hf_models() -> dict[str, Callable[[], tuple[Any, tuple]]]:
    """Model name -> factory of ``(torch module returning a tuple, example inputs)``."""
    import torch

    def wrap(model: Any, **kwargs: Any) -> Any:
        class Wrapped(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model.eval()

            def forward(self, ids: Any) -> Any:
                # an explicit all-ones mask: without one, transformers 5 looks for packed sequences with a
                # cumsum of bools, which TVM 0.27's importer keeps as a bool cumsum that LLVM cannot build
                out = self.model(input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs)
                return (out.logits if hasattr(out, "logits") else out[0],)
        return Wrapped().eval()

    def gpt2() -> tuple[Any, tuple]:
        from transformers import GPT2Config, GPT2LMHeadModel

        cfg = GPT2Config(vocab_size=2048, n_positions=128, n_embd=256, n_layer=2, n_head=4, bos_token_id=0,
                         eos_token_id=0, attn_implementation=os.environ.get("BENCH_ATTN", "eager"))
        return wrap(GPT2LMHeadModel(cfg), use_cache=False), (torch.randint(0, 2048, (1, 64)),)

    def bert() -> tuple[Any, tuple]:
        from transformers import BertConfig, BertModel

        cfg = BertConfig(vocab_size=2048, hidden_size=256, num_hidden_layers=2, num_attention_heads=4,
                         intermediate_size=1024, max_position_embeddings=128)
        return wrap(BertModel(cfg)), (torch.randint(0, 2048, (1, 64)),)

    def llama() -> tuple[Any, tuple]:
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(vocab_size=2048, hidden_size=256, intermediate_size=688, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128)
        return wrap(LlamaForCausalLM(cfg), use_cache=False), (torch.randint(0, 2048, (1, 64)),)

    def mlp() -> tuple[Any, tuple]:
        model = torch.nn.Sequential(torch.nn.Linear(512, 1024), torch.nn.GELU(), torch.nn.Linear(1024, 512),
                                    torch.nn.ReLU(), torch.nn.Linear(512, 10))

        class Tup(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.m = model.eval()

            def forward(self, x: Any) -> Any:
                return (self.m(x),)
        return Tup().eval(), (torch.randn(16, 512),)

    return {"gpt2": gpt2, "bert": bert, "llama": llama, "mlp": mlp}


def _app_build(mod: Any, doc: Any, rules: list[str] | None, target: dict[str, Any],
               skip: tuple[str, ...] = ()) -> tuple[Any, float]:
    """Apply ``doc``'s enabled steps but those in ``skip`` (the engine's passes, ``make_pass``; the DLight
    step's rules replaced by ``rules`` when given) for ``target`` and build as the engine does
    (``build_lowered``: ``default_build``); ``(executable, seconds)``."""
    import tvm

    from pipeline_model.engine.build.measure import build_lowered
    from pipeline_model.passkinds.catalogue_tvm import make_pass
    from pipeline_model.passkinds.context import PassBuildContext
    from pipeline_model.targets import native_target

    tgt = tvm.target.Target(native_target(dict(target)))
    start = time.perf_counter()
    with tgt, tvm.transform.PassContext(opt_level=3):
        for step in doc.steps:
            if not step.enabled or step.pass_id in skip:
                continue
            params = dict(step.params)
            if rules is not None and step.pass_id == "dlight.ApplyDefaultSchedule":
                params["rules"] = list(rules)
            mod = make_pass(step.pass_id, params, PassBuildContext(target=tgt))(mod)
    ex, _ = build_lowered(mod, dict(target))
    return ex, time.perf_counter() - start


def _tvm_runner(ex: Any, arrays: list[np.ndarray], params: dict[str, np.ndarray], mod: Any) -> Callable[[], Any]:
    import tvm
    from tvm import relax

    vm = relax.VirtualMachine(ex, tvm.cpu())
    names = [str(p.name) for p in mod["main"].params]
    inputs = [tvm.runtime.tensor(a) for a in arrays]
    weights = [tvm.runtime.tensor(params[n]) for n in names[len(arrays):]]
    args = inputs + weights
    return lambda: vm["main"](*args)


def _first(out: Any) -> np.ndarray:
    while isinstance(out, (list, tuple)) or type(out).__name__ == "Array":
        out = out[0]
    return out.numpy() if hasattr(out, "numpy") else np.asarray(out)


def _ort_runner(model: Any, inputs: tuple) -> Callable[[], Any] | None:
    import onnxruntime as ort
    import torch

    buf = io.BytesIO()
    try:
        prog = torch.onnx.export(model, inputs, dynamo=True, verbose=False)
        prog.save(buf) if hasattr(prog, "save") else None
        data = buf.getvalue() if buf.getvalue() else prog.model_proto.SerializeToString()
    except Exception as exc:  # noqa: BLE001 - ORT is an anchor, not the subject: report and go on
        print(f"  ort: export failed ({type(exc).__name__}: {str(exc)[:120]})")
        return None
    opts = ort.SessionOptions()
    opts.intra_op_num_threads, opts.inter_op_num_threads = THREADS, 1
    sess = ort.InferenceSession(data, opts, providers=["CPUExecutionProvider"])
    feed = {i.name: t.numpy() for i, t in zip(sess.get_inputs(), inputs)}
    return lambda: sess.run(None, feed)


def _time_rounds(runners: dict[str, Callable[[], Any]], rounds: int, budget_s: float) -> dict[str, list[float]]:
    """Interleaved: each round times every runner for ~``budget_s`` (mean per call, seconds)."""
    for fn in runners.values():  # warm-up: >= 100 ms each
        start = time.perf_counter()
        while time.perf_counter() - start < 0.1:
            fn()
    times: dict[str, list[float]] = {k: [] for k in runners}
    for _ in range(rounds):
        for name, fn in runners.items():
            n, start = 0, time.perf_counter()
            while n < 3 or time.perf_counter() - start < budget_s:
                fn()
                n += 1
            times[name].append((time.perf_counter() - start) / n)
    return times


def bench_model(name: str, factory: Callable[[], tuple[Any, tuple]], args: argparse.Namespace) -> None:
    """Build, check and time one model; print its rows."""
    import torch

    from pipeline_model.engine.build.measure import build_lowered
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.importers.frontend_tvm import from_exported
    from pipeline_model.passkinds.catalogue_tvm import catalogue
    from pipeline_model.targets import native_target

    catalogue()  # built once per process: not part of any build time below
    torch.manual_seed(0)
    model, inputs = factory()
    with torch.no_grad():
        want = _first(model(*inputs))
    exported = torch.export.export(model, inputs)
    loaded = from_exported(name, exported, name)
    mod, params = loaded.mod, loaded.params or {}
    arrays = [t.numpy() for t in inputs]
    doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json"))
    runners: dict[str, Callable[[], Any]] = {}
    builds: dict[str, float] = {}
    exes: dict[str, Any] = {}
    new_steps = ("app.SinkReshape", "relax.FastMathTransform")
    for column, rules, target, skip in (("before", ["app.CPUParallel"], {"kind": "llvm"}, new_steps),
                                        ("rule", None, doc.target, new_steps),
                                        ("no_fastmath", None, doc.target, ("relax.FastMathTransform",)),
                                        ("after", None, doc.target, ())):
        ex, builds[column] = _app_build(mod, doc, rules, target, skip)
        runners[column] = _tvm_runner(ex, arrays, params, mod)
        exes[column] = ex
    start = time.perf_counter()
    ex, _ = build_lowered(mod, native_target({"kind": "llvm", "mcpu": "native"}), baseline=True)  # tvm.compile
    builds["tvm"] = time.perf_counter() - start
    runners["tvm"] = _tvm_runner(ex, arrays, params, mod)
    checks = {k: float(np.abs(_first(fn()) - want).max() / max(1e-12, np.abs(want).max())) for k, fn in runners.items()}
    torch.set_num_threads(THREADS)
    runners["eager"] = lambda: model(*inputs)
    if args.ort:
        ort_fn = _ort_runner(model, inputs)
        if ort_fn is not None:
            runners["ort"] = ort_fn
    if args.torch_compile:
        compiled = torch.compile(model)
        start = time.perf_counter()
        with torch.no_grad():
            compiled(*inputs)
        builds["inductor"] = time.perf_counter() - start
        runners["inductor"] = lambda: compiled(*inputs)
    with torch.no_grad():
        times = _time_rounds(runners, args.rounds, args.budget)
    if args.profile:
        _profile(exes["after"], arrays, params, mod)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"\n{name}: max |error| / max |torch| : " + ", ".join(f"{k} {v:.1e}" for k, v in checks.items()))
    print("  build s: " + ", ".join(f"{k} {v:.2f}" for k, v in builds.items())
          + f"  (after / tvm.compile {builds['after'] / builds['tvm']:.2f})")
    print("  median latency us: " + ", ".join(f"{k} {v * 1e6:.0f}" for k, v in med.items()))
    after = times["after"]
    for other, vals in times.items():
        if other == "after":
            continue
        ratio = statistics.median(a / b for a, b in zip(after, vals))
        print(f"  after / {other}: median of per-round ratios {ratio:.2f}, ratio of minimums "
              f"{min(after) / min(vals):.2f}")


def _profile(ex: Any, arrays: list[np.ndarray], params: dict[str, np.ndarray], mod: Any) -> None:
    """Per-callee time of one executable (the engine's ``profile_vm``): kernels, VM builtins (allocation,
    reshape views ...) and what the VM itself spends between calls."""
    import tvm
    from tvm import relax

    from pipeline_model.engine.build.measure import profile_vm

    vm = relax.VirtualMachine(ex, tvm.cpu())
    names = [str(p.name) for p in mod["main"].params]
    full = list(arrays) + [params[n] for n in names[len(arrays):]]
    prof = profile_vm(vm, "main", tvm.cpu(), full, {"repeat": 5, "warmup": 3})
    entries = [e for e in prof["entries"] if e["name"] != "main"]
    kernels = sum(e["total_us"] for e in entries if e.get("kind") == "prim_func" or not str(e["name"]).startswith("vm."))
    builtins = [e for e in entries if str(e["name"]).startswith("vm.")]
    print(f"  profile (after): run {prof['run_us']:.0f} us, kernels {kernels:.0f} us in "
          f"{sum(e['calls'] for e in entries if e not in builtins)} calls; VM builtins "
          + ", ".join(f"{e['name']} {e['calls']}x {e['total_us']:.0f} us" for e in builtins[:4]))
    for e in entries[:5]:
        print(f"    {e['name']}: {e['calls']} calls, {e['total_us']:.0f} us ({e['share'] * 100:.0f} %)")


def main() -> int:
    """Command line entry."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default="gpt2,bert,llama,mlp")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--budget", type=float, default=0.05, help="seconds per column per round")
    parser.add_argument("--no-ort", dest="ort", action="store_false")
    parser.add_argument("--profile", action="store_true", help="profile the 'after' build per callee")
    parser.add_argument("--torch-compile", action="store_true", help="add torch.compile (inductor; slow first call)")
    args = parser.parse_args()
    import warnings

    warnings.filterwarnings("ignore")
    from bench.latency.cli import _pool_text
    from pipeline_model.runtime_threads import ensure_runtime_threads

    ensure_runtime_threads()  # before import tvm: the app's thread pool, as the engine runs it
    factories = _hf_models()
    print(f"TVM_NUM_THREADS={THREADS}; thread pool {_pool_text()}; load before: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    for name in args.models.split(","):
        bench_model(name, factories[name], args)
    print(f"\nload after: {' '.join(open('/proc/loadavg').read().split()[:3])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
