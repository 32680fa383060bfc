"""Writing the files an exported script or a ``deploy.py`` is asked to write (``--save-script``, ``--save-json``,
``outputs.npz``) without harm: the rules of the app's own :mod:`pipeline_model.safe_write`, in the few lines a
script can carry (this module's code is copied into exported scripts and ``deploy.py``).

A target that exists must be a regular file (a symlink, folder, FIFO or device is refused); nothing is written
under ``/proc``, ``/sys`` or ``/dev``; the data goes to a temporary file this call creates itself
(``O_CREAT | O_EXCL | O_NOFOLLOW``) and is renamed over the target, so nothing is ever written through a link
and a failed write leaves the target as it was.
"""

from __future__ import annotations

import os
import secrets
import stat

#: System folders nothing is written under.
SPECIAL_ROOTS = ("/proc", "/sys", "/dev")


def output_problem(path: str) -> str:
    """Why ``path`` may not be written (one line naming it), or ``""`` when it may."""
    full = os.path.abspath(path)
    real = os.path.realpath(full)
    if any(real == root or real.startswith(root + os.sep) for root in SPECIAL_ROOTS):
        return f"{path}: nothing is written under /proc, /sys or /dev"
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        st = None
    if st is not None and not stat.S_ISREG(st.st_mode):
        return f"{path}: exists and is not a regular file (a link, a folder or a device); name another file"
    if not os.path.isdir(os.path.dirname(full)):
        return f"{path}: its folder does not exist"
    return ""


def write_output(path: str, data: bytes) -> str:
    """Write ``data`` to ``path`` under this module's rules; raises ``ValueError`` with a one-line message when
    the path is refused or the write fails. Returns the absolute path written."""
    problem = output_problem(path)
    if problem:
        raise ValueError(f"not written: {problem}")
    full = os.path.abspath(path)
    folder, base = os.path.split(full)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    tmp = os.path.join(folder, f".{base}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, flags, 0o644)
    except OSError as exc:
        raise ValueError(f"not written: {path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        problem = output_problem(path)  # replaced by a link since the first look?
        if problem:
            raise ValueError(f"not written: {problem}")
        os.replace(tmp, full)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(exc, OSError):
            raise ValueError(f"not written: {path}: {exc.strerror or exc}") from None
        raise
    return full
