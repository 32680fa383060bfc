"""TVM-free helpers for MetaSchedule tuning: configuration, progress records, work directories.

The engine side (:mod:`pipeline_model.tuning_tvm`) does the tuning; this module holds what the GUI,
the CLI and the catalogue need without importing TVM:

* :class:`TuningConfig` — the user-facing tuning options (trials in total / per task / per round,
  cost model, runner "local" or "rpc" with tracker host/port/key, builder and measurement settings,
  work directory, "re-tune"), parsed from step parameters with clear messages;
* :class:`TaskProgress` / :class:`TuningProgress` — what a ``tuning_progress`` event carries
  (``{done, total, tasks: [{name, trials, best_us}]}`` plus a few extras);
* :func:`default_work_dir` — ``<pipeline stem>.tuning/`` next to the pipeline file (a per-user cache
  folder for unsaved pipelines), so a re-run reuses the database;
* :data:`COMMON_TUNING_PARAMS` / :func:`tuning_param` — the builder/runner parameters every tuning step has
  (the per-pass tables live with the MetaSchedule pass kind, :mod:`pipeline_model.passkinds.metaschedule`);
* :func:`format_progress_line` — one CLI line per progress event.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

#: Cost models MetaSchedule accepts (``CostModel.create``).
COST_MODELS = ("xgb", "random", "mlp")
#: Runner choices.
RUNNERS = ("local", "rpc")
#: Name of the small state file kept in a work directory (which tasks finished tuning).
STATE_FILE = "rps_tuning_state.json"


class TuningConfigError(ValueError):
    """A tuning parameter has a bad value; the message names the parameter."""


def tuning_param(name: str, kind: str, default: Any, doc: str, choices: Optional[list] = None) -> dict:
    """One parameter of a tuning step as ``ParamSpec`` JSON (``choices`` for a ``choice`` parameter)."""
    data: dict[str, Any] = {"name": name, "kind": kind, "default": default, "doc": doc}
    if choices is not None:
        data["choices"] = list(choices)
    return data


#: Builder/runner parameters of every MetaSchedule tuning step (``ParamSpec.from_json`` of each dict).
COMMON_TUNING_PARAMS: list[dict] = [
    tuning_param("work_dir", "str", "", "Tuning work directory (database + logs). Empty: "
           "'<pipeline name>.tuning' next to the pipeline file, so a re-run reuses it."),
    tuning_param("num_trials_per_iter", "int", 16, "Candidates measured per round (smaller rounds stop faster)."),
    tuning_param("cost_model", "choice", "xgb", "Cost model guiding the search.", list(COST_MODELS)),
    tuning_param("runner", "choice", "local", "Where candidates are measured: this machine or an RPC tracker.",
           list(RUNNERS)),
    tuning_param("rpc_host", "str", "127.0.0.1", "RPC tracker host (runner = rpc)."),
    tuning_param("rpc_port", "int", 9190, "RPC tracker port (runner = rpc)."),
    tuning_param("rpc_key", "str", "local", "RPC device key registered with the tracker (runner = rpc)."),
    tuning_param("builder_workers", "int", 0, "Parallel build processes (0: number of CPU cores)."),
    tuning_param("builder_timeout_s", "float", 60.0, "Build time limit per candidate, seconds."),
    tuning_param("retune", "bool", False, "Wipe the work directory's database and tune again from scratch."),
]

@dataclass
class TuningConfig:
    """User-facing tuning options (all have defaults that work on a CPU out of the box)."""

    max_trials_global: int = 64
    max_trials_per_task: Optional[int] = None
    num_trials_per_iter: int = 16
    cost_model: str = "xgb"
    runner: str = "local"
    rpc_host: str = "127.0.0.1"
    rpc_port: int = 9190
    rpc_key: str = "local"
    rpc_session_timeout_s: int = 60
    builder_workers: int = 0
    builder_timeout_s: float = 60.0
    runner_timeout_s: float = 30.0
    number: int = 10
    repeat: int = 1
    min_repeat_ms: int = 20
    seed: Optional[int] = None
    retune: bool = False
    work_dir: str = ""
    op_names: list[str] = field(default_factory=list)

    @classmethod
    def from_params(cls, params: dict[str, Any], where: str = "tuning step") -> "TuningConfig":
        """Build a config from step parameters; unknown keys are ignored, bad values raise
        :class:`TuningConfigError` naming ``where`` and the parameter."""
        cfg = cls()

        def bad(name: str, msg: str) -> TuningConfigError:
            return TuningConfigError(f"{where}: parameter '{name}' {msg}")

        for name, value in (params or {}).items():
            if not hasattr(cfg, name) or name.startswith("_"):
                continue
            default = getattr(cls(), name)
            if name == "max_trials_per_task":
                if value in (None, 0, ""):
                    cfg.max_trials_per_task = None
                    continue
                default = 0
            if name == "seed" and value in (None, ""):
                continue
            if name == "seed":
                default = 0
            if isinstance(default, bool):
                if not isinstance(value, bool):
                    raise bad(name, f"must be true or false, not {value!r}")
            elif isinstance(default, int):
                if isinstance(value, bool) or not isinstance(value, int):
                    raise bad(name, f"must be an integer, not {value!r}")
            elif isinstance(default, float):
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise bad(name, f"must be a number, not {value!r}")
                value = float(value)
            elif isinstance(default, str):
                if not isinstance(value, str):
                    raise bad(name, f"must be a string, not {value!r}")
            elif isinstance(default, list):
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise bad(name, f"must be a list of strings, not {value!r}")
            setattr(cfg, name, value)
        if cfg.max_trials_global < 1:
            raise bad("max_trials_global", f"must be at least 1, not {cfg.max_trials_global}")
        if cfg.max_trials_per_task is not None and cfg.max_trials_per_task < 1:
            raise bad("max_trials_per_task", "must be at least 1 (or 0 for no limit)")
        if cfg.num_trials_per_iter < 1:
            raise bad("num_trials_per_iter", f"must be at least 1, not {cfg.num_trials_per_iter}")
        if cfg.cost_model not in COST_MODELS:
            raise bad("cost_model", f"must be one of {list(COST_MODELS)}, not {cfg.cost_model!r}")
        if cfg.runner not in RUNNERS:
            raise bad("runner", f"must be one of {list(RUNNERS)}, not {cfg.runner!r}")
        if cfg.runner == "rpc":
            if not cfg.rpc_host.strip():
                raise bad("rpc_host", "is empty (runner = rpc needs the tracker's host)")
            if not 0 < cfg.rpc_port < 65536:
                raise bad("rpc_port", f"must be a TCP port, not {cfg.rpc_port}")
            if not cfg.rpc_key.strip():
                raise bad("rpc_key", "is empty (runner = rpc needs the device key)")
        if cfg.builder_workers < 0:
            raise bad("builder_workers", "must be 0 (all cores) or more")
        if cfg.builder_timeout_s <= 0:
            raise bad("builder_timeout_s", "must be positive")
        return cfg

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


@dataclass
class TaskProgress:
    """One tuning task: trials measured so far (this run + reused), best latency in microseconds."""

    name: str
    trials: int = 0
    best_us: Optional[float] = None
    errors: int = 0
    reused: bool = False  # already tuned in the work directory's database; skipped this time
    status: str = "pending"  # pending | tuning | done | skipped | stopped


@dataclass
class TuningProgress:
    """Payload of a ``tuning_progress`` event and the summary a tuning step reports."""

    done: int = 0
    total: int = 0
    tasks: list[TaskProgress] = field(default_factory=list)
    work_dir: str = ""
    elapsed_s: float = 0.0
    finished: bool = False
    stopped: bool = False
    pass_id: str = ""
    runner: str = "local"
    eta_s: Optional[float] = None  # estimated seconds left (from trials done / elapsed); None: unknown
    focus: Optional[dict] = None  # targeted tuning plan (pipeline_model.tuning_focus.plan_targeted_tuning)
    best: dict = field(default_factory=dict)  # task -> {trace, tir, ...} (best schedule, shortened), at the end

    def task(self, name: str) -> TaskProgress:
        """The task record named ``name`` (created when missing)."""
        for task in self.tasks:
            if task.name == name:
                return task
        task = TaskProgress(name=name)
        self.tasks.append(task)
        return task

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (the ``tuning_progress`` event data)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "TuningProgress":
        """Inverse of :meth:`to_json`."""
        data = dict(data)
        data["tasks"] = [TaskProgress(**t) for t in data.get("tasks") or []]
        return cls(**data)


def format_progress_line(progress: dict[str, Any] | TuningProgress) -> str:
    """One human line for the CLI, e.g. ``tuning 12/64 trials; fused_matmul_add_relu 12 (41.2 us)``."""
    if isinstance(progress, dict):
        progress = TuningProgress.from_json(progress)
    parts = []
    untargeted = 0
    for task in progress.tasks:
        if task.status == "not targeted":
            untargeted += 1
            continue
        best = f"{task.best_us:.1f} us" if task.best_us is not None else "-"
        extra = " reused" if task.reused else ""
        parts.append(f"{task.name} {task.trials} ({best}{extra})")
    head = f"tuning {progress.done}/{progress.total} trials"
    if progress.stopped:
        head += " [stopped]"
    elif progress.finished:
        head += " [done]"
    elif progress.eta_s is not None:
        head += f", ETA {format_eta(progress.eta_s)}"
    if untargeted:
        parts.append(f"{untargeted} not targeted")
    focus = progress.focus if isinstance(progress.focus, dict) else None
    if focus and progress.done == 0 and not progress.finished:  # the plan, once, before the first trial
        chosen = ", ".join(f"{c.get('name')} {float(c.get('share') or 0) * 100:.1f}% -> {c.get('trials')}"
                           for c in focus.get("chosen") or [])
        head += f" (targeted, focus {focus.get('focus')}: {chosen})"
    return head + ("; " + ", ".join(parts) if parts else "")


def estimate_eta(done: int, total: int, elapsed_s: float) -> Optional[float]:
    """Seconds left at the pace so far (``elapsed_s / done`` per trial); ``None`` before the first trial."""
    if done <= 0 or total <= done or elapsed_s <= 0:
        return None if done <= 0 or elapsed_s <= 0 else 0.0
    return round(elapsed_s / done * (total - done), 1)


def format_eta(seconds: Optional[float]) -> str:
    """``1h02m``, ``3m05s``, ``42s`` or ``?``."""
    if seconds is None:
        return "?"
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    if s >= 60:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s}s"


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


def resolve_work_dir(param: str, default: Optional[str], base_dir: Optional[str] = None) -> str:
    """The work directory a step uses: its ``work_dir`` parameter (relative to ``base_dir``, the
    pipeline's folder) or ``default``. Raises :class:`TuningConfigError` when there is neither."""
    if param and param.strip():
        path = os.path.expanduser(param.strip())
        if not os.path.isabs(path) and base_dir:
            path = os.path.join(base_dir, path)
        return os.path.abspath(path)
    if default:
        return os.path.abspath(default)
    raise TuningConfigError("parameter 'work_dir' is empty and the engine gave no default work directory")


def database_files(work_dir: str) -> tuple[str, str]:
    """Paths of MetaSchedule's JSON database in ``work_dir`` (workloads, tuning records)."""
    return (
        os.path.join(work_dir, "database_workload.json"),
        os.path.join(work_dir, "database_tuning_record.json"),
    )


def has_database(work_dir: str) -> bool:
    """True when ``work_dir`` holds a MetaSchedule JSON database with at least one record."""
    _, records = database_files(work_dir)
    return os.path.isfile(records) and os.path.getsize(records) > 0


#: The manifest of files the app wrote into a tuning work directory (relative paths).
MANIFEST_FILE = "rps_manifest.json"
MANIFEST_FORMAT = "relax-pipeline-studio.tuning-manifest"
#: Folders of a work directory the tracker looks into (MetaSchedule writes its task logs to ``logs/``).
_TRACKED_DIRS = ("", "logs")


def _inside(work_dir: str, rel: str) -> Optional[str]:
    """The absolute path of ``rel`` when it stays inside ``work_dir`` (no ``..``, no absolute path,
    no symlink leading out), else ``None``."""
    if not rel or os.path.isabs(rel) or any(part == ".." for part in rel.replace("\\", "/").split("/")):
        return None
    root = os.path.realpath(work_dir)
    full = os.path.join(root, rel)
    real = os.path.realpath(full)
    if not real.startswith(root + os.sep):
        return None
    return full


def read_manifest(work_dir: str) -> list[str]:
    """Relative paths of the files the app wrote into ``work_dir`` ([] when there is no manifest)."""
    path = os.path.join(work_dir, MANIFEST_FILE)
    try:
        from pipeline_model import safe_files

        data = json.loads(safe_files.read_text(path, "tuning manifest", 16 * 1024 * 1024))
    except (OSError, ValueError, RecursionError):
        return []
    files = data.get("files") if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else None
    return sorted({str(f) for f in files if isinstance(f, str)}) if isinstance(files, list) else []


def write_manifest(work_dir: str, files: list[str]) -> None:
    """Write the manifest atomically (a temp file of the app's own naming, then rename)."""
    from pipeline_model import safe_files

    os.makedirs(work_dir, exist_ok=True)
    data = {"format": MANIFEST_FORMAT, "version": 1, "files": sorted(set(files))}
    safe_files.write_json_atomic(os.path.join(work_dir, MANIFEST_FILE), data, prefix=".rps_manifest.", indent=1)


def work_dir_files(work_dir: str) -> set[str]:
    """Relative paths of the regular files in ``work_dir`` and its ``logs/`` folder."""
    found = set()
    for sub in _TRACKED_DIRS:
        folder = os.path.join(work_dir, sub) if sub else work_dir
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            rel = f"{sub}/{name}" if sub else name
            if os.path.isfile(os.path.join(folder, name)) and not os.path.islink(os.path.join(folder, name)):
                found.add(rel)
    return found


class track_work_dir:  # noqa: N801 - used as a context manager, like a function
    """Context manager around tuning in ``work_dir``: files that appear there (and in ``logs/``)
    while it is open are added to the manifest, so re-tune can remove exactly those."""

    def __init__(self, work_dir: str) -> None:
        self.work_dir = work_dir
        self.foreign: set[str] = set()

    def __enter__(self) -> "track_work_dir":
        os.makedirs(self.work_dir, exist_ok=True)
        # Files there now that the manifest does not list are the user's: never claimed.
        self.foreign = work_dir_files(self.work_dir) - set(read_manifest(self.work_dir))
        return self

    def __exit__(self, *exc: Any) -> None:
        owned = work_dir_files(self.work_dir) - self.foreign - {MANIFEST_FILE}
        listed = set(read_manifest(self.work_dir))
        if owned - listed:
            write_manifest(self.work_dir, sorted(listed | owned))


def wipe_work_dir(work_dir: str) -> None:
    """Re-tune: delete the files the app wrote into ``work_dir`` (those its manifest lists), nothing else.

    Files the app did not write stay, in ``logs/`` too. When a MetaSchedule database file that the app
    did not write remains, :class:`TuningConfigError` says so (re-tuning would reuse its records)."""
    listed = read_manifest(work_dir)
    kept = []
    for rel in listed:
        full = _inside(work_dir, rel)
        if full is None:
            continue  # a manifest entry pointing outside the work dir is ignored, never followed
        try:
            if os.path.isfile(full) and not os.path.islink(full):
                os.remove(full)
        except OSError:
            kept.append(rel)
    logs = os.path.join(work_dir, "logs")
    try:
        if os.path.isdir(logs) and not os.listdir(logs) and "logs" not in kept:
            os.rmdir(logs)
    except OSError:
        pass
    if listed:
        write_manifest(work_dir, kept)
    foreign = [p for p in (*database_files(work_dir), os.path.join(work_dir, STATE_FILE)) if os.path.exists(p)]
    if foreign:
        raise TuningConfigError(
            f"re-tune: {', '.join(os.path.basename(p) for p in foreign)} in {work_dir} was not written by this app "
            "(it is not in the work directory's manifest), so it is not deleted; remove it yourself or choose "
            "another work_dir")
