"""Where tuning writes: the one rule for the tuning work folder of a pipeline run (TVM-free, Qt-free).

A run's steps that tune or read a tuning database (MetaSchedule, and any kind whose recipe uses
``Ref("work_dir")``) work in one folder: the document's ``build.work_dir`` (relative to the pipeline file), else
``<pipeline stem>.tuning`` next to the pipeline file, else — for an unsaved pipeline — a folder in the user's cache
keyed by model and target, so a re-run reuses the database. The GUI, the CLI, the engine
(:func:`run_work_dir`, the ``PassBuildContext.work_dir`` of every step) and exported scripts (their ``WORK_DIR``)
all use these functions.
"""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Optional


def user_cache_dir() -> str:
    """Per-user cache folder of the app (``$XDG_CACHE_HOME/relax-pipeline-studio``)."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "relax-pipeline-studio")


def default_work_dir(pipeline_path: Optional[str], model: str = "", target: Any = None) -> str:
    """The default tuning work directory.

    Next to a saved pipeline file ``dir/name.json`` it is ``dir/name.tuning``; for an unsaved pipeline
    it is a folder in the user cache keyed by model and target, so re-runs still reuse it.
    """
    if pipeline_path:
        path = os.path.abspath(pipeline_path)
        stem = os.path.splitext(os.path.basename(path))[0]
        return os.path.join(os.path.dirname(path), f"{stem}.tuning")
    key = hashlib.sha256(json.dumps([model, target], sort_keys=True, default=str).encode()).hexdigest()
    return os.path.join(user_cache_dir(), "tuning", key[:16])


def document_work_dir(doc: Any) -> str:
    """The default tuning work directory of a pipeline document's MetaSchedule steps: its
    ``build["work_dir"]`` (relative to the pipeline file's folder), else :func:`default_work_dir`
    (``<pipeline stem>.tuning`` next to the file), so a re-run — or the exported script — reuses the
    database. ``doc`` is a :class:`pipeline_model.document.PipelineDocument`."""
    build = doc.build if isinstance(doc.build, dict) else {}
    given = str(build.get("work_dir") or "").strip()
    if given:
        path = os.path.expanduser(given)
        base = doc.model_path_base()
        if not os.path.isabs(path) and base:
            path = os.path.join(base, path)
        return os.path.abspath(path)
    return default_work_dir(doc.path, doc.model, dict(doc.target))


def run_work_dir(args: dict[str, Any]) -> str:
    """An engine run's default tuning work directory: ``args["work_dir"]`` (the client sends the
    document's ``build.work_dir`` or :func:`default_work_dir`), else that default computed from
    ``pipeline_path`` (``<stem>.tuning`` next to the pipeline file), model and target."""
    given = args.get("work_dir")
    if given:
        return os.path.abspath(str(given))
    return default_work_dir(args.get("pipeline_path"), str(args.get("model") or ""),
                            dict(args.get("target") or {"kind": "llvm"}))


#: Environment variable naming the per-user tuning database folder; ``off`` turns the database off.
USER_DB_ENV = "RPS_TUNING_DB_DIR"


def user_tuning_database_dir():  # type: ignore[no-untyped-def]  # copied verbatim into exported scripts
    """The per-user MetaSchedule database shared by every pipeline and model (records found there by
    workload are reused instead of tuned): ``$RPS_TUNING_DB_DIR`` when set (``off``: no database, returns
    ""), else ``$XDG_DATA_HOME/relax-pipeline-studio/tuning-db`` (``~/.local/share/...``)."""
    import os

    given = os.environ.get("RPS_TUNING_DB_DIR", "").strip()
    if given.lower() in ("off", "0", "none", "false"):
        return ""
    if given:
        return os.path.abspath(os.path.expanduser(given))
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, "relax-pipeline-studio", "tuning-db")


def tuning_database_stats(path: str) -> dict[str, Any]:
    """Size of a MetaSchedule JSON database folder without reading it into TVM: ``{path, exists,
    workloads, records, bytes}`` (one JSON line per workload / record; symlinked files are not read)."""
    out: dict[str, Any] = {"path": path, "exists": bool(path) and os.path.isdir(path), "workloads": 0,
                           "records": 0, "bytes": 0}
    for name, key in (("database_workload.json", "workloads"), ("database_tuning_record.json", "records")):
        full = os.path.join(path, name) if path else ""
        if not full or os.path.islink(full) or not os.path.isfile(full):
            continue
        try:
            with open(full, "rb") as fh:
                out[key] = sum(1 for line in fh if line.strip())
            out["bytes"] += os.path.getsize(full)
        except OSError:
            continue
    return out
