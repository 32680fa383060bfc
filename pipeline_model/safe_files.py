"""Reading files named by documents safely (TVM-free): no special files, bounded sizes, streaming hashes.

Every reader of a file that a pipeline file, a model spec or a step parameter names goes through here:

* :func:`check_regular` refuses anything that is not a regular file — FIFOs (reading would block),
  character/block devices (``/dev/zero`` never ends), sockets, directories — and anything under
  ``/proc``, ``/sys`` or ``/dev``, with a message naming the file and what it is;
* :func:`sha256_file` hashes in 1 MiB chunks (never the whole file in memory) and refuses files over
  a size cap (:data:`MAX_HASH_BYTES` by default);
* :func:`read_bytes` / :func:`read_text` read with a cap (:data:`MAX_TEXT_BYTES` by default).

Files are opened with ``O_NONBLOCK`` and checked again with ``fstat`` after opening, so a file swapped
for a FIFO between the check and the open still cannot block the caller.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
from typing import Any, Iterator, Optional

from pipeline_model.scriptlib import files

#: Largest file :func:`sha256_file` hashes by default (model weights may be big).
MAX_HASH_BYTES = 4 * 1024 * 1024 * 1024
#: Largest file :func:`read_bytes` / :func:`read_text` read by default.
MAX_TEXT_BYTES = 64 * 1024 * 1024
#: Folders whose files are never read (kernel interfaces and devices).
SPECIAL_ROOTS = files.SPECIAL_ROOTS

_CHUNK = 1 << 20


class UnsafeFileError(OSError):
    """A named file is not a regular file, is too big, or cannot be read; the text names it."""


#: What a file is, by the first test of its ``st_mode`` that holds (:func:`kind_of`).
_KINDS = ((stat.S_ISLNK, "a symbolic link"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"),
          (stat.S_ISDIR, "a directory"), (stat.S_ISREG, "a regular file"))


def kind_of(mode: int) -> str:
    """What a file of ``st_mode`` ``mode`` is, for messages ("a FIFO (named pipe)", "a symbolic link", ...)."""
    return next((kind for test, kind in _KINDS if test(mode)), "not a regular file")


#: The system folder (``/proc``, ``/sys``, ``/dev``) a path resolves into, or ``None`` (one rule for reading and
#: writing, :func:`pipeline_model.scriptlib.files.special_root`).
special_root = files.special_root


def check_regular(path: str, what: str = "file", max_bytes: Optional[int] = None) -> os.stat_result:
    """``os.stat`` of ``path`` when it is a regular file (at most ``max_bytes``) outside ``/proc``,
    ``/sys`` and ``/dev``; :class:`UnsafeFileError` naming ``what`` and the path otherwise."""
    root = special_root(path)
    if root is not None:
        raise UnsafeFileError(f"{what} {path} is under {root} (a system folder), not a regular file; refused")
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise UnsafeFileError(f"cannot read {what} {path}: it does not exist") from None
    except OSError as exc:
        raise UnsafeFileError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFileError(f"{what} {path} is {kind_of(st.st_mode)}, not a regular file; refused")
    if max_bytes is not None and st.st_size > max_bytes:
        raise UnsafeFileError(
            f"{what} {path} is {st.st_size:,} bytes, more than the limit of {max_bytes:,} bytes; refused")
    return st


def input_problem(path: str, what: str) -> Optional[str]:
    """One line saying why the input file ``path`` (named by the option ``what``, e.g. ``--inputs``) cannot be
    read — missing, a FIFO, a device, a folder, under ``/proc`` — or ``None`` when it is a regular file."""
    if not os.path.lexists(path):
        return f"{what} {path}: no such file"
    try:
        check_regular(path, what)
    except UnsafeFileError as exc:
        return str(exc)
    return None


def _open(path: str, what: str, max_bytes: Optional[int]) -> int:
    check_regular(path, what, max_bytes)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        raise UnsafeFileError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise UnsafeFileError(f"{what} {path} is {kind_of(st.st_mode)}, not a regular file; refused")
    return fd


def open_regular(path: str, what: str = "file", max_bytes: Optional[int] = None) -> "io.BufferedReader":
    """A binary file object of ``path`` opened only when it is a regular file (checked again on the open file
    descriptor, so a FIFO swapped in never blocks); :class:`UnsafeFileError` otherwise."""
    fd = _open(path, what, max_bytes)
    os.set_blocking(fd, True)
    return io.open(fd, "rb", closefd=True)


def _chunks(path: str, what: str, max_bytes: int) -> Iterator[bytes]:
    """The content of a regular file in chunks, refused past ``max_bytes`` (also when it grows while read)."""
    fd = _open(path, what, max_bytes)
    total = 0
    try:
        while True:
            chunk = os.read(fd, _CHUNK)
            if not chunk:
                return
            total += len(chunk)
            if total > max_bytes:
                raise UnsafeFileError(f"{what} {path} grew past the limit of {max_bytes:,} bytes while being read")
            yield chunk
    except OSError as exc:
        if isinstance(exc, UnsafeFileError):
            raise
        raise UnsafeFileError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)


def sha256_file(path: str, what: str = "file", max_bytes: int = MAX_HASH_BYTES) -> str:
    """Hex SHA-256 of a regular file, read in chunks; :class:`UnsafeFileError` when refused."""
    digest = hashlib.sha256()
    for chunk in _chunks(path, what, max_bytes):
        digest.update(chunk)
    return digest.hexdigest()


def read_bytes(path: str, what: str = "file", max_bytes: int = MAX_TEXT_BYTES) -> bytes:
    """The content of a regular file of at most ``max_bytes``; :class:`UnsafeFileError` when refused."""
    return b"".join(_chunks(path, what, max_bytes))


def read_text(path: str, what: str = "file", max_bytes: int = MAX_TEXT_BYTES) -> str:
    """UTF-8 text of a regular file of at most ``max_bytes``; :class:`UnsafeFileError` when refused or
    not UTF-8 (the message names the byte offset)."""
    data = read_bytes(path, what, max_bytes)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UnsafeFileError(f"{what} {path} is not UTF-8 text (byte {exc.start})") from None


def write_json_atomic(path: str, data: Any, *, prefix: str, indent: Optional[int] = None,
                      sort_keys: bool = False) -> None:
    """Write ``data`` as JSON to ``path`` atomically (:func:`pipeline_model.scriptlib.files.replace_file`): a
    temporary file of the app's own naming (``<prefix>*.rps-tmp`` in the same folder, which is created; a new
    file is private, mode 0600), flushed and fsynced, then renamed over ``path``; on any failure the temporary
    file is removed and ``path`` is untouched."""
    import json

    full = os.path.abspath(path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    text = json.dumps(data, indent=indent, sort_keys=sort_keys, ensure_ascii=False)
    files.replace_file(full, text.encode("utf-8"), prefix=prefix, suffix=".rps-tmp", mode=0o600)
