"""Helpers of the output-path tests: a snapshot of a folder (to prove the user's files byte-identical after a
refused write), the in-process CLI and its one-line refusal."""

from __future__ import annotations

import os
import stat

import main

#: A user's file the tests put where an output would go.
DECOY = b"the user's own notes\n"


def snapshot(folder) -> dict:
    """Every entry under ``folder``: its file type and content (a link's target, a regular file's bytes)."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            full = os.path.join(root, name)
            st = os.lstat(full)
            content = os.readlink(full) if os.path.islink(full) else (
                open(full, "rb").read() if stat.S_ISREG(st.st_mode) else None)
            out[os.path.relpath(full, folder)] = (stat.S_IFMT(st.st_mode), content)
    return out


def cli(capsys, *argv) -> tuple[int, str]:
    """``main.py ARGV`` in this process: the exit code and what it wrote to stderr."""
    code = main.cli_main([str(a) for a in argv])
    return code, capsys.readouterr().err


def one_line(code: int, err: str, *words: str) -> None:
    """A refusal: exit 2, one line, no traceback, naming each of ``words``."""
    assert code == 2, (code, err)
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, (word, err)
