"""The plain-TVM MetaSchedule code that exported scripts contain — and that the engine calls.

Every function and class in :data:`SCRIPT_HELPERS` is copied verbatim (``inspect.getsource``) into an
exported script with a tuning step, after the constants of :data:`SCRIPT_CONSTANTS`; the engine
(:mod:`pipeline_model.passkinds.metaschedule.builder_tvm`, ``tasks_tvm``, ``pass_tvm``) calls the very same
functions, so the two cannot drift:

* the target: :func:`meta_schedule_target` (an llvm target gets ``"num-cores"`` = :func:`tuning_cores`,
  the one core-count rule of tuning) and :func:`load_tensor_intrinsics` (only the CPU intrinsics);
* the builder and runner from the step's options (:func:`tuning_builder` — one pool of build workers kept
  across rounds —, :func:`tuning_runner`, with :func:`meta_schedule_f_build`; in :mod:`.script_measure`, whose
  helpers a script defines first); the engine passes its stop flag, the script makes them once; the options
  are always the complete dict of :meth:`pipeline_model.passkinds.metaschedule.config.TuningConfig.to_json` (one table of defaults: the
  script's copy gets it as a literal), so these functions have no defaults of their own;
* the work-directory manifest (:func:`read_manifest`, :func:`write_manifest`, :class:`track_work_dir`)
  and :func:`wipe_work_dir`, the ``retune`` rule: only files the manifest lists are deleted, never a
  user's file, in the engine and in exported scripts alike;
* the per-user tuning database (:func:`import_user_records` before a task is tuned, :func:`commit_user_records`
  after — never a seed of the app's own schedule, :func:`is_search_record` —, :func:`user_database_problem`
  the safety rule; the folder is
  :func:`pipeline_model.work_dirs.user_tuning_database_dir`);
* :func:`register_tuning_functions` (TVM's global ``tune_tir`` / ``tune_relax`` overridden), used by the
  script's :func:`install_meta_schedule_cpu` and by the engine's session-based overrides;
* targeted tuning (``relax.MetaScheduleTuneTIR`` with ``focus``/``functions``/``schedule_fn``, see
  :mod:`pipeline_model.passkinds.metaschedule.focus`): :func:`choose_tuning_functions`,
  :func:`allocate_trials`, :func:`plan_targeted_tuning`, :func:`load_schedule_fn`, and, in scripts only,
  :func:`profile_prim_funcs` and :func:`targeted_tuning_pass`.

TVM is imported inside the functions only, so this module is TVM-free at import. Keep the helpers free
of other module globals than :data:`SCRIPT_CONSTANTS` and each other.
"""

from pipeline_model.passkinds.metaschedule.script_measure import (  # copied into exported scripts before these
    MEASURE_HELPERS,
    script_tuning_tools,
    search_strategy,
    tuning_cores,
)
from pipeline_model.passkinds.metaschedule.script_records import (  # copied into exported scripts before these
    RECORD_HELPERS,
    TuningConfigError,
    check_database_folder,
    checked_memory_database,
    records_constants_source,
    trace_problem,
    unloadable_records,
)
from pipeline_model.scriptlib.files import replace_file  # every exported script holds scriptlib/files.py
from pipeline_model.work_dirs import user_tuning_database_dir  # copied into exported tuning scripts

#: Name of the small state file kept in a work directory (which tasks finished tuning).
STATE_FILE = "rps_tuning_state.json"
#: MetaSchedule's JSON database files in a work directory (workloads, tuning records).
DATABASE_FILES = ("database_workload.json", "database_tuning_record.json")
#: The manifest of files the app (or an exported script) wrote into a tuning work directory.
MANIFEST_FILE = "rps_manifest.json"
MANIFEST_FORMAT = "relax-pipeline-studio.tuning-manifest"
#: Largest manifest read, in bytes.
MANIFEST_MAX_BYTES = 16 * 1024 * 1024
#: Folders of a work directory the tracker looks into (MetaSchedule writes its task logs to ``logs/``).
TRACKED_DIRS = ("", "logs")


# ---- target ------------------------------------------------------------------------------------
def meta_schedule_target(target):
    """``target`` (a Target, dict or JSON/kind string) as a ``tvm.target.Target`` fit for MetaSchedule:
    an llvm target without ``"num-cores"`` gets :func:`tuning_cores` (MetaSchedule refuses an
    llvm target without it)."""
    import json

    from tvm.target import Target

    if isinstance(target, Target):
        if target.kind.name != "llvm" or "num-cores" in (target.attrs or {}):
            return target
        config = {k: v for k, v in dict(target.export()).items() if k in ("kind", "mtriple", "mcpu", "mattr", "mabi")}
    elif isinstance(target, str):
        config = json.loads(target) if target.strip().startswith("{") else {"kind": target}
    else:
        config = dict(target)
    if config.get("kind") == "llvm" and "num-cores" not in config:
        config["num-cores"] = tuning_cores()
    return Target(config)


