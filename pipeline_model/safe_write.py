"""Writing files the user names (``export -o``, ``run --emit-ir``, Save, Export Script…) without harm.

The rules (issue 20, ``docs/RELIABILITY.md``):

* a target that exists must be a regular file — a folder, a device, a FIFO, a socket or a symbolic link
  is refused with a one-line message (:class:`OutputPathError`), before anything is written;
* nothing is written under ``/proc``, ``/sys`` or ``/dev`` (``/proc/self/mem`` *is* a regular file);
* the folder must exist (a missing folder is an error, not created behind the user's back, unless the
  caller asks for it with ``make_folder``);
* the text goes to a temporary file that this call creates itself — ``O_CREAT | O_EXCL | O_NOFOLLOW``,
  a random name ``.<name>.<random>.rps-tmp`` in the target's folder — is flushed and fsynced, then renamed
  over the target; on any failure (also Ctrl+C) that temporary file, and only it, is removed, and the
  target is untouched. A symlink or a FIFO planted at some temporary name is never opened.

TVM-free and Qt-free.
"""

from __future__ import annotations

import os
import stat
from typing import Optional, Union

from pipeline_model import safe_files
from pipeline_model.scriptlib import files

PathLike = Union[str, "os.PathLike[str]"]

#: Suffix of the temporary files this module creates.
TEMP_SUFFIX = ".rps-tmp"


class OutputPathError(ValueError):
    """An output path cannot be written safely; the message names the path and why (one line)."""


def check_output_file(path: PathLike, what: str = "output file", *, make_folder: bool = False) -> str:
    """``path`` (as an absolute path) when a file may be written there, else :class:`OutputPathError`.

    Refused: an empty path, an existing target that is not a regular file (folder, symlink, device, FIFO,
    socket), a path under ``/proc``, ``/sys`` or ``/dev``, a missing folder (unless ``make_folder``), a
    folder part that is not a folder.
    """
    text = os.fspath(path)
    if not text or "\0" in text:
        raise OutputPathError(f"{what} {text!r}: not a file name")
    full = os.path.abspath(text)
    if text.endswith(os.sep) or os.path.basename(full) in ("", ".", ".."):
        raise OutputPathError(f"{what} {text}: names a folder, not a file")
    root = safe_files.special_root(full)
    if root is not None:
        raise OutputPathError(f"{what} {text}: nothing is written under {root}")
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise OutputPathError(f"{what} {text}: {exc.strerror or exc}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputPathError(f"{what} {text}: is {safe_files.kind_of(st.st_mode)}; name a regular file")
    folder = os.path.dirname(full)
    if not os.path.isdir(folder):
        if os.path.lexists(folder) or not make_folder:
            why = "is not a folder" if os.path.lexists(folder) else "does not exist"
            raise OutputPathError(f"{what} {text}: the folder {folder} {why}")
    return full


def check_output_folder(path: PathLike, what: str = "output folder") -> str:
    """``path`` (absolute) when files may be written into it: an existing folder (not a symlink), or a missing
    one whose parent is a folder (it is then created by :func:`ensure_folder`). :class:`OutputPathError` else."""
    text = os.fspath(path)
    if not text or "\0" in text:
        raise OutputPathError(f"{what} {text!r}: not a folder name")
    full = os.path.abspath(text)
    root = safe_files.special_root(full)
    if root is not None:
        raise OutputPathError(f"{what} {text}: nothing is written under {root}")
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        parent = os.path.dirname(full)
        if not os.path.isdir(parent):
            raise OutputPathError(f"{what} {text}: the folder {parent} does not exist") from None
        return full
    except OSError as exc:
        raise OutputPathError(f"{what} {text}: {exc.strerror or exc}") from None
    if not stat.S_ISDIR(st.st_mode):
        raise OutputPathError(f"{what} {text}: is {safe_files.kind_of(st.st_mode)}; name a folder")
    return full


def check_new_files(folder: PathLike, names: "list[str] | tuple[str, ...]", what: str = "output folder", *,
                    overwrite: bool = False) -> dict[str, str]:
    """Check every file a command will write into ``folder`` before the first byte is written: the folder by
    :func:`check_output_folder`, each ``name`` by :func:`check_output_file` (a symlink, FIFO, device or folder
    there is refused), and an existing regular file is refused too unless ``overwrite`` (the user asked to
    replace it: ``--force``, a prompt). Returns ``{name: absolute path}``; :class:`OutputPathError` naming the
    first path refused."""
    full = check_output_folder(folder, what)
    paths: dict[str, str] = {}
    for name in names:
        path = os.path.join(full, name)
        if os.path.isdir(full):
            check_output_file(path, f"{what} {os.fspath(folder)}:")
            if not overwrite and os.path.lexists(path):
                raise OutputPathError(f"{what} {os.fspath(folder)}: {path} already exists and would be replaced; "
                                      f"choose a new folder or allow overwriting (--force)")
        paths[name] = path
    return paths


def existing_files(folder: PathLike, names: "list[str] | tuple[str, ...]") -> list[str]:
    """The ``names`` that exist in ``folder`` (as anything: a file, a link, a FIFO), for a prompt."""
    full = os.path.abspath(os.fspath(folder))
    return [name for name in names if os.path.isdir(full) and os.path.lexists(os.path.join(full, name))]


def ensure_folder(path: PathLike, what: str = "output folder") -> str:
    """Create the folder checked by :func:`check_output_folder` (one level) if missing; returns it."""
    full = check_output_folder(path, what)
    try:
        os.mkdir(full)
    except FileExistsError:
        pass
    except OSError as exc:
        raise OutputPathError(f"{what} {os.fspath(path)}: {exc.strerror or exc}") from None
    return full


def write_bytes(path: PathLike, data: bytes, what: str = "output file", *, make_folder: bool = False,
                mode: Optional[int] = None, replace: bool = True) -> str:
    """Write ``data`` to ``path`` atomically under the module's rules; returns the absolute path written.

    ``mode``: permission bits of a new file (default ``0o666`` less the umask); an existing file keeps its own.
    ``replace=False``: an existing file is not replaced (refused before anything is written, and looked at again
    right before the rename).
    Raises :class:`OutputPathError` for a refused path and for a failed write (the message names the path).
    The write itself is :func:`pipeline_model.scriptlib.files.replace_file`, the code exported scripts carry.
    """
    full = check_output_file(path, what, make_folder=make_folder)

    def recheck() -> None:
        check_output_file(full, what)
        if not replace and os.path.lexists(full):
            raise OutputPathError(f"{what} {os.fspath(path)}: already exists; not replaced")

    if not replace:
        recheck()
    folder = os.path.dirname(full)
    if make_folder and not os.path.isdir(folder):
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise OutputPathError(f"{what} {os.fspath(path)}: cannot create {folder}: {exc.strerror or exc}") from None
    try:
        # The target may have been replaced by something else since the check: checked again right before.
        files.replace_file(full, data, recheck, suffix=TEMP_SUFFIX, mode=mode)
    except OutputPathError:
        raise
    except OSError as exc:
        raise OutputPathError(f"{what} {os.fspath(path)}: {exc.strerror or exc}") from None
    return full


def write_text(path: PathLike, text: str, what: str = "output file", *, make_folder: bool = False,
               mode: Optional[int] = None, replace: bool = True) -> str:
    """:func:`write_bytes` of ``text`` as UTF-8."""
    return write_bytes(path, text.encode("utf-8"), what, make_folder=make_folder, mode=mode, replace=replace)
