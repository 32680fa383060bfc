#!/usr/bin/env python3
"""Fuzz the file readers (issue 9): prints figures, asserts nothing; not part of the test suite.

Feeds generated and mutated pipeline files and corrupted model files to

* the loader and the GUI's open path (``fileformat.load_pipeline`` with known pass ids — what
  ``MainWindow.open_pipeline`` calls before any Qt code — then what the app does with an opened
  document: save it again (``dumps_pipeline`` + reload), the run request (``EngineClient.run_args``),
  the tuning work dir and the script export);
* ``main.py run`` (the CLI entry, in process with one shared engine) for a sample of them;
* the model resolution (``models.resolve_model`` / ``model_key``) and, for a sample, an engine run
  (``--trust``, so the corrupted model really loads in the engine).

Each input ends as: ok, clean error (``PipelineFileError`` / ``ExportError`` / ``ModelLoadError`` /
a run result or exit code with a message), traceback (any other exception — a bug), hang (the
per-input alarm fired) or crash (the worker process died). Goal: 0 tracebacks, 0 hangs, 0 crashes.
Inputs that failed are written to ``--keep DIR`` for reproduction.

Usage: ``.venv/bin/python -m bench.fuzz_files [--pipelines 10000] [--models 200]
[--cli-sample 100] [--engine-sample 200] [--seed 0]``
"""

from __future__ import annotations

import argparse
import collections
import copy
import glob
import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback
from typing import Any, Callable

from pipeline_model.resources import resource_path  # noqa: E402 - after the standard library

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINES = sorted(glob.glob(str(resource_path("pipelines", "*.json"))))
MODELS = sorted(glob.glob(str(resource_path("models", "*.py"))))

HOSTILE_VALUES: list[Any] = [
    None, True, 0, -1, 2**63, -(2**63) - 1, 10**5000, 1e308, 1e999, float("nan"), "", " ", "\n", "\ud800",
    "a\u0000b", "é" * 1000, [], {}, [[[[[]]]]], {"": {"": {}}}, "x" * 100_000, "/dev/zero", "/proc/self/mem",
    "../../../../etc/passwd", "builtin:", "builtin:mlp\n", {"kind": "llvm", "num-cores": 10**30},
]
RAW_SNIPPETS = ["NaN", "Infinity", "-Infinity", "9" * 5000, "[" * 600 + "]" * 600, '"\\ud800"', '"\\udfff"',
                "1e999", "-0", '"a":1,"a":2', "\ufeff", "\x00", "{}", "[]", "null", "tru", '"\\x"']


class Hang(Exception):
    """The per-input alarm fired."""


def _alarm(_signum: int, _frame: Any) -> None:
    raise Hang()


# ------------------------------------------------------------------------------------------ inputs


def _seeds() -> list[dict[str, Any]]:
    out = []
    for path in PIPELINES:
        with open(path, encoding="utf-8") as fh:
            out.append(json.load(fh))
    return out


def _paths(value: Any, prefix: tuple = ()) -> list[tuple]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found += _paths(item, (*prefix, i))
    return found


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    node = doc
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return doc


def _structural(rng: random.Random, seed: dict[str, Any]) -> str:
    doc = copy.deepcopy(seed)
    for _ in range(rng.randint(1, 4)):
        paths = _paths(doc)
        path = rng.choice(paths)
        action = rng.random()
        try:
            if action < 0.5:
                doc = _set(doc, path, copy.deepcopy(rng.choice(HOSTILE_VALUES)))
            elif action < 0.7 and path:
                node = doc
                for key in path[:-1]:
                    node = node[key]
                del node[path[-1]]
            elif action < 0.85:
                doc = _set(doc, path, [copy.deepcopy(rng.choice(HOSTILE_VALUES))])
            else:
                doc = _set(doc, path, {"format": "relax-pipeline-studio.pipeline", "version": rng.choice([0, 1, 2, -1, "1"])})
        except (KeyError, IndexError, TypeError):
            continue
    try:
        return json.dumps(doc, ensure_ascii=rng.random() < 0.5, indent=rng.choice([None, 1, 2]))
    except (ValueError, RecursionError):
        return json.dumps(seed)


