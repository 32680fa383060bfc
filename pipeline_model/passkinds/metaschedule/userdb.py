"""The per-user tuning database: records reused across pipelines and models by workload (TVM imported
inside the functions only; the functions of :data:`USER_DB_HELPERS` are copied verbatim into exported
scripts, and the engine calls the same ones).

Where it lives is the one rule of :func:`pipeline_model.work_dirs.user_tuning_database_dir`. Before a task
is tuned, :func:`import_user_records` looks its workload up there (same structure, same target): found,
its best records are copied into the step's work-directory database and the task gets zero trials (the
apply step then uses them). After tuning, :func:`commit_user_records` adds each tuned task's best records.

Safety (the app's rule for files it writes): the folder and its database files are never written through
a symlink, and a database file the app did not create (not in the folder's manifest, see
:func:`~pipeline_model.passkinds.metaschedule.script.track_work_dir`) is read but never written to;
:func:`user_database_problem` says why a folder is refused. Writers hold an ``flock`` on ``.rps_lock``.
"""

from pipeline_model.passkinds.metaschedule.script import DATABASE_FILES, read_manifest, track_work_dir

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


def _user_db_records(database, mod, target, top_k):
    """The valid records of workload ``mod`` for ``target`` in ``database``, best first (at most ``top_k``)."""
    if not database.has_workload(mod):
        return []
    import json

    def key(tgt):  # the same target whatever the order of its JSON keys
        return json.dumps(json.loads(str(tgt)), sort_keys=True)

    workload = database.commit_workload(mod)
    wanted = key(target)
    out = []
    for rec in database.get_top_k(workload, 1 << 20):
        if rec.target is None or key(rec.target) != wanted or not rec.run_secs:
            continue
        secs = [float(x) for x in rec.run_secs]
        if sum(secs) / len(secs) >= 1e9:
            continue
        out.append(rec)
        if len(out) >= int(top_k):
            break
    return out


def _copy_records(records, database, mod):
    """Commit ``records`` (of another database) into ``database`` under workload ``mod``, skipping traces
    it already holds; returns how many were added."""
    from tvm.s_tir.meta_schedule.database import TuningRecord

    workload = database.commit_workload(mod)
    have = {str(r.trace.as_json()) for r in database.get_top_k(workload, 1 << 20)}
    added = 0
    for rec in records:
        if str(rec.trace.as_json()) in have:
            continue
        database.commit_tuning_record(TuningRecord(rec.trace, workload, rec.run_secs, rec.target, rec.args_info))
        added += 1
    return added


def import_user_records(db_dir, database, mod, target):
    """Copy the user database's best records of workload ``mod`` (a one-PrimFunc module, as MetaSchedule
    tunes it) for ``target`` into ``database`` (the work directory's); returns how many records it has for
    it (0: not there, or the user database is off or refused — then nothing is read)."""
    import os

    from tvm.s_tir import meta_schedule as ms

    if not db_dir or user_database_problem(db_dir, False) is not None:
        return 0
    if not os.path.isfile(os.path.join(db_dir, DATABASE_FILES[1])):
        return 0
    user = ms.database.JSONDatabase(work_dir=db_dir, module_equality="structural", allow_missing=False)
    records = _user_db_records(user, mod, target, USER_DB_TOP_K)
    if records:
        _copy_records(records, database, mod)
    return len(records)


def commit_user_records(db_dir, database, mods, target):
    """Add ``database``'s best records (:data:`USER_DB_TOP_K`) of each module in ``mods`` for ``target`` to
    the user database (created when missing; files recorded in its manifest). Returns ``(added, problem)``:
    records added and, when the folder is refused, why (nothing written then)."""
    import fcntl
    import os

    from tvm.s_tir import meta_schedule as ms

    problem = user_database_problem(db_dir, True)
    if problem is not None:
        return 0, problem
    picked = [(m, _user_db_records(database, m, target, USER_DB_TOP_K)) for m in mods]
    picked = [(m, r) for m, r in picked if r]
    if not picked:
        return 0, None
    os.makedirs(db_dir, exist_ok=True)
    added = 0
    with track_work_dir(db_dir):  # the files it creates go into the manifest
        lock = os.open(os.path.join(db_dir, USER_DB_LOCK), os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o644)
        try:
            fcntl.flock(lock, fcntl.LOCK_EX)
            user = ms.database.JSONDatabase(work_dir=db_dir, module_equality="structural")
            for mod, records in picked:
                added += _copy_records(records, user, mod)
        finally:
            os.close(lock)
    return added, None


#: Helpers an exported script with a tuning step needs for the user database (after the script.py helpers).
USER_DB_HELPERS = (user_database_problem, _user_db_records, _copy_records, import_user_records, commit_user_records)
#: Module constants those helpers use.
USER_DB_CONSTANTS = ("USER_DB_TOP_K", "USER_DB_LOCK")


def user_db_constants_source():
    """The assignments of :data:`USER_DB_CONSTANTS`, for an exported script."""
    return "".join(f"{name} = {globals()[name]!r}\n" for name in USER_DB_CONSTANTS)