def load_tensor_intrinsics(target):
    """Register the tensor intrinsics MetaSchedule needs for ``target``, quickly.

    MetaSchedule's ``TuneContext`` runs ``import tvm.s_tir.tensor_intrin``, whose CUDA part alone takes
    about a minute. For a CPU (llvm) target only the CPU intrinsics are loaded: the package is entered in
    ``sys.modules`` without running its ``__init__``, then its CPU submodules are imported (Hexagon's only
    for a Hexagon triple; never ROCm's, which serve the ``rocm`` target kind: the two took ~5 s of every
    tuning process's start); any other target loads the whole package as TVM does.
    """
    import importlib
    import importlib.util
    import sys

    name = "tvm.s_tir.tensor_intrin"
    if target.kind.name != "llvm":
        importlib.import_module(name)
        return
    if name not in sys.modules:
        spec = importlib.util.find_spec(name)
        if spec is None:
            return
        package = importlib.util.module_from_spec(spec)
        sys.modules[name] = package
        import tvm.s_tir as s_tir_package

        setattr(s_tir_package, "tensor_intrin", package)
    subs = ["dot_product_common", "x86", "arm_cpu", "riscv_cpu"] + (["hexagon"] if "hexagon" in str(target) else [])
    for sub in subs:
        importlib.import_module(f"{name}.{sub}")


# ---- the work directory's manifest and re-tune -----------------------------------------------------
def manifest_entry_path(work_dir, rel):
    """The absolute path of manifest entry ``rel`` when it stays inside ``work_dir`` (no ``..``, no
    absolute path, no symlink leading out), else ``None``."""
    import os

    if not rel or os.path.isabs(rel) or any(part == ".." for part in rel.replace("\\", "/").split("/")):
        return None
    root = os.path.realpath(work_dir)
    full = os.path.join(root, rel)
    if not os.path.realpath(full).startswith(root + os.sep):
        return None
    return full


def read_manifest(work_dir):
    """Relative paths of the files the app wrote into ``work_dir`` ([] when there is no manifest, or
    it is not a regular file of at most :data:`MANIFEST_MAX_BYTES` holding the manifest's JSON)."""
    import json
    import os
    import stat

    path = os.path.join(work_dir, MANIFEST_FILE)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return []
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return []
        with os.fdopen(os.dup(fd), "rb") as fh:
            raw = fh.read(MANIFEST_MAX_BYTES + 1)
        data = json.loads(raw.decode("utf-8")) if len(raw) <= MANIFEST_MAX_BYTES else None
    except (OSError, ValueError, RecursionError):
        return []
    finally:
        os.close(fd)
    files = data.get("files") if isinstance(data, dict) and data.get("format") == MANIFEST_FORMAT else None
    return sorted({str(f) for f in files if isinstance(f, str)}) if isinstance(files, list) else []


def write_manifest(work_dir, files):
    """Write the manifest atomically (``replace_file`` of scriptlib/files.py, which exported scripts carry
    too): a temporary file of the app's own naming (``.rps_manifest.*.rps-tmp``, mode 0600), fsynced, then
    renamed; on failure the temporary file is removed."""
    import json
    import os

    os.makedirs(work_dir, exist_ok=True)
    data = {"format": MANIFEST_FORMAT, "version": 1, "files": sorted(set(files))}
    replace_file(os.path.join(os.path.abspath(work_dir), MANIFEST_FILE),
                 json.dumps(data, indent=1, ensure_ascii=False).encode("utf-8"),
                 prefix=".rps_manifest.", suffix=".rps-tmp", mode=0o600)


def work_dir_files(work_dir):
    """Relative paths of the regular files in ``work_dir`` and its ``logs/`` folder."""
    import os

    found = set()
    for sub in TRACKED_DIRS:
        folder = os.path.join(work_dir, sub) if sub else work_dir
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            full = os.path.join(folder, name)
            if os.path.isfile(full) and not os.path.islink(full):
                found.add(f"{sub}/{name}" if sub else name)
    return found


class track_work_dir:  # noqa: N801 - used as a context manager, like a function
    """Context manager around tuning in ``work_dir``: files that appear there (and in ``logs/``)
    while it is open are added to the manifest, so re-tune can remove exactly those."""

    def __init__(self, work_dir):
        self.work_dir = work_dir
        self.foreign = set()

    def __enter__(self):
        import os

        os.makedirs(self.work_dir, exist_ok=True)
        # Files there now that the manifest does not list are the user's: never claimed.
        self.foreign = work_dir_files(self.work_dir) - set(read_manifest(self.work_dir))
        return self

    def __exit__(self, *exc):
        owned = work_dir_files(self.work_dir) - self.foreign - {MANIFEST_FILE}
        listed = set(read_manifest(self.work_dir))
        if owned - listed:
            write_manifest(self.work_dir, sorted(listed | owned))