def _textual(rng: random.Random, text: str) -> bytes:
    data = bytearray(text.encode("utf-8", "surrogatepass"))
    for _ in range(rng.randint(1, 6)):
        action = rng.random()
        pos = rng.randrange(len(data) + 1) if data else 0
        if action < 0.3 and data:
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif action < 0.5:
            del data[pos:pos + rng.randint(1, 50)]
        elif action < 0.8:
            data[pos:pos] = rng.choice(RAW_SNIPPETS).encode("utf-8", "surrogatepass")
        elif action < 0.9:
            data = data[:pos]
        else:
            data[pos:pos] = data[max(0, pos - 200):pos]
    return bytes(data)


def _generated(rng: random.Random) -> bytes:
    def value(depth: int) -> Any:
        kind = rng.random()
        if depth > 4 or kind < 0.4:
            return copy.deepcopy(rng.choice(HOSTILE_VALUES[:14] + ["relax.FuseOps", "llvm", "builtin:mlp"]))
        if kind < 0.7:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(["pass", "params", "uid", "enabled", "kind", "x", "work_dir", "num-cores"]): value(depth + 1)
                for _ in range(rng.randint(0, 3))}

    doc = {"format": "relax-pipeline-studio.pipeline", "version": rng.choice([0, 1, 1, 1]), "name": value(3),
           "model": rng.choice(["builtin:mlp", "builtin:transformer", value(3), "x.py", "/dev/null"]),
           "target": rng.choice([{"kind": "llvm"}, "cpu", "cuda", value(2)]),
           "steps": [{"pass": rng.choice(["relax.FuseOps", "custom.python", "relax.FuseOpsByPattern", value(4)]),
                      "params": value(2), "enabled": rng.choice([True, False, value(4)]),
                      "uid": rng.choice(["a", "b", "c", value(4)])} for _ in range(rng.randint(0, 4))],
           "build": value(2)}
    try:
        return json.dumps(doc).encode("utf-8", "surrogatepass")
    except (ValueError, RecursionError):
        return b"{}"


def pipeline_inputs(n: int, seed: int) -> list[bytes]:
    """``n`` pipeline files: a third structural mutations of the bundled ones, a third textual
    mutations, a third generated."""
    rng = random.Random(seed)
    seeds = _seeds()
    texts = [json.dumps(s, indent=2) for s in seeds]
    out = []
    for i in range(n):
        which = i % 3
        if which == 0:
            out.append(_structural(rng, rng.choice(seeds)).encode("utf-8", "surrogatepass"))
        elif which == 1:
            out.append(_textual(rng, rng.choice(texts)))
        else:
            out.append(_generated(rng))
    return out


def model_inputs(n: int, seed: int) -> list[bytes]:
    """``n`` corrupted model files from the bundled nn.Module models and a TVMScript print of one."""
    rng = random.Random(seed + 1)
    texts = [open(p, encoding="utf-8").read() for p in MODELS]
    texts.append("# from tvm.script import ir as I\n# from tvm.script import relax as R\n\n@I.ir_module\nclass Module:\n"
                 "    @R.function\n    def main(x: R.Tensor((2, 3), dtype=\"float32\")) -> R.Tensor((2, 3), dtype=\"float32\"):\n"
                 "        with R.dataflow():\n            y = R.add(x, x)\n            R.output(y)\n        return y\n")
    return [_textual(rng, rng.choice(texts)) for _ in range(n)]


# ------------------------------------------------------------------------------------------ checks


def check_pipeline_file(path: str, known: set[str]) -> str:
    """Loader + GUI open path + what the app does with an opened document; the outcome."""
    from pipeline_model import work_dirs as tuning
    from pipeline_model.engine.client import EngineClient
    from pipeline_model.export import ExportError, export_script
    from pipeline_model.fileformat import PipelineFileError, dumps_pipeline, load_pipeline, loads_pipeline

    try:
        doc = load_pipeline(path, known_pass_ids=known)
    except PipelineFileError as exc:
        if not str(exc).startswith(path):
            return "traceback"  # an error that does not name the file is a bug too
        return "clean"
    text = dumps_pipeline(doc)  # what was loaded can be saved
    loads_pipeline(text, source=path, known_pass_ids=known)
    EngineClient.run_args(doc)
    try:
        tuning.document_work_dir(doc)
    except ValueError:
        pass
    try:
        export_script(doc)
    except ExportError:
        pass
    return "ok"


