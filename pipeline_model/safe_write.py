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

import contextlib
import os
import stat
from typing import Iterator, Optional, Union

from pipeline_model import safe_files
from pipeline_model.scriptlib import files

PathLike = Union[str, "os.PathLike[str]"]

#: Suffix of the temporary files this module creates.
TEMP_SUFFIX = ".rps-tmp"


#: Why an existing file is not replaced (the end of the one-line message; the same in exported scripts).
EXISTS = files.EXISTS


class OutputPathError(ValueError):
    """An output path cannot be written safely; the message names the path and why (one line)."""


@contextlib.contextmanager
def _os_errors(what: str, path: PathLike, doing: str = "") -> Iterator[None]:
    """An ``OSError`` raised inside becomes the :class:`OutputPathError` "``what`` ``path``: ``doing`` why"."""
    try:
        yield
    except OSError as exc:
        raise OutputPathError(f"{what} {os.fspath(path)}: {doing}{exc.strerror or exc}") from None


def _lstat(full: str, what: str, text: str) -> Optional[os.stat_result]:
    """``os.lstat(full)``, ``None`` when nothing is there; :class:`OutputPathError` when it cannot be looked at."""
    with _os_errors(what, text):
        try:
            return os.lstat(full)
        except FileNotFoundError:
            return None


def check_output_file(path: PathLike, what: str = "output file", *, make_folder: bool = False,
                      overwrite: bool = True) -> str:
    """``path`` (as an absolute path) when a file may be written there, else :class:`OutputPathError`.

    Refused: an empty path, an existing target that is not a regular file (folder, symlink, device, FIFO,
    socket), a path under ``/proc``, ``/sys`` or ``/dev``, a missing folder (unless ``make_folder``), a
    folder part that is not a folder; with ``overwrite=False`` also an existing regular file (the user did not
    ask to replace it: no ``--force``), the message naming the file and ``--force``.
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
    st = _lstat(full, what, text)
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise OutputPathError(f"{what} {text}: is {safe_files.kind_of(st.st_mode)}; name a regular file")
    if st is not None and not overwrite:
        raise OutputPathError(f"{what} {text}: {EXISTS}")
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
    st = _lstat(full, what, text)
    if st is None:
        parent = os.path.dirname(full)
        if not os.path.isdir(parent):
            raise OutputPathError(f"{what} {text}: the folder {parent} does not exist")
        return full
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
    with _os_errors(what, path), contextlib.suppress(FileExistsError):
        os.mkdir(full)
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
            raise OutputPathError(f"{what} {os.fspath(path)}: {EXISTS}")

    if not replace:
        recheck()
    folder = os.path.dirname(full)
    if make_folder and not os.path.isdir(folder):
        with _os_errors(what, path, f"cannot create {folder}: "):
            os.makedirs(folder, exist_ok=True)
    with _os_errors(what, path):
        # The target may have been replaced by something else since the check: checked again right before.
        files.replace_file(full, data, recheck, suffix=TEMP_SUFFIX, mode=mode)
    return full


def write_text(path: PathLike, text: str, what: str = "output file", *, make_folder: bool = False,
               mode: Optional[int] = None, replace: bool = True) -> str:
    """:func:`write_bytes` of ``text`` as UTF-8."""
    return write_bytes(path, text.encode("utf-8"), what, make_folder=make_folder, mode=mode, replace=replace)


# ---- folders the app writes into again (``run --emit-ir``) ----------------------------------------------------
#: The file in which the app lists the files it wrote into a folder it writes into again (``--emit-ir``), with
#: the SHA-256 of what it wrote: a re-run may replace those (unchanged since) but never a file of the user's.
MANIFEST_NAME = ".rps-files.json"
MANIFEST_FORMAT, MANIFEST_VERSION = "rps-written-files", 1
_MANIFEST_MAX_BYTES = 4 * 1024 * 1024


def _read_manifest(path: str) -> Optional[dict[str, str]]:
    """``{name: sha256}`` of the app's manifest at ``path``, ``{}`` when there is none, ``None`` when a file of
    another kind (the user's, garbage, a newer version) holds the name."""
    import json

    if not os.path.lexists(path):
        return {}
    try:
        data = json.loads(safe_files.read_bytes(path, "file list", _MANIFEST_MAX_BYTES).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or (data.get("format"), data.get("version")) != (MANIFEST_FORMAT, MANIFEST_VERSION):
        return None
    files_ = data.get("files")
    if not isinstance(files_, dict):
        return None
    return {k: v for k, v in files_.items() if isinstance(k, str) and isinstance(v, str) and len(v) == 64}


def check_own_files(folder: PathLike, names: "list[str] | tuple[str, ...]", what: str = "output folder", *,
                    overwrite: bool = False) -> dict[str, str]:
    """Check, before the first byte is written, that the files ``names`` may be written into ``folder``, which
    the app writes into again (``--emit-ir``): as :func:`check_new_files` (a link, FIFO or device at a name — also
    at :data:`MANIFEST_NAME` — is refused even with ``overwrite``), except that an existing file the app wrote
    there itself and nobody changed since (listed in the folder's manifest with the same SHA-256) may be replaced.
    Any other existing file, and a file at the manifest's name that is not the app's manifest, is refused unless
    ``overwrite`` (``--force``). Returns the app's manifest as read (``{name: sha256}``)."""
    paths = check_new_files(folder, [MANIFEST_NAME, *names], what, overwrite=True)
    manifest = _read_manifest(paths[MANIFEST_NAME])
    if manifest is None and not overwrite:
        raise OutputPathError(f"{what} {os.fspath(folder)}: {paths[MANIFEST_NAME]} is not this app's list of the "
                              f"files it wrote; choose a new folder or allow overwriting (--force)")
    manifest = manifest or {}
    for name in names:
        path = paths[name]
        if overwrite or not os.path.lexists(path):
            continue
        try:
            own = manifest.get(name) == safe_files.sha256_file(path, what)
        except OSError:
            own = False
        if not own:
            raise OutputPathError(f"{what} {os.fspath(folder)}: {path} already exists and is not a file this app "
                                  f"wrote there (or it was changed since); choose a new folder or allow "
                                  f"overwriting (--force)")
    return manifest


def write_own_files(folder: PathLike, contents: "dict[str, bytes]", what: str = "output folder", *,
                    overwrite: bool = False) -> list[str]:
    """Write ``contents`` (``{name: data}``) into ``folder`` (created, one level, if missing) after
    :func:`check_own_files` of every name, and record them in the folder's manifest (written first, so a file
    written is always listed; the entries of earlier files that still exist are kept). Returns the paths
    written; :class:`OutputPathError` naming the first path refused, before anything is written."""
    import hashlib
    import json

    manifest = check_own_files(folder, list(contents), what, overwrite=overwrite)
    full = ensure_folder(folder, what)
    existed = {name for name in contents if os.path.lexists(os.path.join(full, name))}
    entries = {name: digest for name, digest in manifest.items()
               if name not in contents and os.path.lexists(os.path.join(full, name))}
    entries.update({name: hashlib.sha256(data).hexdigest() for name, data in contents.items()})
    listing = {"format": MANIFEST_FORMAT, "version": MANIFEST_VERSION, "files": dict(sorted(entries.items()))}
    write_text(os.path.join(full, MANIFEST_NAME), json.dumps(listing, indent=1) + "\n", what)
    written = []
    for name, data in contents.items():  # a file that was not there at the check may not appear meanwhile
        written.append(write_bytes(os.path.join(full, name), data, what, replace=name in existed))
    return written