def wipe_work_dir(work_dir):
    """Re-tune: delete the files the app wrote into ``work_dir`` (those its manifest lists), nothing else.

    Files the app did not write stay, in ``logs/`` too. When a MetaSchedule database file that the app
    did not write remains, :class:`TuningConfigError` says so (re-tuning would reuse its records)."""
    import os

    listed = read_manifest(work_dir)
    kept = []
    for rel in listed:
        full = manifest_entry_path(work_dir, rel)
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
    foreign = [p for p in (*DATABASE_FILES, STATE_FILE) if os.path.exists(os.path.join(work_dir, p))]
    if foreign:
        raise TuningConfigError(
            f"re-tune: {', '.join(foreign)} in {work_dir} was not written by this app "
            "(it is not in the work directory's manifest), so it is not deleted; remove it yourself or choose "
            "another work_dir")


# ---- the per-user tuning database ------------------------------------------------------------------
# Records reused across pipelines and models by workload. Where it lives: work_dirs.user_tuning_database_dir.
# Before a task is tuned, import_user_records looks its workload up there (same structure, same target):
# found, its best records are copied into the step's work-directory database and the task gets zero trials.
# After tuning, commit_user_records adds each tuned task's best records. Never written through a symlink;
# a database file the app did not create (not in the folder's manifest) is read, never written to.
#: Best records per workload copied in either direction.
USER_DB_TOP_K = 3
#: The lock file of the user database folder.
USER_DB_LOCK = ".rps_lock"


def user_database_problem(db_dir, write):
    """``None`` when ``db_dir`` may be read (``write``: and appended to), else a sentence saying why not:
    a symlinked folder or database file, a file that is not a regular file, or (for writing) a database
    file the app did not create."""
    import os

    if not db_dir:
        return "the user tuning database is off"
    if os.path.islink(db_dir.rstrip(os.sep)):
        return f"{db_dir} is a symlink; the user tuning database is not used through it"
    if os.path.exists(db_dir) and not os.path.isdir(db_dir):
        return f"{db_dir} is not a folder"
    listed = set(read_manifest(db_dir)) if write else set()
    for name in (*DATABASE_FILES, USER_DB_LOCK):
        full = os.path.join(db_dir, name)
        if os.path.islink(full):
            return f"{full} is a symlink; the user tuning database is not used through it"
        if os.path.exists(full) and not os.path.isfile(full):
            return f"{full} is not a regular file"
        if write and os.path.exists(full) and name not in listed:
            return f"{full} was not created by this app (not in the folder's manifest); it is not written to"
    return None


def is_search_record(record):
    """True when a tuning record came from MetaSchedule's search: every candidate it measures enters the
    post-processors (an ``EnterPostproc`` instruction in its trace); a seed of the app's own schedule
    (the seeding of ``seed_rules``) never does."""
    return any(inst.kind.name == "EnterPostproc" for inst in record.trace.insts)


def _replays(trace, mod):
    """Whether the whole of ``trace``, its post-processing part included, applies to a fresh schedule of ``mod``, as
    MetaSchedule's JSON database replays every record when it loads (one that raises there stops the database from
    loading and the whole tuning run with ``parallel_for_dynamic error``). The part after ``EnterPostproc`` names
    blocks too (``DecomposeReduction`` of ``lv67_red``), and blocks are named after Relax variables: a workload
    structurally equal to the record's may call it ``lv99_red``."""
    import tvm

    try:
        trace.apply_to_schedule(tvm.s_tir.Schedule(mod), remove_postproc=False)
    except Exception:  # noqa: BLE001 - a record that does not replay on this workload is not imported
        return False
    return True


def check_work_database(work_dir, warn=print):
    """The lines of the tuning work folder ``work_dir``'s database checked before TVM reads it
    (``check_database_folder``: ``warn`` gets each line removed from the app's own files); a bad line in a file the
    app did not write raises :class:`TuningConfigError` naming the file and the line."""
    _removed, refusal = check_database_folder(str(work_dir), warn, read_manifest(str(work_dir)))
    if refusal:
        raise TuningConfigError(refusal)


def open_work_database(work_dir, warn=print):
    """MetaSchedule's JSON database of the tuning work folder ``work_dir`` (created when missing), its lines checked
    first (:func:`check_database_folder`: ``warn`` gets one sentence per line removed from the app's files; a bad
    line in a file the app did not write raises :class:`TuningConfigError`). One that does not load raises
    :class:`TuningConfigError` naming the file, the line and what to do (MetaSchedule's own error is
    ``parallel_for_dynamic error with (not rendered)``): an earlier version of the app could copy a record from
    the user database onto a workload it only looks like (``_replays``)."""
    import os

    from tvm.s_tir import meta_schedule as ms

    check_work_database(work_dir, warn)
    try:
        return ms.database.JSONDatabase(work_dir=str(work_dir), module_equality="structural")
    except Exception as exc:  # noqa: BLE001 - said with the file and the line
        try:
            bad = unloadable_records(str(work_dir))
        except OSError:
            bad = []
        if not bad:
            raise
        path = os.path.join(str(work_dir), "database_tuning_record.json")
        lines = "; ".join(f"line {n}: {why}" for n, why in bad)
        raise TuningConfigError(
            f"the tuning database {path} does not load ({lines}). Turn on 'retune' for this step to start the "
            "work folder afresh (only the files the app wrote there are removed), or delete that line") from exc