def check_model_file(path: str) -> str:
    """Model resolution as the CLI and the engine do it before loading."""
    from pipeline_model import models

    try:
        models.resolve_model(path)
        models.model_key(path)
    except models.ModelLoadError:
        return "clean"
    return "ok"


def run_guarded(fn: Callable[[], str], limit_s: float) -> tuple[str, str]:
    """(outcome, detail) of ``fn`` with an alarm."""
    signal.setitimer(signal.ITIMER_REAL, limit_s)
    try:
        return fn(), ""
    except Hang:
        return "hang", ""
    except Exception:  # noqa: BLE001 - what the fuzzer looks for
        return "traceback", traceback.format_exc(limit=-4)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def worker(kind: str, files: list[str], known: list[str], limit_s: float) -> None:
    """Child process: check each file, print one JSON line per outcome."""
    signal.signal(signal.SIGALRM, _alarm)
    sys.setrecursionlimit(10_000)
    for path in files:
        if kind == "pipeline":
            outcome, detail = run_guarded(lambda path=path: check_pipeline_file(path, set(known)), limit_s)
        else:
            outcome, detail = run_guarded(lambda path=path: check_model_file(path), limit_s)
        print(json.dumps({"path": path, "outcome": outcome, "detail": detail}), flush=True)


def run_batch(kind: str, files: list[str], known: list[str], limit_s: float) -> collections.Counter:
    """Check ``files`` in child processes; a dead child is a crash of the file it was on."""
    import subprocess

    counts: collections.Counter = collections.Counter()
    todo = list(files)
    failures = []
    while todo:
        spec = json.dumps({"kind": kind, "files": todo, "known": known, "limit": limit_s})
        proc = subprocess.Popen([sys.executable, __file__, "--worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL, text=True, env=dict(os.environ, PYTHONPATH=ROOT))
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(spec)
        proc.stdin.close()
        done = 0
        for line in proc.stdout:
            item = json.loads(line)
            counts[item["outcome"]] += 1
            if item["outcome"] not in ("ok", "clean"):
                failures.append(item)
            done += 1
        code = proc.wait()
        todo = todo[done:]
        if todo and code != 0:
            counts["crash"] += 1
            failures.append({"path": todo[0], "outcome": f"crash (exit {code})", "detail": ""})
            todo = todo[1:]
        elif todo:
            break
    for item in failures[:10]:
        print(f"  {item['outcome']}: {item['path']}\n{item['detail']}")
    return counts


def cli_sample(files: list[str], sample: int, rng: random.Random) -> collections.Counter:
    """``main.py run`` in process on a sample of the files (one shared engine)."""
    import argparse as _argparse
    import contextlib
    import io

    from pipeline_model.cli import run_cmd
    from pipeline_model.engine.client import EngineClient

    counts: collections.Counter = collections.Counter()
    client = EngineClient(step_timeout_s=60.0, model_timeout_s=60.0)
    try:
        for path in rng.sample(files, min(sample, len(files))):
            parser = _argparse.ArgumentParser()
            run_cmd.add_parser(parser.add_subparsers(dest="cmd"))
            args = parser.parse_args(["run", path, "--timeout", "60"])
            out = io.StringIO()
            try:
                with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
                    code = run_cmd.main(args, client=client)
                counts["ok" if code == 0 else "clean"] += 1
                if code not in (0, 1, 2):
                    counts["bad exit code"] += 1
                if "Traceback" in out.getvalue():
                    counts["traceback"] += 1
                    print(f"  traceback in output: {path}\n{out.getvalue()[-1500:]}")
            except Exception:  # noqa: BLE001
                counts["traceback"] += 1
                print(f"  traceback: {path}\n{traceback.format_exc(limit=-4)}")
    finally:
        client.close()
    return counts


def engine_sample(files: list[str], sample: int, rng: random.Random) -> collections.Counter:
    """Corrupted model files run by the engine (trusted: they really load)."""
    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.consent import Consent
    from pipeline_model.engine.client import EngineClient, EngineError

    counts: collections.Counter = collections.Counter()
    # The fuzzed model files are code: consented, so the loaders (not the consent check) are what is fuzzed.
    client = EngineClient(step_timeout_s=60.0, model_timeout_s=60.0, consent=Consent.everything())
    try:
        for path in rng.sample(files, min(sample, len(files))):
            try:
                result = client.run(PipelineDocument(model=path, steps=[Step("relax.LegalizeOps")]))
            except EngineError as exc:
                counts["clean"] += 1
                print(f"  engine error (clean): {exc.message[:200]}")
                continue
            except Exception:  # noqa: BLE001
                counts["traceback"] += 1
                print(f"  traceback: {path}\n{traceback.format_exc(limit=-4)}")
                continue
            if result.ok:
                counts["ok"] += 1
            elif result.error and "did not finish loading" in result.error:
                counts["hang"] += 1
            elif result.error and "engine crashed" in result.error:
                counts["engine crash (contained)"] += 1
            else:
                counts["clean"] += 1
    finally:
        client.close()
    return counts


def _write_all(folder: str, name: str, contents: Any) -> list[str]:
    """Each of ``contents`` (bytes) written into ``folder`` as ``name.format(i)``; the paths."""
    paths = []
    for i, data in enumerate(contents):
        path = os.path.join(folder, name.format(i))
        with open(path, "wb") as fh:
            fh.write(data)
        paths.append(path)
    return paths


def main() -> int:
    if "--worker" in sys.argv:
        spec = json.loads(sys.stdin.read())
        worker(spec["kind"], spec["files"], spec["known"], spec["limit"])
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pipelines", type=int, default=10_000)
    ap.add_argument("--models", type=int, default=200)
    ap.add_argument("--cli-sample", type=int, default=100)
    ap.add_argument("--engine-sample", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit", type=float, default=10.0, help="seconds per input before it counts as a hang")
    ap.add_argument("--keep", metavar="DIR", help="keep the generated files in DIR")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    folder = args.keep or tempfile.mkdtemp(prefix="rps-fuzz-")
    os.makedirs(folder, exist_ok=True)
    t0 = time.perf_counter()
    pipe_files = _write_all(folder, "p{:05d}.json", pipeline_inputs(args.pipelines, args.seed))
    model_files = _write_all(folder, "m{:04d}.py", model_inputs(args.models, args.seed))
    fifo = os.path.join(folder, "fifo.json")
    os.mkfifo(fifo)
    pipe_files.append(fifo)
    pipe_files += ["/dev/zero", "/proc/self/mem", folder]
    known = ["relax.FuseOps", "relax.LegalizeOps", "relax.FuseTIR", "relax.AnnotateTIROpPattern", "custom.python",
             "relax.FuseOpsByPattern", "relax.MetaScheduleTuneTIR", "relax.MetaScheduleApplyDatabase",
             "relax.DeadCodeElimination", "dlight.ApplyDefaultSchedule", "pipeline.zero"]
    print(f"pipeline files: {len(pipe_files)} (incl. a FIFO, /dev/zero, /proc/self/mem, a folder)", flush=True)
    p_counts = run_batch("pipeline", pipe_files, known, args.limit)
    print(f"  loader + GUI open path: {dict(p_counts)}", flush=True)
    print(f"model files: {len(model_files)}", flush=True)
    m_counts = run_batch("model", model_files, known, args.limit)
    print(f"  model resolution: {dict(m_counts)}", flush=True)
    c_counts = cli_sample(pipe_files[:-4], args.cli_sample, rng)
    print(f"  main.py run on {sum(c_counts[k] for k in ('ok', 'clean'))} pipeline files: {dict(c_counts)}", flush=True)
    e_counts = engine_sample(model_files, args.engine_sample, rng)
    print(f"  engine runs of {sum(e_counts.values())} model files: {dict(e_counts)}", flush=True)
    total = p_counts + m_counts + c_counts + e_counts
    tried = len(pipe_files) + len(model_files) + sum(c_counts[k] for k in ("ok", "clean")) + sum(e_counts.values())
    print(f"inputs tried: {tried}   clean errors: {total['clean']}   ok: {total['ok']}   tracebacks: {total['traceback']}   "
          f"hangs: {total['hang']}   crashes: {total['crash']}   contained engine crashes: {total['engine crash (contained)']}")
    print(f"time: {time.perf_counter() - t0:.0f} s   load average: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
