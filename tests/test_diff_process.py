"""Diffs in a separate process (``pipeline_model.diff_process``) and their compact form.

The process path must give exactly the diff of ``diff_snapshots``: same blocks, statuses, opcodes, rows and
hunks, on real module texts (the built-in decoder before/after LegalizeOps, FuseOps, FuseTIR). A worker that
was killed is started again; one that crashes, hangs or answers nonsense fails the request (the caller diffs
in its own thread) and is not used after ``MAX_FAILURES`` failures in a row.
"""

from __future__ import annotations

import os
import pickle
import random
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from pipeline_model import diff as D
from pipeline_model import diff_process as P

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def decoder_texts() -> list[str]:
    """A 12-layer built-in decoder and the module after each of LegalizeOps, AnnotateTIROpPattern, FuseOps,
    FuseTIR (its ``forward`` is large enough for the patience diff's path)."""
    pytest.importorskip("tvm")
    from tvm import relax

    from pipeline_model.models import builtin_model_source

    source = builtin_model_source("decoder", layers=12)
    namespace: dict = {"__name__": "decoder12"}
    exec(compile(source, "decoder12.py", "exec"), namespace)  # noqa: S102 - the repository's own model file
    mod, _ = namespace["model"].export_tvm(spec=namespace["spec"])
    texts = [mod.script()]
    for p in (relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()):
        mod = p(mod)
        texts.append(mod.script())
    return texts


def _pairs(texts: list[str]) -> list[tuple]:
    return list(zip(texts, texts[1:])) + [(texts[0], texts[0]), (None, texts[1]), (texts[2], None), (texts[0], texts[-1])]


def _same(got: D.ModuleDiff, want: D.ModuleDiff) -> None:
    assert got == want  # blocks (names, kinds, lines, starts), statuses, opcodes, counts
    assert got.rows() == want.rows()
    assert got.rows(hide_unchanged=True) == want.rows(hide_unchanged=True)
    assert got.unified() == want.unified()
    assert got.stats() == want.stats()
    for f in want.functions:
        assert got.function(f.name).hunks == f.hunks


def test_compact_form_gives_the_same_diff_on_real_modules(decoder_texts) -> None:
    forward = D.diff_snapshots(decoder_texts[0], decoder_texts[1]).function("forward")
    assert forward.before and forward.after  # large enough for the patience diff, not difflib alone:
    assert len(forward.before.lines) * len(forward.after.lines) > D.DIFFLIB_MAX_PAIRS
    for before, after in _pairs(decoder_texts):
        structure = D.diff_structure(before, after)
        wire = pickle.loads(pickle.dumps(structure, protocol=pickle.HIGHEST_PROTOCOL))
        _same(D.assemble_diff(before, after, wire), D.diff_snapshots(before, after))
        # compact: no object per row (a few tuples per opcode)
        assert len(pickle.dumps(structure)) < len((before or "") + (after or "")) / 10


def test_row_table_matches_the_rows_piece_by_piece(decoder_texts) -> None:
    d = D.diff_snapshots(decoder_texts[0], decoder_texts[1])
    for table, rows in ((d.row_table(), d.rows()), (d.row_table(hide_unchanged=True), d.rows(hide_unchanged=True)),
                        (d.row_table("forward"), d.function("forward").rows)):
        assert len(table) == len(rows) and list(table) == rows
        pieces = [table.rows(lo, lo + 97) for lo in range(0, len(table), 97)]
        assert [r for piece in pieces for r in piece] == rows
        assert table[5:20] == rows[5:20] and table[-1] == rows[-1]
        first = next((i for i, r in enumerate(rows) if r.tag not in (D.EQUAL, D.GAP)), None)
        assert table.first_change() == first
        for side in ("left", "right"):
            numbers = [getattr(r, f"{side}_no") for r in rows if getattr(r, f"{side}_no") is not None]
            assert table.last_number(side) == (numbers[-1] if numbers else None)


def test_split_at_offsets_is_splitlines_for_any_line_break(monkeypatch) -> None:
    monkeypatch.setattr(D, "SPLIT_PIECE_LINES", 3)
    rng = random.Random(3)
    for _ in range(500):
        text = "".join(rng.choice(["a", "bb", "", "é x"]) + rng.choice(["\n", "\r\n", "\r", "\x0c", "\u2028", "\x85"])
                       for _ in range(rng.randint(0, 15))) + rng.choice(["", "tail"])
        lines, offsets = D._piece_offsets(text)  # noqa: SLF001
        assert D.split_at(text, offsets) == lines == text.splitlines()