def held_traces(database, mods):
    """The JSON of every trace ``database`` holds for the workloads ``mods`` (taken before tuning: what the user
    database must not receive from this run, :func:`commit_user_records`)."""
    held = set()
    for mod in mods:
        if database.has_workload(mod):
            held.update(str(r.trace.as_json()) for r in database.get_top_k(database.commit_workload(mod), 1 << 20))
    return held


def check_work_dir(work_dir):
    """Exported scripts only: check the work folder's database before TVM reads it (``check_database_folder``:
    bad lines of the files the script or the app wrote are removed, each printed); one the script may not
    change ends the script with that one line (a ``SystemExit``, no traceback)."""
    import os

    if not any(os.path.exists(os.path.join(str(work_dir), name)) for name in DATABASE_FILES):
        return
    _removed, refusal = check_database_folder(str(work_dir), lambda text: print("warning: " + text),
                                              read_manifest(str(work_dir)))
    if refusal:
        raise SystemExit("error: " + refusal)


def _user_db_records(database, mod, target, top_k, known=()):
    """The valid records of workload ``mod`` for ``target`` in ``database``, best first (at most ``top_k``);
    never a seed of the app's own schedule (:func:`is_search_record`: the user database holds tuned results),
    never a trace the allow-list refuses (``trace_problem``), that does not replay on ``mod`` (:func:`_replays`)
    or whose JSON is in ``known`` (records the database held before this run measured its own)."""
    if not database.has_workload(mod):
        return []
    import json

    def key(tgt):  # the same target whatever the order of its JSON keys
        return json.dumps(json.loads(str(tgt)), sort_keys=True)

    workload = database.commit_workload(mod)
    wanted = key(target)
    out = []
    for rec in database.get_top_k(workload, 1 << 20):
        if rec.target is None or key(rec.target) != wanted or not rec.run_secs or not is_search_record(rec):
            continue
        secs = [float(x) for x in rec.run_secs]
        if sum(secs) / len(secs) >= 1e9 or trace_problem(rec.trace) or not _replays(rec.trace, mod):
            continue
        if known and str(rec.trace.as_json()) in known:
            continue
        out.append(rec)
        if len(out) >= int(top_k):
            break
    return out


def _copy_records(records, database, mod):
    """Commit ``records`` (of another database) into ``database`` under workload ``mod``, skipping traces
    it already holds and traces that do not replay on the workload it keeps (:func:`_replays`); returns how many
    were added."""
    from tvm.s_tir.meta_schedule.database import TuningRecord

    workload = database.commit_workload(mod)
    have = {str(r.trace.as_json()) for r in database.get_top_k(workload, 1 << 20)}
    added = 0
    for rec in records:
        # A trace names blocks; filed under a workload it does not replay on, it makes the database fail to load
        # ("parallel_for_dynamic error") for every later run (seen: a Llama tuned after the other bench models
        # was handed records naming "lv67_red" for its "lv99_red").
        if str(rec.trace.as_json()) in have or trace_problem(rec.trace) or not _replays(rec.trace, workload.mod):
            continue
        database.commit_tuning_record(TuningRecord(rec.trace, workload, rec.run_secs, rec.target, rec.args_info))
        added += 1
    return added


def open_user_database(db_dir, warn=print):
    """The user tuning database in ``db_dir``, read once while its files stay the same (opening it parses every
    record: 1.7 s for the ~600 records the full bench leaves, and a step looks each of its PrimFuncs up in it — a
    38-function Llama spent most of a minute of its tuning budget re-reading it). Read with limits and the
    allow-list into memory (``checked_memory_database``): ``warn`` gets one sentence per line skipped, the other
    records are kept; TVM never parses the files themselves. Raises ``OSError`` for a file that is not regular."""
    import os

    stamp = tuple((st.st_mtime_ns, st.st_size, st.st_ino)
                  for st in (os.stat(os.path.join(db_dir, name)) for name in DATABASE_FILES))
    cache = open_user_database.__dict__.setdefault("cache", {})
    held = cache.get(db_dir)
    if held is not None and held[0] == stamp:
        return held[1]
    user = checked_memory_database(db_dir, warn)
    cache.clear()  # one user database at a time
    cache[db_dir] = (stamp, user)
    return user


