"""Recovery files for unsaved edits (TVM-free, Qt-free): the GUI's autosave writes the open document
here shortly after each edit; after a crash the next start offers the recovery files it finds; a clean
exit removes them.

One file per document and app instance in :func:`recovery_dir` (``$XDG_STATE_HOME/relax-pipeline-studio/
recovery``)::

    {"format": "relax-pipeline-studio.recovery", "version": 1, "pipeline_path": str | null,
     "saved_at": ISO time, "pid": int, "document": <pipeline file JSON>}

Written atomically (temp file of the app's naming in the same folder, fsync, rename), so a crash
during an autosave leaves the previous recovery copy intact. The document part is validated on read
exactly like a pipeline file (:func:`pipeline_model.fileformat.loads_pipeline`).
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
from dataclasses import dataclass
from typing import Optional

from pipeline_model import safe_files
from pipeline_model.document import PipelineDocument

FORMAT = "relax-pipeline-studio.recovery"
VERSION = 1
SUFFIX = ".recovery.json"
MAX_BYTES = 32 * 1024 * 1024


class RecoveryError(ValueError):
    """A recovery file cannot be read; the message names it."""


@dataclass
class Recovery:
    """A recovery file read back: where it is, the document's own path (``None``: unsaved), when it
    was written, by which process, and the document (its ``path`` set to ``pipeline_path``)."""

    path: str
    pipeline_path: Optional[str]
    saved_at: str
    pid: int
    document: PipelineDocument


def recovery_dir() -> str:
    """Folder of the recovery files (``$XDG_STATE_HOME/relax-pipeline-studio/recovery``)."""
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(base, "relax-pipeline-studio", "recovery")


def recovery_path(pipeline_path: Optional[str], instance: str = "", folder: Optional[str] = None) -> str:
    """The recovery file of a document: keyed by its absolute path (or "untitled") and the app
    ``instance`` (default: this process id), so two running instances never share one."""
    key = os.path.abspath(pipeline_path) if pipeline_path else "untitled"
    digest = hashlib.sha256(f"{key}\0{instance or os.getpid()}".encode("utf-8", "surrogatepass")).hexdigest()[:20]
    return os.path.join(folder or recovery_dir(), digest + SUFFIX)


def write_recovery(doc: PipelineDocument, instance: str = "", folder: Optional[str] = None) -> str:
    """Write ``doc`` (unsaved edits included) to its recovery file atomically; returns the path.
    Raises ``ValueError`` when the document holds values that cannot be saved, ``OSError`` on I/O."""
    from pipeline_model.fileformat import dumps_pipeline

    text = dumps_pipeline(doc)  # the same checks as a save
    data = {
        "format": FORMAT, "version": VERSION, "pipeline_path": os.path.abspath(doc.path) if doc.path else None,
        "saved_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "pid": os.getpid(), "document": json.loads(text),
    }
    path = recovery_path(doc.path, instance, folder)
    target_dir = os.path.dirname(path)
    os.makedirs(target_dir, exist_ok=True)
    safe_files.write_json_atomic(path, data, prefix="." + os.path.basename(path) + ".")
    return path


def read_recovery(path: str) -> Recovery:
    """Read and validate a recovery file; :class:`RecoveryError` naming it when it is damaged."""
    from pipeline_model.fileformat import PipelineFileError, loads_pipeline

    try:
        data = json.loads(safe_files.read_text(path, "recovery file", MAX_BYTES))
    except (OSError, ValueError, RecursionError) as exc:
        raise RecoveryError(f"recovery file {path}: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("document"), dict):
        raise RecoveryError(f"recovery file {path}: not a recovery file of this app")
    pipeline_path = data.get("pipeline_path")
    try:
        doc = loads_pipeline(json.dumps(data["document"]), source=path)
    except PipelineFileError as exc:
        raise RecoveryError(str(exc)) from None
    doc.path = pipeline_path if isinstance(pipeline_path, str) else None
    pid = data.get("pid")
    return Recovery(path, doc.path, str(data.get("saved_at") or ""), pid if isinstance(pid, int) else 0, doc)


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find_recoveries(folder: Optional[str] = None, include_live: bool = False) -> tuple[list[Recovery], list[str]]:
    """Recovery files left by app instances that are gone (those of running instances are skipped
    unless ``include_live``): (readable ones, newest first; messages for damaged ones)."""
    folder = folder or recovery_dir()
    found: list[Recovery] = []
    problems: list[str] = []
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return found, problems
    for name in names:
        if not name.endswith(SUFFIX) or name.startswith("."):
            continue
        try:
            item = read_recovery(os.path.join(folder, name))
        except RecoveryError as exc:
            problems.append(str(exc))
            continue
        if include_live or item.pid == os.getpid() or not _pid_alive(item.pid):
            found.append(item)
    found.sort(key=lambda r: r.saved_at, reverse=True)
    return found, problems


def remove_recovery(path: str) -> bool:
    """Delete one recovery file (only files of this app's naming in a recovery folder); True when removed."""
    if not os.path.basename(path).endswith(SUFFIX):
        return False
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    return True
