"""Writing files without harm: the core of the app's :mod:`pipeline_model.safe_write` and what an exported script
or a ``deploy.py`` uses for the files it is asked to write (``--save-script``, ``--save-json``, ``outputs.npz``);
this module's code is copied into those scripts, so they write with the very code the app writes with.

A target that exists must be a regular file (a symlink, folder, FIFO or device is refused); nothing is written
under ``/proc``, ``/sys`` or ``/dev``; the data goes to a temporary file this call creates itself
(``O_CREAT | O_EXCL | O_NOFOLLOW``, in the target's folder), is fsynced and renamed over the target after one
more look at it, so nothing is ever written through a link and a failed write (also Ctrl+C) leaves the target as
it was and removes the temporary file, and only it.
"""

from __future__ import annotations

import errno
import os
import secrets
import stat
from typing import Callable, Optional

#: System folders nothing is written under.
SPECIAL_ROOTS = ("/proc", "/sys", "/dev")


def special_root(path: str) -> Optional[str]:
    """The system folder (``/proc``, ``/sys``, ``/dev``) ``path`` resolves into, or ``None``."""
    real = os.path.realpath(path)
    for root in SPECIAL_ROOTS:
        if real == root or real.startswith(root + os.sep):
            return root
    return None


def open_temp(folder: str, base: str, suffix: str = ".tmp", prefix: Optional[str] = None) -> tuple[int, str]:
    """A new temporary file ``<prefix><8 random hex digits><suffix>`` in ``folder`` (``prefix`` default
    ``.<base>.``), created by this call and never through a link (``O_CREAT | O_EXCL | O_NOFOLLOW``, mode 0600):
    ``(fd, path)``. ``OSError`` when none can be made."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    head = f".{base}." if prefix is None else prefix
    for _ in range(100):
        tmp = os.path.join(folder, f"{head}{secrets.token_hex(4)}{suffix}")
        try:
            return os.open(tmp, flags, 0o600), tmp
        except FileExistsError:
            continue
    raise OSError(errno.EEXIST, "no free temporary name", folder)


def replace_file(full: str, data: bytes, before_rename: Optional[Callable[[], object]] = None, *,
                 suffix: str = ".tmp", prefix: Optional[str] = None, mode: Optional[int] = None) -> None:
    """Write ``data`` to the absolute path ``full`` (already checked by the caller) through a temporary file in
    its folder (:func:`open_temp`), flushed and fsynced, then call ``before_rename()`` (a last look at the target,
    which raises when it was swapped for a link or a device since the check; a backup of the old file) and rename
    the temporary file over ``full``. A new file gets ``mode`` (default ``0o666``) less the umask, an existing one
    keeps its bits. On any failure (also Ctrl+C) the temporary file, and only it, is removed and the error raised
    (``OSError`` from the file system, whatever ``before_rename`` raises)."""
    folder, base = os.path.split(full)
    fd, tmp = open_temp(folder, base, suffix, prefix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            st = os.lstat(full)
            bits = st.st_mode & 0o7777 if stat.S_ISREG(st.st_mode) else None
        except FileNotFoundError:
            bits = None
        if bits is None:
            umask = os.umask(0)
            os.umask(umask)
            bits = (mode if mode is not None else 0o666) & ~umask
        os.chmod(tmp, bits)
        if before_rename is not None:
            before_rename()
        os.replace(tmp, full)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


#: Why an existing file is not replaced (the end of a one-line message; the app's and the scripts' ``--force``).
EXISTS = "already exists and would be replaced; name a new file or allow overwriting (--force)"


def output_problem(path: str, overwrite: bool = True) -> str:
    """Why ``path`` may not be written (one line naming it), or ``""`` when it may; with ``overwrite=False`` an
    existing file is not replaced either (the user did not pass ``--force``)."""
    full = os.path.abspath(path)
    root = special_root(full)
    if root is not None:
        return f"{path}: nothing is written under {root}"
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        return f"{path}: {exc.strerror or exc}"
    if st is not None and not stat.S_ISREG(st.st_mode):
        return f"{path}: exists and is not a regular file (a link, a folder or a device); name another file"
    if st is not None and not overwrite:
        return f"{path}: {EXISTS}"
    if not os.path.isdir(os.path.dirname(full)):
        return f"{path}: its folder does not exist"
    return ""


def write_output(path: str, data: bytes, overwrite: bool = True) -> str:
    """Write ``data`` to ``path`` under this module's rules (``overwrite=False``: an existing file is not replaced,
    also one that appears before the rename); raises ``ValueError`` with a one-line message when the path is
    refused or the write fails. Returns the absolute path written."""
    problem = output_problem(path, overwrite)
    if problem:
        raise ValueError(f"not written: {problem}")
    full = os.path.abspath(path)

    def recheck() -> None:
        again = output_problem(path, overwrite)  # replaced by a link since the first look?
        if again:
            raise ValueError(f"not written: {again}")

    try:
        replace_file(full, data, recheck)
    except OSError as exc:
        raise ValueError(f"not written: {path}: {exc.strerror or exc}") from None
    return full