def import_user_records(db_dir, database, mod, target, warn=print):
    """Copy the user database's best records of workload ``mod`` (a one-PrimFunc module, as MetaSchedule
    tunes it) for ``target`` into ``database`` (the work directory's); returns how many records it has for
    it (0: not there, or the user database is off or refused — then nothing is read). ``warn``: lines of the
    user database skipped when it is read (:func:`open_user_database`)."""
    import os

    if not db_dir or user_database_problem(db_dir, False) is not None:
        return 0
    if not os.path.isfile(os.path.join(db_dir, DATABASE_FILES[1])):
        return 0
    try:
        user = open_user_database(db_dir, warn)
        records = _user_db_records(user, mod, target, USER_DB_TOP_K)
    except Exception:  # noqa: BLE001 - a damaged user database is not used; the task is tuned instead
        return 0
    if records:
        _copy_records(records, database, mod)
    return len(records)


def commit_user_records(db_dir, database, mods, target, known=(), warn=print):
    """Add ``database``'s best records (:data:`USER_DB_TOP_K`) of each module in ``mods`` for ``target`` to
    the user database (created when missing; files recorded in its manifest) — only records this run measured:
    never one whose trace JSON is in ``known`` (what the work folder held before tuning: records a pipeline
    folder brought, records copied in from the user database). Its lines are checked first
    (``check_database_folder``; ``warn`` gets the lines removed). Returns ``(added, problem)``: records added and,
    when the folder is refused, why (nothing written then)."""
    import fcntl
    import os

    from tvm.s_tir import meta_schedule as ms

    problem = user_database_problem(db_dir, True)
    if problem is not None:
        return 0, problem
    picked = [(m, _user_db_records(database, m, target, USER_DB_TOP_K, set(known))) for m in mods]
    picked = [(m, r) for m, r in picked if r]
    if not picked:
        return 0, None
    os.makedirs(db_dir, exist_ok=True)
    added = 0
    with track_work_dir(db_dir):  # the files it creates go into the manifest
        lock = os.open(os.path.join(db_dir, USER_DB_LOCK), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            _removed, refusal = check_database_folder(db_dir, warn, read_manifest(db_dir))
            if refusal:
                return 0, refusal
            user = ms.database.JSONDatabase(work_dir=db_dir, module_equality="structural")
            for mod, records in picked:
                added += _copy_records(records, user, mod)
        except Exception as exc:  # noqa: BLE001 - a damaged user database never fails the tuning step
            return added, f"the user tuning database in {db_dir} could not be updated: {str(exc).splitlines()[0][:200]}"
        finally:
            os.close(lock)
    return added, None


# ---- TVM's tune_tir / tune_relax -------------------------------------------------------------------
def register_tuning_functions(tune_tir, tune_relax):
    """Register ``tune_tir`` / ``tune_relax`` as TVM's global ``tvm.s_tir.meta_schedule.tune_tir`` /
    ``tune_relax``, which the stock ``MetaScheduleTuneTIR`` / ``MetaScheduleTuneIRMod`` passes call (the
    stock functions are registered first, so these stay)."""
    import tvm.s_tir.meta_schedule.relax_integration  # noqa: F401 - registers the stock functions first
    import tvm.s_tir.meta_schedule.tir_integration  # noqa: F401
    import tvm_ffi

    tvm_ffi.register_global_func("tvm.s_tir.meta_schedule.tune_tir", tune_tir, override=True)
    tvm_ffi.register_global_func("tvm.s_tir.meta_schedule.tune_relax", tune_relax, override=True)


def search_space_problem(mod, target, space="post-order-apply"):
    """None when MetaSchedule makes a search space for ``mod``, else its error's last line (``app.Winograd``'s)."""
    from tvm.s_tir.meta_schedule import TuneContext
    try:
        TuneContext(mod=mod, target=target, space_generator=space, task_name="probe").generate_design_space()
    except Exception as exc:  # noqa: BLE001 - what MetaSchedule says is the answer
        return (str(exc).strip().splitlines() or [type(exc).__name__])[-1]
    return None


def install_meta_schedule_cpu(work_dir, options):
    """Make TVM's own ``MetaScheduleTuneTIR`` / ``MetaScheduleTuneIRMod`` passes measure real candidates
    (exported scripts; the engine registers its own session-based functions, built from the same helpers).

    Those passes call the global functions ``tvm.s_tir.meta_schedule.tune_tir`` / ``tune_relax``, whose
    stock settings measure nothing on a CPU (every candidate hits the builder timeout). This overrides
    them (:func:`register_tuning_functions`) with functions that tune with: a target with ``"num-cores"``
    (:func:`meta_schedule_target`), only the CPU tensor intrinsics (:func:`load_tensor_intrinsics`), the
    builder and runner of :func:`tuning_builder` / :func:`tuning_runner`, and record the files they write
    in the work directory's manifest (:class:`track_work_dir`). ``options`` are the step's tuning options
    (``num_trials_per_iter``, ``cost_model``, ``runner``, ``rpc_host`` ... ``retune``, all of them). With
    ``retune`` the files the manifest lists are deleted first (:func:`wipe_work_dir`; a user's files stay).
    Returns the ``tune_tir`` function; a targeted step sets its ``choose`` attribute to a function
    ``mod -> (trials, space) | None`` (None: leave that PrimFunc untuned; ``space``: a MetaSchedule space
    generator such as ``ms.space_generator.ScheduleFn``).
    """
    from tvm.s_tir.meta_schedule import relax_integration, tir_integration
    from tvm.s_tir.meta_schedule.tune_context import _normalize_mod

    if options["retune"]:
        try:
            wipe_work_dir(str(work_dir))
        except TuningConfigError as exc:  # a database the script did not write: one line, no traceback
            raise SystemExit(f"error: {exc}") from None
    check_work_dir(work_dir)
    per_iter = int(options["num_trials_per_iter"])
    population = int(options["search_population"])
    cost_model = str(options["cost_model"])
    seed = options["seed"]
    user_db = user_tuning_database_dir() if options["user_database"] else ""

    def tune_tir(mod, target, work_dir, max_trials_global, *_args, space="post-order-apply", **_kwargs):
        choose = getattr(tune_tir, "choose", None)  # set by a targeted step: (trials, space) or None per PrimFunc
        if choose is not None:
            picked = choose(mod)
            if picked is None:
                return mod
            max_trials_global, space = picked
        target = meta_schedule_target(target)
        load_tensor_intrinsics(target)
        builder, runner = script_tuning_tools(options)  # one set of worker processes for every PrimFunc
        task = _normalize_mod(mod)
        shared = user_db if space == "post-order-apply" else ""  # a user's own search space stays apart
        with track_work_dir(str(work_dir)):
            database = open_work_database(work_dir)
            if shared and not options["retune"] and import_user_records(shared, database, task, target):
                print("from the user tuning database (no trials): " + str(mod.get_global_vars()[0].name_hint))
                return mod
            known = held_traces(database, [task])
            try:
                tir_integration.tune_tir(
                    mod, target, str(work_dir), int(max_trials_global), num_trials_per_iter=per_iter,
                    builder=builder, runner=runner, cost_model=cost_model, task_scheduler="round-robin", seed=seed,
                    strategy=search_strategy(getattr(tune_tir, "population", None) or population),  # a round's own
                    space=space, database=database,
                )
            except Exception:  # MetaSchedule's own space only: a user's schedule_fn failing is the user's error
                if space != "post-order-apply" or (problem := search_space_problem(task, target, space)) is None:
                    raise
                print(f"not tuned: {mod.get_global_vars()[0].name_hint}: MetaSchedule has no search space for it "
                      f"({problem}); its default schedule stays")
                return mod
        if shared:
            commit_user_records(shared, database, [task], target, known)
        return mod

    def tune_relax(mod, params, target, work_dir, max_trials_global, max_trials_per_task=None, op_names=None,
                   *_args, **_kwargs):
        target = meta_schedule_target(target)
        load_tensor_intrinsics(target)
        builder, runner = script_tuning_tools(options)
        with track_work_dir(str(work_dir)):
            relax_integration.tune_relax(
                mod, dict(params.items()) if params else {}, target, str(work_dir), int(max_trials_global),
                int(max_trials_per_task) if max_trials_per_task else None, list(op_names) if op_names else None,
                num_trials_per_iter=per_iter, builder=builder, runner=runner,
                cost_model=cost_model, seed=seed, strategy=search_strategy(population),
            )
        return mod

    register_tuning_functions(tune_tir, tune_relax)
    return tune_tir


# ---- targeted tuning -----------------------------------------------------------------------------
def choose_tuning_functions(entries, prim_funcs, focus="all", top_k=3, min_share=0.1, functions=()):
    """The PrimFuncs to tune, as ``[(name, share, total_us)]`` sorted by measured time (largest first).

    ``entries``: a profile's entries (dicts with ``name``, ``total_us``, ``share``; PrimFuncs not in it
    count as 0); ``prim_funcs``: the PrimFunc names of the module. ``focus`` ``"top_k"`` takes the
    ``top_k`` largest, ``"share"`` those with ``share >= min_share``, ``"all"`` every PrimFunc unless
    ``functions`` (names picked by hand, always included) are given. A hand-picked name that is not a
    PrimFunc of the module raises ``ValueError`` listing the names there are.
    """
    names = list(prim_funcs)
    known = set(names)
    missing = [f for f in functions if f not in known]
    if missing:
        raise ValueError(f"functions {missing} are not PrimFuncs of the module; it has: {', '.join(sorted(names))}")
    measured = {}
    for e in entries or []:
        if e.get("name") in known:
            measured[e["name"]] = (float(e.get("share") or 0.0), float(e.get("total_us") or 0.0))
    ranked = sorted(names, key=lambda n: (-measured.get(n, (0.0, 0.0))[1], n))
    if focus == "top_k":
        picked = [n for n in ranked if n in measured][: int(top_k)]
    elif focus == "share":
        picked = [n for n in ranked if measured.get(n, (0.0, 0.0))[0] >= float(min_share)]
    else:
        picked = [] if functions else list(ranked)
    picked += [f for f in functions if f not in picked]
    picked.sort(key=lambda n: (-measured.get(n, (0.0, 0.0))[1], n))
    return [(n, measured.get(n, (0.0, 0.0))[0], measured.get(n, (0.0, 0.0))[1]) for n in picked]


def allocate_trials(chosen, total, minimum=1):
    """Split ``total`` trials over ``chosen`` = ``[(name, share, ...)]`` in proportion to the shares
    (equal split when no share is known), at least ``minimum`` each; the largest remainders get the
    leftover trials, and trials given to lift a function to the minimum come from the others, so the
    sum is ``total`` unless the minimums alone exceed it. Returns
    ``{name: trials}``."""
    if not chosen:
        return {}
    shares = [max(0.0, float(c[1])) for c in chosen]
    weight = sum(shares)
    if weight <= 0:
        shares, weight = [1.0] * len(chosen), float(len(chosen))
    raw = [total * s / weight for s in shares]
    alloc = [max(int(minimum), int(r)) for r in raw]
    while sum(alloc) > int(total):  # minimums raised some: take the excess from the largest above it
        above = [i for i in range(len(alloc)) if alloc[i] > int(minimum)]
        if not above:
            break
        alloc[max(above, key=lambda i: (alloc[i] - raw[i], alloc[i], -i))] -= 1
    left = int(total) - sum(alloc)
    order = sorted(range(len(chosen)), key=lambda i: (-(raw[i] - int(raw[i])), -shares[i], i))
    i = 0
    while left > 0 and order:
        alloc[order[i % len(order)]] += 1
        left -= 1
        i += 1
    return {c[0]: a for c, a in zip(chosen, alloc)}


def plan_targeted_tuning(entries, prim_funcs, settings, max_trials_global):
    """The plan of a targeted tuning step: ``{focus, budget, chosen: [{name, share, total_us, trials}],
    skipped: [names]}`` (uses :func:`choose_tuning_functions` and :func:`allocate_trials`).
    ``settings``: ``focus, top_k, min_share, functions, total_trials, min_trials``."""
    chosen = choose_tuning_functions(entries, prim_funcs, settings["focus"], settings["top_k"],
                                     settings["min_share"], settings["functions"])
    budget = int(settings["total_trials"]) or int(max_trials_global) * len(chosen)
    alloc = allocate_trials(chosen, budget, settings["min_trials"])
    names = {c[0] for c in chosen}
    return {
        "focus": settings["focus"], "budget": budget,
        "chosen": [{"name": n, "share": round(s, 4), "total_us": round(t, 3), "trials": alloc[n]}
                   for n, s, t in chosen],
        "skipped": sorted(n for n in prim_funcs if n not in names),
    }


def load_schedule_fn(source, label):
    """The schedule function a ``schedule_fn`` source defines: ``schedule`` if defined, else the last
    function the source defines. The source is compiled under ``label`` so errors name its lines."""
    import builtins
    import linecache

    code = compile(source, label, "exec")
    linecache.cache[label] = (len(source), None, source.splitlines(True), label)
    namespace = {"__name__": "schedule_fn", "__builtins__": builtins, "__file__": label}
    exec(code, namespace)  # noqa: S102 - trusted user code, by explicit consent
    funcs = [v for k, v in namespace.items() if callable(v) and getattr(getattr(v, "__code__", None), "co_filename", "") == label
             and not k.startswith("_")]
    func = namespace.get("schedule") if callable(namespace.get("schedule")) else (funcs[-1] if funcs else None)
    if func is None:
        raise ValueError(f"{label} defines no schedule function: define schedule(sch) taking a tvm.s_tir.Schedule")
    return func


def profile_prim_funcs(mod, target):
    """Exported scripts only: build ``mod`` for ``target``, run its entry on the script's seeded inputs
    (``entry_function`` / ``make_arguments`` of the script) and time every call with the VM's
    instrument (as the engine's profile does); returns ``[{name, total_us, share}]``, largest first."""
    import time

    import tvm
    from tvm import relax

    ex = tvm.compile(mod, target=target)
    dev = tvm.cpu(0) if target.kind.name in ("llvm", "c") else tvm.device(target.kind.name, 0)
    vm = relax.VirtualMachine(ex, dev)
    entry = entry_function(mod)  # noqa: F821 - defined by the exported script
    arrays, _described = make_arguments(mod, entry, None)  # noqa: F821 - defined by the exported script
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    vm[entry](*args)
    prims = {gv.name_hint for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    runs, stack = [], []

    def instrument(func, symbol, before, ret, *call_args):
        dev.sync()
        if before:
            stack.append((str(symbol), time.perf_counter()))
        elif stack:
            name, t0 = stack.pop()
            runs[-1][name] = runs[-1].get(name, 0.0) + (time.perf_counter() - t0) * 1e6
        return 0

    vm.set_instrument(instrument)
    try:
        for _ in range(5):
            runs.append({})
            vm[entry](*args)
    finally:
        vm.set_instrument(None)
    names = sorted({n for run in runs for n in run})
    totals = {n: sorted(run.get(n, 0.0) for run in runs)[len(runs) // 2] for n in names}
    grand = sum(totals.values()) or 1.0
    return [{"name": n, "total_us": totals[n], "share": totals[n] / grand, "prim_func": n in prims}
            for n in sorted(names, key=lambda n: -totals[n])]


def targeted_tuning_pass(tune_tir, work_dir, settings, max_trials_global, schedule_source="", label="<schedule_fn>"):
    """Exported scripts only: a module pass tuning the chosen PrimFuncs of its input, each with its
    share of the budget (:func:`plan_targeted_tuning` on :func:`profile_prim_funcs`), through the stock
    ``MetaScheduleTuneTIR`` with ``tune_tir`` (from ``install_meta_schedule_cpu``) and, with
    ``schedule_source``, the user's ``ScheduleFn`` as the search space. Prints the plan."""
    import tvm
    import tvm_ffi
    from tvm import relax
    from tvm.s_tir import meta_schedule as ms

    @tvm.transform.module_pass(opt_level=0, name="TargetedTuneTIR")
    def targeted(mod, _ctx):
        prims = {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
        hand = list(settings.get("functions") or [])
        profile_needed = settings.get("focus", "all") != "all" or len(hand) != 1
        target = tvm.target.Target.current()
        entries = profile_prim_funcs(mod, target) if profile_needed and len(prims) > 1 else []
        plan = plan_targeted_tuning(entries, list(prims), settings, max_trials_global)
        for c in plan["chosen"]:
            print(f"tuning {c['name']}: {c['share'] * 100:.1f} % of the time, {c['trials']} trials")
        if plan["skipped"]:
            print("not tuned: " + ", ".join(plan["skipped"]))
        trials = {c["name"]: c["trials"] for c in plan["chosen"]}
        by_body = {tvm_ffi.structural_hash(f.body): n for n, f in prims.items()}
        space = ms.space_generator.ScheduleFn(load_schedule_fn(schedule_source, label)) if schedule_source.strip() \
            else "post-order-apply"

        def choose(one):
            func = list(one.functions.values())[0] if hasattr(one, "functions") else one
            name = by_body.get(tvm_ffi.structural_hash(func.body))
            return (trials[name], space) if trials.get(name) else None

        tune_tir.choose = choose  # the registered tune_tir asks it for each PrimFunc
        try:
            relax.transform.MetaScheduleTuneTIR(work_dir=work_dir, max_trials_global=1)(mod)
        finally:
            tune_tir.choose = None
        return mod

    return targeted



#: Module constants the helpers use (written into a script before them).
SCRIPT_CONSTANTS = ("STATE_FILE", "DATABASE_FILES", "MANIFEST_FILE", "MANIFEST_FORMAT", "MANIFEST_MAX_BYTES",
                    "TRACKED_DIRS", "USER_DB_TOP_K", "USER_DB_LOCK")
#: Helpers an exported script with a MetaSchedule tuning step needs (in this order).
SCRIPT_HELPERS = (*MEASURE_HELPERS, *RECORD_HELPERS, meta_schedule_target, load_tensor_intrinsics,
                  manifest_entry_path, read_manifest,
                  write_manifest, work_dir_files, track_work_dir, wipe_work_dir, user_tuning_database_dir,
                  user_database_problem, is_search_record, _replays, check_work_database, open_work_database,
                  held_traces, check_work_dir, _user_db_records, _copy_records, open_user_database,
                  import_user_records, commit_user_records, register_tuning_functions, search_space_problem,
                  install_meta_schedule_cpu)
#: Helpers a targeted ``MetaScheduleTuneTIR`` step needs besides :data:`SCRIPT_HELPERS` (in this order).
TARGETED_HELPERS = (choose_tuning_functions, allocate_trials, plan_targeted_tuning, load_schedule_fn,
                    profile_prim_funcs, targeted_tuning_pass)


def constants_source():
    """The assignments of :data:`SCRIPT_CONSTANTS` and of the record limits and allow-list (``RECORD_CONSTANTS``
    of :mod:`.script_records`), for an exported script."""
    return "".join(f"{name} = {globals()[name]!r}\n" for name in SCRIPT_CONSTANTS) + records_constants_source()
