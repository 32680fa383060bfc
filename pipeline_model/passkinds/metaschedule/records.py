"""Tuning records as code to consent to (TVM-free, Qt-free).

A tuning record's schedule is replayed and compiled into the model, so records the user's own tuning did not
measure — a work folder that came with a pipeline (``NAME.tuning/``), a folder a step's ``work_dir`` points
at — are consented to like a custom pass (:mod:`pipeline_model.consent`, kind ``tuning_records``): the engine
refuses the run without consent, the CLI needs ``--trust``, the GUI shows what the records are
(:func:`records_listing`) and asks.

Which databases are the user's own: after every tuning step the engine notes the SHA-256 of the work folder's
two database files (:func:`database_digest`) in a per-user list (:func:`remember_own_database`;
``tuning-records.json`` under ``$RPS_CONFIG_DIR`` or ``$XDG_CONFIG_HOME/relax-pipeline-studio``), so a folder
the user tuned (or a copy of it) needs no consent, and one whose records changed outside the app needs it
again. The allow-list check (:mod:`.script_records`) applies to every record, consented or not.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import textwrap
from typing import Any, Iterable, Optional

from pipeline_model.passkinds.metaschedule.config import DATABASE_FILES, resolve_work_dir
from pipeline_model.passkinds.metaschedule.script_records import RECORD_LINE_MAX_BYTES, trace_json_problem
from pipeline_model.scriptlib.files import replace_file

LEDGER_NAME = "tuning-records.json"
LEDGER_FORMAT = "relax-pipeline-studio.own-tuning-databases"
#: Digests kept in the list (the oldest go first).
LEDGER_MAX = 4000
#: Records listed one by one in the consent dialog.
LISTING_MAX = 200


def ledger_path() -> str:
    """The per-user list of the user's own tuning databases (``$RPS_CONFIG_DIR`` when set, as for the consent
    file, else ``$XDG_CONFIG_HOME/relax-pipeline-studio``)."""
    folder = os.environ.get("RPS_CONFIG_DIR")
    if not folder:
        base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
        folder = os.path.join(base, "relax-pipeline-studio")
    return os.path.join(folder, LEDGER_NAME)


def _regular_chunks(path: str) -> Iterable[bytes]:
    """The bytes of ``path`` in chunks when it is a regular file (never through a symlink); nothing when missing;
    ``OSError`` for a FIFO, a device or a symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        while chunk := fh.read(1 << 20):
            yield chunk


def has_records(folder: str) -> bool:
    """Whether ``folder`` holds a MetaSchedule tuning-record file with something in it."""
    path = os.path.join(folder, DATABASE_FILES[1])
    try:
        return os.lstat(path).st_size > 0
    except OSError:
        return False


def database_digest(folder: str) -> str:
    """SHA-256 of the two database files of ``folder`` (workloads, then records; a missing one counts as empty).
    Raises ``OSError`` for one that is not a regular file."""
    digest = hashlib.sha256()
    for name in DATABASE_FILES:
        digest.update(name.encode() + b"\0")
        for chunk in _regular_chunks(os.path.join(folder, name)):
            digest.update(chunk)
    return digest.hexdigest()


def own_digests() -> list[str]:
    """The digests of the user's own tuning databases ([] when the list is missing or unreadable)."""
    try:
        data = json.loads(b"".join(_regular_chunks(ledger_path())).decode("utf-8") or "{}")
    except (OSError, ValueError, RecursionError):
        return []
    found = data.get("digests") if isinstance(data, dict) and data.get("format") == LEDGER_FORMAT else None
    return [str(d) for d in found if isinstance(d, str)] if isinstance(found, list) else []


def remember_own_database(folder: str) -> None:
    """Note ``folder``'s database as the user's own (the engine calls it after each tuning step there). A list
    that cannot be written is left as it is: the folder is asked about again next time."""
    if not has_records(folder):
        return
    try:
        digest = database_digest(folder)
        known = [d for d in own_digests() if d != digest][-(LEDGER_MAX - 1):] + [digest]
        path = ledger_path()
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.islink(path):
            return
        data = {"format": LEDGER_FORMAT, "version": 1, "digests": known}
        replace_file(path, json.dumps(data).encode("utf-8"), prefix=".tuning-records.", suffix=".rps-tmp", mode=0o600)
    except OSError:
        return


