#!/usr/bin/env python3
"""Fuzz the headless commands (issue 20): prints figures, asserts nothing; not part of the test suite.

Builds hostile command lines for ``run``, ``export``, ``compare``, ``env`` and ``passes`` — hostile pipeline
files (mutated and generated documents from :mod:`bench.fuzz_files`, FIFOs, devices, folders, symlink loops,
``/proc`` files, binary and oversized files, odd names), hostile output paths (``-o``, ``--emit-ir``,
``--export-lib``: folders, missing folders, devices, FIFOs, symlinks to the user's files, ``/proc/self/mem``,
over-long and odd names), model specs, targets, numbers and input files — and runs each through
``main.cli_main`` in this process (one shared engine for the few that reach it), from a folder full of traps
(a ``numpy.py``, ``tvm.py`` and ``json.py`` that leave a marker when imported).

Each input ends as: ok (exit 0), clean error (exit 1/2, or an argparse usage error), traceback (an exception
escaped, or "Traceback" printed), hang (the per-input alarm fired). Afterwards the file system is checked:
the decoy files the symlinks point to are unchanged, ``/dev/null`` is still a device, no ``*.tmp`` /
``*.rps-tmp`` file is left, no trap marker exists. Goal: 0 tracebacks, 0 hangs, nothing damaged.

Usage: ``.venv/bin/python -m bench.fuzz_cli [--inputs 10000] [--seed 0] [--limit-s 60] [--keep DIR]``
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import io
import json
import os
import random
import shutil
import signal
import stat
import sys
import tempfile
import time
from typing import Any

from bench import fuzz_files

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUICK_PIPELINE = os.path.join(ROOT, "resources", "pipelines", "fusion_walkthrough.json")
TRAPS = ("numpy", "tvm", "json", "tvm_ffi", "pipeline_model")


class Hang(Exception):
    """No new output for the per-input limit."""


class Long(Exception):
    """Still printing progress after three limits (a valid tuning pipeline): stopped to keep fuzzing bounded."""


class Sandbox:
    """A folder of hostile files and output targets, and the decoys whose content must survive."""

    def __init__(self, folder: str, rng: random.Random, pipeline_files: int) -> None:
        self.folder = folder
        self.rng = rng
        self.decoy = os.path.join(folder, "precious.txt")
        with open(self.decoy, "w", encoding="utf-8") as fh:
            fh.write("the user's file\n")
        self.markers = os.path.join(folder, "markers")
        os.makedirs(self.markers)
        for name in TRAPS:
            with open(os.path.join(folder, f"{name}.py"), "w", encoding="utf-8") as fh:
                fh.write(f"open({os.path.join(self.markers, name)!r}, 'w').write('imported')\n")
        self.special = self._special_files()
        self.pipelines = self._pipeline_files(pipeline_files)
        self.outputs = self._output_targets()
        #: Folder arguments (--emit-ir, --export-lib) and ``export -o`` also get an existing file of the user's (never
        #: written to: ``-o`` replaces an existing file only with ``--force``, which the fuzzer never passes).
        self.folder_outputs = self.outputs + [self.path("existing_ir.txt")]
        self.models = self._models()

    def path(self, *parts: str) -> str:
        return os.path.join(self.folder, *parts)

    def _special_files(self) -> list[str]:
        os.mkfifo(self.path("fifo.json"))
        os.mkdir(self.path("folder.json"))
        os.symlink(self.path("loop_a.json"), self.path("loop_b.json"))
        os.symlink(self.path("loop_b.json"), self.path("loop_a.json"))
        os.symlink(self.decoy, self.path("to_precious.json"))
        with open(self.path("big.json"), "wb") as fh:
            fh.truncate(64 * 1024 * 1024 + 1)
        with open(self.path("binary.json"), "wb") as fh:
            fh.write(bytes(range(256)) * 64)
        odd = self.path("new\nline -x é.json")
        shutil.copy(QUICK_PIPELINE, odd)
        dash = self.path("-h.json")
        shutil.copy(QUICK_PIPELINE, dash)
        return [self.path("fifo.json"), self.path("folder.json"), self.path("loop_a.json"), self.path("to_precious.json"),
                self.path("big.json"), self.path("binary.json"), odd, dash, "/dev/zero", "/dev/null", "/proc/self/mem",
                "/proc/self/environ", self.path("missing.json"), "", "-", "--", QUICK_PIPELINE]

    def _pipeline_files(self, n: int) -> list[str]:
        folder = self.path("pipelines")
        os.makedirs(folder)
        out = []
        for i, data in enumerate(fuzz_files.pipeline_inputs(n, self.rng.randrange(2**31))):
            path = os.path.join(folder, f"p{i:05d}.json")
            with open(path, "wb") as fh:
                fh.write(data)
            out.append(path)
        return out

    def _output_targets(self) -> list[str]:
        os.mkdir(self.path("outdir"))
        os.mkfifo(self.path("out_fifo.py"))
        os.symlink(self.decoy, self.path("out_link.py"))
        os.symlink(self.decoy, self.path("out.py.tmp"))
        os.mkfifo(self.path("fifo_dir_name"))
        with open(self.path("existing_ir.txt"), "w", encoding="utf-8") as fh:
            fh.write("the user's notes\n")
        os.symlink(self.path("outdir"), self.path("link_to_dir"))
        return [self.path("outdir"), self.path("outdir") + os.sep, self.path("missing", "deep", "x.py"),
                "/dev/null", "/dev/full", "/proc/self/mem", "/sys/kernel/x.py", self.path("out_fifo.py"),
                self.path("out_link.py"), self.path("precious.txt", "x.py"), self.path("x" * 300 + ".py"),
                self.path("new\nline.py"), self.path("fifo_dir_name"),
                self.path("link_to_dir"), self.path("ok_out.py"), self.path("ok_dir"), "/", ".", ""]

    def _models(self) -> list[str]:
        garbage_onnx = self.path("garbage.onnx")
        with open(garbage_onnx, "wb") as fh:
            fh.write(os.urandom(512))
        garbage_pt2 = self.path("garbage.pt2")
        with open(garbage_pt2, "wb") as fh:
            fh.write(b"PK\x03\x04" + os.urandom(300))
        code = self.path("model.py")
        with open(code, "w", encoding="utf-8") as fh:
            fh.write(f"open({os.path.join(self.markers, 'model_code')!r}, 'w').write('ran')\n")
        return ["builtin:mlp", "builtin:nope", "builtin:", garbage_onnx, garbage_pt2, code, self.path("fifo.json"),
                self.path("folder.json"), "/dev/zero", self.path("missing.onnx"), "x" * 5000]

    def damage(self) -> list[str]:
        """What the fuzzing changed that it must not have."""
        problems = []
        with open(self.decoy, encoding="utf-8") as fh:
            if fh.read() != "the user's file\n":
                problems.append("precious.txt changed")
        if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
            problems.append("/dev/null is no longer a device")
        with open(self.path("existing_ir.txt"), encoding="utf-8") as fh:
            if fh.read() != "the user's notes\n":
                problems.append("existing_ir.txt changed")
        for name in ("out_fifo.py", "fifo_dir_name", "fifo.json"):
            if not stat.S_ISFIFO(os.lstat(self.path(name)).st_mode):
                problems.append(f"{name} is no longer a FIFO")
        if os.readlink(self.path("out.py.tmp")) != self.decoy:
            problems.append("the planted out.py.tmp link changed")
        for root, _dirs, files in os.walk(self.folder):
            for name in files:
                if name.endswith((".rps-tmp", ".tmp")) and name != "out.py.tmp":
                    problems.append(f"temporary file left: {os.path.join(root, name)!r}")
        problems.extend(f"trap imported: {name}" for name in os.listdir(self.markers))
        return problems


def command_lines(box: Sandbox, n: int, rng: random.Random) -> list[list[str]]:
    """``n`` hostile command lines."""
    targets = ["cpu", "cuda", "llvm", "{}", "{not json", '{"kind": "nope"}', '{"kind": "llvm", "num-cores": 1e999}',
               '{"kind": "llvm", "mcpu": "\\u0000"}', "[1]", "x" * 3000]
    numbers = ["0", "-1", "1", "3", "999999999999999999999", "nan", "inf", "-inf", "x", "", "1e999"]
    out: list[list[str]] = []
    while len(out) < n:
        cmd = rng.choice(["run", "run", "run", "export", "export", "export", "compare", "compare", "env", "passes"])
        pipeline = rng.choice(box.pipelines) if rng.random() < 0.6 else rng.choice(box.special)
        argv = [cmd]
        if cmd == "env":
            argv += rng.choice([[], ["--json"], ["--bogus"], ["--json", "extra"]])
        elif cmd == "passes":
            argv += rng.choice([[], ["--json"], ["x"], ["--bogus"]])
        elif cmd == "export":
            argv += [pipeline, "--no-engine"] if rng.random() < 0.85 else [pipeline]
            if rng.random() < 0.8:
                argv += ["-o", rng.choice(box.folder_outputs)]
            if rng.random() < 0.2:
                argv += ["--model", rng.choice(box.models)]
            if rng.random() < 0.2:
                argv += ["--target", rng.choice(targets)]
        elif cmd == "run":
            argv.append(pipeline)
            if rng.random() < 0.5:
                argv += ["--emit-ir", rng.choice(box.folder_outputs)]
            if rng.random() < 0.2:
                argv += ["--model", rng.choice(box.models)]
            if rng.random() < 0.2:
                argv += ["--target", rng.choice(targets)]
            if rng.random() < 0.2:
                argv += ["--until", rng.choice(numbers)]
            if rng.random() < 0.15:
                argv += ["--timeout", rng.choice(numbers)]
            if rng.random() < 0.1:
                argv += ["--export-lib", rng.choice(box.folder_outputs)]
            if rng.random() < 0.1:
                argv += ["--build", "--inputs", rng.choice(box.special + box.models)]
            if rng.random() < 0.2:
                argv.append("--json")
        else:  # compare
            argv += [pipeline, rng.choice(box.pipelines + box.special)]
            if rng.random() < 0.2:
                argv += ["--model", rng.choice(box.models)]
            if rng.random() < 0.2:
                argv += ["--inputs", rng.choice(box.special + box.models)]
            if rng.random() < 0.2:
                argv += ["--target", rng.choice(targets)]
            if rng.random() < 0.2:
                argv.append("--json")
        out.append(argv)
    return out


def run_one(argv: list[str], limit_s: float) -> tuple[str, str]:
    """``(outcome, detail)`` of one command line run through ``main.cli_main``. A hang is ``limit_s`` seconds
    without any new output: a valid pipeline that tunes for minutes prints progress and is not a hang (it is
    stopped after ``limit_s`` x 3 in all, as "long", to keep the fuzzing bounded)."""
    import main

    out, err = io.StringIO(), io.StringIO()
    seen: dict[str, Any] = {"size": None, "ticks": 0}

    def watchdog(_signum: int, _frame: Any) -> None:
        # Progress is new output, or the engine working (its process tree's CPU time growing): a tuning pipeline
        # run with --json prints nothing until it ends, and is not a hang.
        size = (len(out.getvalue()) + len(err.getvalue()), _engine_cpu_s())
        seen["ticks"] += 1
        if size == seen["size"]:
            raise Hang()
        if seen["ticks"] >= 3:
            raise Long()
        seen["size"] = size

    signal.signal(signal.SIGALRM, watchdog)
    signal.setitimer(signal.ITIMER_REAL, limit_s, limit_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main.cli_main(argv)
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 2
    except Hang:
        return "hang", ""
    except Long:
        return "long", ""
    except BaseException as exc:  # noqa: BLE001 - anything escaping is a traceback
        import traceback

        return "traceback", "".join(traceback.format_exception(exc))[-3000:]
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    text = out.getvalue() + err.getvalue()
    if "Traceback (most recent call last)" in text:
        return "traceback", text[-3000:]
    return ("ok" if code == 0 else "clean error"), ""


def _engine_cpu_s() -> float:
    """CPU seconds used so far by the shared engine's process tree (rounded to 0.5 s: idle polling is no work)."""
    import psutil

    if not _SHARED or not _SHARED[0].pid:
        return 0.0
    try:
        root = psutil.Process(_SHARED[0].pid)
        total = 0.0
        for proc in [root, *root.children(recursive=True)]:
            times = proc.cpu_times()
            total += times.user + times.system
        return round(total * 2) / 2
    except psutil.Error:
        return 0.0