def test_process_gives_the_same_diff_as_the_thread(decoder_texts) -> None:
    proc = P.DiffProcess()
    try:
        for before, after in _pairs(decoder_texts):
            _same(proc.diff(before, after), D.diff_snapshots(before, after))
        assert proc.starts == 1 and proc.requests_done == len(_pairs(decoder_texts)) and proc.is_running()
        # texts that are not ASCII (and a lone surrogate) cross the pipe unchanged
        odd = "@I.ir_module\nclass Module:\n    @R.function\n    def f(x):\n        # é \ud800 ✓\n        return x\n"
        _same(proc.diff(odd, odd.replace("✓", "✗")), D.diff_snapshots(odd, odd.replace("✓", "✗")))
    finally:
        proc.close()
    assert not proc.is_running()
    with pytest.raises(P.DiffProcessError):
        proc.diff("a", "b")


def test_a_killed_worker_is_started_again(decoder_texts) -> None:
    before, after = decoder_texts[0], decoder_texts[1]
    proc = P.DiffProcess()
    try:
        proc.diff(before, after)
        first = proc.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)
        _wait_gone(first)
        _same(proc.diff(before, after), D.diff_snapshots(before, after))
        assert proc.pid not in (None, first) and proc.starts == 2 and proc.failures == 0
    finally:
        proc.close()


def _fake(code: str) -> list[str]:
    return [sys.executable, "-c", textwrap.dedent(code)]


CRASH_AFTER_HEADER = _fake("""
    import os, sys
    os.read(0, 16)
    sys.exit(3)
""")
HANG = _fake("""
    import time
    time.sleep(60)
""")
GARBAGE = _fake("""
    import struct, sys, time
    nb, na = struct.unpack("<qq", sys.stdin.buffer.read(16))
    sys.stdin.buffer.read(max(nb, 0) + max(na, 0))
    sys.stdout.buffer.write(struct.pack("<Q", 5) + b"nope!")
    sys.stdout.buffer.flush()
    time.sleep(60)
""")


@pytest.mark.parametrize("command", [CRASH_AFTER_HEADER, GARBAGE], ids=["crash", "garbage"])
def test_a_failing_worker_fails_the_request_and_is_given_up_after_repeated_failures(command) -> None:
    proc = P.DiffProcess(command=command, timeout_s=20)
    big = "x\n" * 200_000  # more than a pipe's buffer: the crash comes while the texts are written
    try:
        for k in range(P.MAX_FAILURES):
            assert proc.usable
            with pytest.raises(P.DiffProcessError):
                proc.diff(big, big + "y\n")
            assert proc.failures == k + 1 and not proc.is_running()
        assert not proc.usable and proc.starts == P.MAX_FAILURES
        with pytest.raises(P.DiffProcessError, match="failed 3 times"):
            proc.diff("a", "b")
        assert proc.starts == P.MAX_FAILURES  # not started again
    finally:
        proc.close()


def test_a_hung_worker_times_out_and_is_killed() -> None:
    proc = P.DiffProcess(command=HANG, timeout_s=0.5)
    try:
        with pytest.raises(P.DiffProcessError, match="Timeout"):
            proc.diff("a\n" * 10, "b\n" * 10)
        assert not proc.is_running() and proc.failures == 1
    finally:
        proc.close()


def test_worker_leaves_when_too_big_and_the_next_request_starts_a_fresh_one(decoder_texts) -> None:
    before, after = decoder_texts[0], decoder_texts[1]
    proc = P.DiffProcess(max_rss_mb=1)  # every request leaves it "too big"
    try:
        for k in range(3):
            _same(proc.diff(before, after), D.diff_snapshots(before, after))
            assert proc.starts == k + 1 and not proc.is_running() and proc.failures == 0
    finally:
        proc.close()


def test_worker_ends_with_its_parent(tmp_path) -> None:
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent(f"""
        import os, sys
        sys.path.insert(0, {ROOT!r})
        from pipeline_model.diff_process import DiffProcess
        p = DiffProcess()
        p.diff("a\\nb\\n", "a\\nc\\n")
        print(p.pid, flush=True)
        os._exit(0)  # no atexit, no close(): the worker must go by itself
    """))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60, check=True)
    child = int(out.stdout.split()[0])
    _wait_gone(child)


def _wait_gone(pid: int, limit_s: float = 10.0) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
                if fh.read().split(") ")[-1].startswith("Z"):
                    return  # a zombie: gone, waiting for its parent to collect it
        except FileNotFoundError:
            return
        time.sleep(0.02)
    raise AssertionError(f"process {pid} still running")


def test_shared_instance_is_replaced_once_closed() -> None:
    first = P.shared()
    assert P.shared() is first
    first.close()
    second = P.shared()
    assert second is not first and second.usable and not second.is_running()
