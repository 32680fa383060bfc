"""TVM-free configuration of the MetaSchedule kind: pass ids, options, progress records, work directories.

The engine half (``*_tvm.py`` beside this file) does the tuning; this module holds what the GUI, the
CLI, the catalogue and the exporter need without importing TVM:

* the pass ids (:data:`TUNE_TIR`, :data:`TUNE_IRMOD`, :data:`APPLY_DATABASE`), :func:`tuning_mode` and
  :func:`tvm_tuning_params` (the TVM keyword arguments of a step);
* :class:`TuningConfig` — the user-facing tuning options (trials in total / per task / per round,
  cost model, runner "local" or "rpc" with tracker host/port/key, builder and measurement settings,
  work directory, "re-tune", the app rules that seed the search), parsed from step parameters with clear messages. Its field defaults are
  the one table of tuning defaults: the catalogue's parameters (:data:`COMMON_TUNING_PARAMS`), the
  engine and the options an exported script gets (:func:`script_options`) all read them;
* :class:`TaskProgress` / :class:`TuningProgress` — what a ``tuning_progress`` event carries
  (``{done, total, tasks: [{name, trials, best_us}]}`` plus a few extras);
* where tuning writes: :func:`default_work_dir` (``<pipeline stem>.tuning/`` next to the pipeline
  file, a per-user cache folder for unsaved pipelines, so a re-run reuses the database),
  :func:`document_work_dir` (a document's), :func:`run_work_dir` (an engine run's) and
  :func:`resolve_work_dir` (a step's); the manifest and re-tune rule are in
  :mod:`pipeline_model.passkinds.metaschedule.script` (shared with exported scripts);
* :func:`format_progress_line` — one CLI line per progress event.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from pipeline_model.passkinds.dlight.rules import builtin_rule_names
from pipeline_model.passkinds.metaschedule.script import DATABASE_FILES, TuningConfigError

TUNE_TIR = "relax.MetaScheduleTuneTIR"
TUNE_IRMOD = "relax.MetaScheduleTuneIRMod"
APPLY_DATABASE = "relax.MetaScheduleApplyDatabase"
#: The three pass ids of the MetaSchedule kind.
PASS_IDS = (TUNE_TIR, TUNE_IRMOD, APPLY_DATABASE)
#: The ids whose steps tune (emit ``tuning_progress``).
TUNING_IDS = (TUNE_TIR, TUNE_IRMOD)

#: TVM keyword arguments of the MetaSchedule passes; their other params only configure tuning.
TVM_TUNING_KWARGS: dict[str, tuple[str, ...]] = {
    TUNE_TIR: ("work_dir", "max_trials_global"),
    TUNE_IRMOD: ("work_dir", "max_trials_global", "max_trials_per_task", "op_names"),
    APPLY_DATABASE: ("work_dir", "enable_warning"),
}
#: Options of a tuning step that are arguments of the pass itself (not in :func:`script_options`).
PASS_ARGUMENTS = ("max_trials_global", "max_trials_per_task", "op_names", "work_dir")

#: ``make_tuning_pass`` modes by pass id.
_MODES = {TUNE_TIR: "tir", TUNE_IRMOD: "irmod", APPLY_DATABASE: "apply"}

#: Cost models MetaSchedule accepts (``CostModel.create``).
COST_MODELS = ("xgb", "random", "mlp")
#: Runner choices.
RUNNERS = ("local", "rpc")
#: Rules a ``relax.MetaScheduleTuneTIR`` step may seed its database with (``seed_rules``, see
#: :mod:`pipeline_model.passkinds.metaschedule.seed`): the app's own DLight rules, named as in a dlight step.
SEED_RULES = tuple(builtin_rule_names())


def tuning_mode(pass_id: str) -> Optional[str]:
    """``"tir"``, ``"irmod"`` or ``"apply"`` for the three MetaSchedule ids, else ``None``."""
    return _MODES.get(pass_id)


def tvm_tuning_params(pass_id: str, params: dict[str, Any]) -> dict[str, Any]:
    """TVM keyword arguments of a MetaSchedule step (0 / [] mean "no limit" / "all tasks")."""
    out = {k: v for k, v in params.items() if k in TVM_TUNING_KWARGS.get(pass_id, ())}
    if out.get("max_trials_per_task") == 0:
        out["max_trials_per_task"] = None
    if out.get("op_names") == []:
        out["op_names"] = None
    return out


def target_dict(target: Any) -> dict[str, Any]:
    """A target dict of a dict or ``tvm.target.Target`` (whose ``str`` is its JSON)."""
    if isinstance(target, dict):
        return dict(target)
    try:
        data = json.loads(str(target))
        return data if isinstance(data, dict) else {"kind": str(target)}
    except ValueError:
        return {"kind": getattr(getattr(target, "kind", None), "name", str(target))}


def tuning_param(name: str, kind: str, default: Any, doc: str, choices: Optional[list] = None) -> dict:
    """One parameter of a tuning step as ``ParamSpec`` JSON (``choices`` for a ``choice`` parameter)."""
    data: dict[str, Any] = {"name": name, "kind": kind, "default": default, "doc": doc}
    if choices is not None:
        data["choices"] = list(choices)
    return data


@dataclass
class TuningConfig:
    """User-facing tuning options (all have defaults that work on a CPU out of the box).

    The field defaults are the one table of tuning defaults (catalogue parameters, engine, exported
    scripts)."""

    max_trials_global: int = 64
    max_trials_per_task: Optional[int] = None
    num_trials_per_iter: int = 16
    cost_model: str = "xgb"
    search_population: int = 512  # TVM's EvolutionarySearch default
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
    user_database: bool = True
    work_dir: str = ""
    op_names: list[str] = field(default_factory=list)
    seed_rules: list[str] = field(default_factory=list)

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
        if cfg.search_population < 2:
            raise bad("search_population", f"must be at least 2, not {cfg.search_population}")
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
        unknown = [r for r in cfg.seed_rules if r not in SEED_RULES]
        if unknown:
            raise bad("seed_rules", f"names unknown rules {unknown}; the app's rules are {list(SEED_RULES)}")
        return cfg

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


#: Builder/runner parameters of every MetaSchedule tuning step (``ParamSpec.from_json`` of each dict).
COMMON_TUNING_PARAMS: list[dict] = [
    tuning_param("work_dir", "str", TuningConfig.work_dir, "Tuning work directory (database + logs). Empty: "
           "'<pipeline name>.tuning' next to the pipeline file, so a re-run reuses it."),
    tuning_param("num_trials_per_iter", "int", TuningConfig.num_trials_per_iter, "Candidates measured per round (smaller rounds stop faster)."),
    tuning_param("cost_model", "choice", TuningConfig.cost_model, "Cost model guiding the search.", list(COST_MODELS)),
    tuning_param("search_population", "int", TuningConfig.search_population, "Candidates the evolutionary search "
           "evolves each round before it picks the ones to measure (TVM's default 512). Smaller: much faster rounds "
           "when a round measures few candidates (a 2-core CPU, a short budget); larger: a wider search per round."),
    tuning_param("runner", "choice", TuningConfig.runner, "Where candidates are measured: this machine or an RPC tracker.",
           list(RUNNERS)),
    tuning_param("rpc_host", "str", TuningConfig.rpc_host, "RPC tracker host (runner = rpc)."),
    tuning_param("rpc_port", "int", TuningConfig.rpc_port, "RPC tracker port (runner = rpc)."),
    tuning_param("rpc_key", "str", TuningConfig.rpc_key, "RPC device key registered with the tracker (runner = rpc)."),
    tuning_param("builder_workers", "int", TuningConfig.builder_workers, "Parallel build processes (0: number of CPU cores)."),
    tuning_param("builder_timeout_s", "float", TuningConfig.builder_timeout_s, "Build time limit per candidate, seconds."),
    tuning_param("retune", "bool", TuningConfig.retune, "Wipe the work directory's database and tune again from scratch."),
    tuning_param("user_database", "bool", TuningConfig.user_database, "Reuse records of the per-user tuning database "
           "(same workload and target: zero trials) and add the new ones to it (off: this work directory only)."),
]

def script_options(params: dict[str, Any], where: str = "tuning step") -> dict[str, Any]:
    """The builder/runner options of a tuning step with ``params``, complete (every default filled in
    from :class:`TuningConfig`): what an exported script passes to ``install_meta_schedule_cpu`` and what
    the engine's builder and runner are made from (``config.to_json()``); without the pass's own
    arguments (:data:`PASS_ARGUMENTS`). Raises :class:`TuningConfigError` on a bad value."""
    options = TuningConfig.from_params(params, where=where).to_json()
    for key in PASS_ARGUMENTS:
        options.pop(key, None)
    return options


@dataclass
class TaskProgress:
    """One tuning task: trials measured so far (this run + reused), best latency in microseconds."""

    name: str
    trials: int = 0
    best_us: Optional[float] = None
    errors: int = 0
    reused: bool = False  # already tuned in the work directory's database; skipped this time
    status: str = "pending"  # pending | tuning | done | skipped | stopped | from user database | not targeted
    source: str = ""  # where its schedule comes from: "tuned" (now), "work dir", "user database", "" (untuned)


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
    focus: Optional[dict] = None  # targeted tuning plan (pipeline_model.passkinds.metaschedule.script.plan_targeted_tuning)
    best: dict = field(default_factory=dict)  # task -> {trace, tir, ...} (best schedule, shortened), at the end
    budget: Optional[dict] = None  # time-budgeted tuning: the rounds (pipeline_model.passkinds.metaschedule.plan)
    user_database: dict = field(default_factory=dict)  # {path, imported: [names], added, problem}
    seeds: Optional[dict] = None  # seed_rules: the app's schedules put into the database (metaschedule.seed)
    #: ``"lookup"`` while a time-budgeted step looks its PrimFuncs up in the work folder and the user database,
    #: before it knows how many trials its rounds get (``total`` is 0 then); ``""`` otherwise.
    phase: str = ""
    #: ``runner = rpc``: per device of the farm (``"host:port"``), ``{"measured", "failed", "requeued"}``.
    devices: dict = field(default_factory=dict)

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
        extra = (" from user database" if task.source == "user database" else " reused") if task.reused else ""
        parts.append(f"{task.name} {task.trials} ({best}{extra})")
    head = f"tuning {progress.done}/{progress.total} trials"
    if progress.phase == "lookup" and not (progress.finished or progress.stopped):
        head = "tuning: looking the PrimFuncs up in the work folder and the user tuning database (no trials yet)"
    elif progress.stopped:
        head += " [stopped]"
    elif progress.finished:
        head += " [done]"
    elif progress.eta_s is not None:
        head += f", ETA {format_eta(progress.eta_s)}"
    if untargeted:
        parts.append(f"{untargeted} not targeted")
    budget = progress.budget if isinstance(progress.budget, dict) else None
    if budget and budget.get("round") and not progress.finished:
        head += f" ({budget['round']})"
    focus = progress.focus if isinstance(progress.focus, dict) else None
    if focus and progress.done == 0 and not progress.finished:  # the plan, once, before the first trial
        chosen = ", ".join(f"{c.get('name')} {float(c.get('share') or 0) * 100:.1f}% -> {c.get('trials')}"
                           for c in focus.get("chosen") or [])
        head += f" (targeted, focus {focus.get('focus')}: {chosen})"
    if progress.devices:  # the RPC farm: what each device measured so far
        head += " (RPC " + ", ".join(f"{device} {counts.get('measured', 0)}"
                                     for device, counts in sorted(progress.devices.items())) + ")"
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
    workload, records = DATABASE_FILES
    return os.path.join(work_dir, workload), os.path.join(work_dir, records)


def has_database(work_dir: str) -> bool:
    """True when ``work_dir`` holds a MetaSchedule JSON database with at least one record."""
    _, records = database_files(work_dir)
    return os.path.isfile(records) and os.path.getsize(records) > 0
