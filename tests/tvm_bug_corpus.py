"""The real-bug corpus (``tests/data/tvm_bugs/<case>/``): apache/tvm Relax bugs that still fail on TVM 0.27,
each a small model (``model.py``), a pipeline (``pipeline.json``) and what is known about it (``case.json``:
issue, failure kind, the step to blame or ``null`` when no single step is, the node where values diverge).

Shared by ``tests/test_tvm_bug_corpus.py`` (what the app should say) and ``bench/bench_bug_corpus.py`` (what it
says now, as the table in docs/DEBUGGING.md). Each helper runs one of the app's real commands in process
(``bisect``, ``diverge``, ``run --reproducer``, ``reduce``) and returns its ``--json`` answer.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from typing import Any, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "tests", "data", "tvm_bugs")

#: Failure kinds: a pass raises while the pipeline runs; the build (tvm.compile) fails; the built module
#: crashes the VM; it runs and gives wrong numbers.
KINDS = ("pass_crash", "build_crash", "vm_crash", "wrong_result")


@dataclass(frozen=True)
class Case:
    """One corpus case: its folder name and its ``case.json``."""

    name: str
    info: dict

    @property
    def folder(self) -> str:
        return os.path.join(CORPUS, self.name)

    @property
    def pipeline(self) -> str:
        return os.path.join(self.folder, "pipeline.json")

    @property
    def kind(self) -> str:
        return str(self.info["kind"])

    @property
    def culprit(self) -> Optional[int]:
        """The 1-based step to blame, ``None`` when no single step is (TVM's own default pipeline)."""
        return self.info.get("culprit_step")

    @property
    def fails_at(self) -> Optional[int]:
        """For a pass crash: the step that raises (the culprit unless an earlier step left bad IR)."""
        return self.info.get("fails_at_step", self.culprit)


def cases(kind: Optional[str] = None) -> list[Case]:
    """The corpus cases (of one kind), sorted by name."""
    found = []
    for name in sorted(os.listdir(CORPUS)):
        path = os.path.join(CORPUS, name, "case.json")
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                case = Case(name, json.load(fh))
            if kind is None or case.kind == kind:
                found.append(case)
    return found


def call_cli(module: Any, name: str, argv: list[str], client: Any) -> tuple[int, dict]:
    """Run a CLI command's ``main`` in process with ``--json``; its exit code and JSON answer."""
    parser = argparse.ArgumentParser()
    module.add_parser(parser.add_subparsers(dest="command"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = module.main(parser.parse_args([name, *argv, "--json"]), client=client)
    text = out.getvalue().strip()
    return code, (json.loads(text) if text else {})


def bisect(case: Case, client: Any, reproducer: Optional[str] = None) -> tuple[int, dict]:
    """``main.py bisect PIPELINE --trust [--reproducer DIR]``."""
    from pipeline_model.cli import bisect_cmd

    extra = ["--reproducer", reproducer] if reproducer else []
    return call_cli(bisect_cmd, "bisect", [case.pipeline, "--trust", *extra], client)


def diverge(case: Case, client: Any, step: int) -> tuple[int, dict]:
    """``main.py diverge PIPELINE --step K --trust``."""
    from pipeline_model.cli import diverge_cmd

    return call_cli(diverge_cmd, "diverge", [case.pipeline, "--step", str(step), "--trust"], client)


def run_with_reproducer(case: Case, client: Any, folder: str) -> tuple[int, dict]:
    """``main.py run PIPELINE --trust --reproducer DIR`` (a step that fails while the pipeline runs)."""
    from pipeline_model.cli import run_cmd

    return call_cli(run_cmd, "run", [case.pipeline, "--trust", "--reproducer", folder], client)


def reduce(folder: str, out_dir: str, client: Any, max_checks: int = 200) -> tuple[int, dict]:
    """``main.py reduce REPRO_DIR -o OUT_DIR --trust --max-checks N``."""
    from pipeline_model.cli import reduce_cmd

    return call_cli(reduce_cmd, "reduce", [folder, "-o", out_dir, "--trust", "--max-checks", str(max_checks)],
                    client)


def run_repro(folder: str, cwd: str, timeout_s: float = 600) -> tuple[int, str]:
    """``python repro.py`` in a fresh interpreter started from ``cwd``; its exit code and output (1 means
    REPRODUCED). The timeout only stops a runaway test, it decides nothing."""
    proc = subprocess.run([sys.executable, os.path.join(folder, "repro.py")], cwd=cwd, capture_output=True,
                          text=True, timeout=timeout_s)
    return proc.returncode, proc.stdout + proc.stderr


def reproducer_folder(case: Case, client: Any, folder: str) -> tuple[int, dict]:
    """The reproducer the app saves for a case: ``run --reproducer`` for a step that raises while the pipeline
    runs, else ``bisect --reproducer`` (the culprit's numerics, build or crash failure)."""
    if case.kind == "pass_crash":
        return run_with_reproducer(case, client, folder)
    return bisect(case, client, reproducer=folder)


def first_line(text: Any, limit: int = 90) -> str:
    """The first line of ``text``, cut to ``limit`` characters (for the table)."""
    line = str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""
    return line if len(line) <= limit else line[: limit - 1] + "…"


def bisect_says(answer: dict) -> str:
    """One line for the table: the culprit bisect names (and how), or its message."""
    step = answer.get("culprit_step")
    if step:
        how = f" ({answer['method']})" if answer.get("method") else ""
        return f"step {step} ({answer.get('culprit_pass_id')}){how}"
    if answer.get("ok"):
        return "pipeline correct"
    return "no step: " + first_line(answer.get("message") or answer.get("error"), 70)


def diverge_says(answer: dict) -> str:
    """One line for the table: the first diverging node, or why there is none."""
    first = answer.get("first_divergent")
    if first:
        inside = answer.get("first_inside")
        return f"`{first}`" + (f" (inside: `{inside}`)" if inside else "")
    if answer.get("error"):
        return "error: " + first_line(answer["error"], 60)
    statuses = sorted({str(n.get("status")) for n in answer.get("nodes", [])})
    return "nothing diverges (" + ", ".join(statuses) + ")" if statuses else "nothing diverges"


def reduced_bindings(answer: dict) -> str:
    """``before -> after`` bindings of a reduce answer, with the accepted shrinkings counted."""
    if not answer.get("ok"):
        return "failed: " + first_line(answer.get("error") or answer.get("message"), 60)
    shrunk = sum(1 for a in answer.get("accepted", []) if "dimension" in str(a))
    extra = f", {shrunk} dims shrunk" if shrunk else ""
    return f"{answer.get('bindings_before')} -> {answer.get('bindings_after')} bindings{extra}"