def shared_engine() -> Any:
    """One engine for every command line that reaches one (``close`` does nothing until the end)."""
    from pipeline_model.engine import client as client_module

    real = client_module.EngineClient
    shared = real(step_timeout_s=60.0)
    closer = shared.close

    def factory(*_args: Any, **_kwargs: Any) -> Any:
        return shared

    shared.close = lambda *a, **k: None  # type: ignore[method-assign]
    client_module.EngineClient = factory  # type: ignore[misc, assignment]
    _SHARED.append(shared)
    return closer


#: The shared engine client (restarted after a command line that was stopped while it worked).
_SHARED: list = []


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", type=int, default=10_000)
    ap.add_argument("--pipelines", type=int, default=2_000, help="generated pipeline files to draw from")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--limit-s", type=float, default=60.0, help="per-input alarm")
    ap.add_argument("--keep", metavar="DIR", help="write the command lines that failed here (JSON)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    folder = tempfile.mkdtemp(prefix="rps-fuzz-cli-")
    sys.path.insert(0, ROOT)
    os.chdir(folder)  # the traps are in the current folder
    box = Sandbox(folder, rng, args.pipelines)
    lines = command_lines(box, args.inputs, rng)
    closer = shared_engine()
    counts: collections.Counter = collections.Counter()
    per_command: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    failures = []
    started = time.monotonic()
    try:
        for i, argv in enumerate(lines):
            outcome, detail = run_one(argv, args.limit_s)
            if outcome in ("hang", "long") and _SHARED:
                _SHARED[0].restart()  # the stopped command's request may still be running there
            counts[outcome] += 1
            per_command[argv[0]][outcome] += 1
            if outcome in ("traceback", "hang"):
                failures.append({"argv": argv, "outcome": outcome, "detail": detail})
                print(f"  {outcome}: {argv!r}\n{detail[-800:]}", flush=True)
            if (i + 1) % 1000 == 0:
                print(f"  {i + 1} inputs, {dict(counts)}, {time.monotonic() - started:.0f} s, "
                      f"load {os.getloadavg()[0]:.2f}", flush=True)
    finally:
        closer()
    damage = box.damage()
    print(f"\n{len(lines)} command lines in {time.monotonic() - started:.0f} s (seed {args.seed}, load "
          f"{' / '.join(f'{x:.2f}' for x in os.getloadavg())})")
    print("| command | inputs | ok | clean errors | long (progress, stopped) | tracebacks | hangs |\n"
          "| --- | --- | --- | --- | --- | --- | --- |")
    for name, c in sorted(per_command.items()):
        print(f"| {name} | {sum(c.values())} | {c['ok']} | {c['clean error']} | {c['long']} | {c['traceback']} | "
              f"{c['hang']} |")
    print(f"| **total** | **{len(lines)}** | {counts['ok']} | {counts['clean error']} | {counts['long']} | "
          f"**{counts['traceback']}** | **{counts['hang']}** |")
    print("file system: " + ("unchanged (decoys, devices, FIFOs, links intact; no temporary file; no trap imported)"
                             if not damage else "DAMAGED: " + "; ".join(damage)))
    if args.keep and failures:
        os.makedirs(args.keep, exist_ok=True)
        with open(os.path.join(args.keep, "fuzz_cli_failures.json"), "w", encoding="utf-8") as fh:
            json.dump(failures, fh, indent=1)
    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