def _step_work_dir(raw: dict[str, Any], work_dir: Optional[str], base_dir: Optional[str]) -> Optional[str]:
    """The tuning folder a step reads: its recipe's ``work_dir`` argument (``Ref("work_dir")``: the run's folder; a
    path: relative to ``base_dir``), as every kind that tunes or reads a database builds it (MetaSchedule's steps,
    ``pipeline.static_shape_tuning``); ``None`` for a step without one."""
    from pipeline_model import emit
    from pipeline_model.passkinds.registry import recipe_for

    params = raw.get("params") if isinstance(raw.get("params"), dict) else {}
    try:
        expr = recipe_for(str(raw.get("pass") or ""), dict(params or {}))
    except Exception:  # noqa: BLE001 - a step that cannot be built reads no database (its build fails itself)
        return None
    for key, value in expr.kwargs if isinstance(expr, emit.Call) else ():
        if key == "work_dir" and isinstance(value, emit.Ref) and work_dir:
            return os.path.abspath(work_dir)
        if key == "work_dir" and isinstance(value, emit.Lit):
            try:
                return resolve_work_dir(str(value.value or ""), work_dir, base_dir)
            except ValueError:
                return None
    return None


def step_work_dirs(steps: Iterable[dict[str, Any]], work_dir: Optional[str],
                   base_dir: Optional[str]) -> list[tuple[int, str]]:
    """``[(step index, folder)]``: the tuning database each enabled step reads (:func:`_step_work_dir`), first use
    of each folder only."""
    out: list[tuple[int, str]] = []
    seen: set[str] = set()
    for i, raw in enumerate(steps):
        if not isinstance(raw, dict) or not raw.get("enabled", True) or raw.get("placeholder"):
            continue
        folder = _step_work_dir(raw, work_dir, base_dir)
        if folder is not None and folder not in seen:
            seen.add(folder)
            out.append((i, folder))
    return out


def foreign_databases(steps: Iterable[dict[str, Any]], work_dir: Optional[str],
                      base_dir: Optional[str]) -> list[tuple[int, str, str, str]]:
    """``[(step index, folder, digest, problem)]`` of the tuning databases the steps read that hold records the
    user's own tuning did not write (:func:`own_digests`); ``digest`` is "" and ``problem`` says why when a file
    cannot be read safely."""
    own = set(own_digests())
    out = []
    for index, folder in step_work_dirs(steps, work_dir, base_dir):
        if not has_records(folder):
            continue
        try:
            digest, problem = database_digest(folder), ""
        except OSError as exc:
            digest, problem = "", str(exc)
        if digest not in own:
            out.append((index, folder, digest, problem))
    return out


def _summary(trace_json: Any) -> str:
    """The instructions of a trace, in a few words (``Split x3, Annotate(meta_schedule.parallel), ...``)."""
    counts: dict[str, int] = {}
    for inst in trace_json[0] if isinstance(trace_json, list) and trace_json and isinstance(trace_json[0], list) else []:
        if not isinstance(inst, list) or not inst:
            continue
        name = str(inst[0])[:40]
        if name in ("Annotate", "Unannotate") and len(inst) > 2 and isinstance(inst[2], list) and inst[2]:
            name = f"{name}({str(inst[2][0])[:60]})"
        counts[name] = counts.get(name, 0) + 1
    return ", ".join(f"{n} x{c}" if c > 1 else n for n, c in counts.items())


def records_listing(folder: str) -> str:
    """What the consent dialog shows for a tuning database: each record's line, measured time and instructions,
    and whether the allow-list refuses it (read in Python with the limits of :mod:`.script_records`)."""
    from pipeline_model.passkinds.metaschedule.script_records import database_lines

    path = os.path.join(folder, DATABASE_FILES[1])
    notes: list[str] = []
    lines = [f"# Tuning records in {path}.",
             "# Each record is a schedule that is replayed on a PrimFunc and compiled into the model.",
             "# They were not measured by your own tuning (they came with the pipeline or from another folder).",
             f"# Records whose schedule is not on the app's allow-list are refused in any case (lines over "
             f"{RECORD_LINE_MAX_BYTES >> 20} MiB are skipped).", ""]
    try:
        found = database_lines(path, notes.append)
    except OSError as exc:
        return f"# {exc}"
    for number, _place, value in found[:LISTING_MAX]:
        body = value[1] if isinstance(value, list) and len(value) == 2 and isinstance(value[1], list) else []
        trace = body[0] if body else None
        secs = body[1] if len(body) > 1 and isinstance(body[1], list) else []
        mean = (f"{sum(float(s) for s in secs) / len(secs) * 1e6:.1f} us"
                if secs and all(isinstance(s, (int, float)) for s in secs) else "no time")
        problem = trace_json_problem(trace)
        lines.append(f"line {number}: {mean}; {_summary(trace) or 'no instructions'}")
        if problem:
            lines += textwrap.wrap("REFUSED: " + problem, 100, initial_indent="    ", subsequent_indent="      ")
    if len(found) > LISTING_MAX:
        lines.append(f"... and {len(found) - LISTING_MAX} more records")
    lines += [f"skipped: {note}" for note in notes[:20]]
    return "\n".join(lines)
