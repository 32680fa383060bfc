"""Tuning records read with limits and an allow-list — code exported scripts contain and the engine calls
(TVM-free at import; copied verbatim like :mod:`.script`'s helpers, see :data:`RECORD_HELPERS`).

A tuning record is code: its trace is replayed on the workload and the result compiled, and TVM lowers some
annotations into the built library as they are (``Annotate(loop, "pragma_import_llvm", "<LLVM IR>")`` parses
and links that IR; a crafted one crashed the engine). So before TVM parses a line of a MetaSchedule JSON
database the app reads it in Python:

* :func:`database_lines`: every line at most :data:`RECORD_LINE_MAX_BYTES` (a longer one is skipped while it is
  read, never held), UTF-8 JSON (a truncated or garbage line is skipped), nested at most
  :data:`RECORD_MAX_DEPTH` deep (TVM's parser recursed into a deep line until the process crashed); each
  skipped line is one warning naming the file and the line, the others are kept;
* :func:`trace_json_problem` / :func:`trace_problem` — the one allow-list rule, for a trace's JSON and for a
  ``Trace`` object: every instruction one of :data:`SCHEDULE_INSTRUCTIONS`, every ``Annotate``/``Unannotate``
  key one of :data:`ANNOTATION_KEYS` (no ``pragma_import_llvm``, ``pragma_import_c`` or any other key that
  carries source text), no annotation value longer than :data:`RECORD_TEXT_MAX`;
* :func:`scan_database`: a folder's workloads and records that pass both (a record of a skipped workload is
  skipped too); :func:`checked_memory_database` loads them into a ``MemoryDatabase`` (the user database's
  look-ups); :func:`check_database_folder` makes a folder fit for TVM's ``JSONDatabase``: bad lines of files the
  app wrote (listed in the folder's manifest, :func:`read_manifest` of :mod:`.script`) are removed from them,
  bad lines of a file the app did not write stop the step (``open_work_database`` raises ``TuningConfigError``)
  naming the file and the line (the file is never changed).
"""

from pipeline_model.scriptlib.files import replace_file  # every exported script holds scriptlib/files.py



class TuningConfigError(ValueError):
    """A tuning parameter has a bad value, or a work directory cannot be re-tuned; the message says which."""


#: Longest line of a MetaSchedule database file read (a workload of a large PrimFunc is a few hundred KiB).
RECORD_LINE_MAX_BYTES = 16 * 1024 * 1024
#: Deepest nesting of a database line (and of a workload's decoded module JSON); real ones are under 10.
RECORD_MAX_DEPTH = 48
#: Longest text in an ``Annotate`` instruction (an intrinsic's name, a tiling structure).
RECORD_TEXT_MAX = 512
#: The schedule instructions a replayed trace may hold (TVM 0.27's kinds less ``UnsafeSetDType`` and
#: ``UnsafeHideBufferAccess``, which MetaSchedule never samples).
SCHEDULE_INSTRUCTIONS = (
    "AddUnitLoop", "Annotate", "AnnotateBufferAccess", "Bind", "Blockize", "CacheIndex", "CacheInplace", "CacheRead",
    "CacheWrite", "ComputeAt", "ComputeInline", "DecomposePadding", "DecomposeReduction", "EnterPostproc",
    "FuseReductionEpilogue", "Fuse", "GetChildBlocks", "GetConsumers", "GetLoops", "GetOutputBlocks", "GetProducers",
    "GetSBlock", "LoopPartition", "Merge", "PadEinsum", "Parallel", "RFactor", "ReIndex", "ReadAt", "ReindexCacheRead",
    "ReindexCacheWrite", "Reorder", "ReorderBlockIterVar", "ReverseComputeAt", "ReverseComputeInline", "RollingBuffer",
    "SampleCategorical", "SampleComputeLocation", "SamplePartitionedTile", "SamplePerfectTile", "SetScope", "Split",
    "StorageAlign", "Tensorize", "TransformBlockLayout", "TransformLayout", "Unannotate", "Unroll", "Vectorize",
    "WriteAt",
)
#: The annotation keys a trace may set: MetaSchedule's hints, loop pragmas that carry a number, software
#: pipelining. Never a key whose value TVM compiles as source (``pragma_import_llvm``, ``pragma_import_c``).
ANNOTATION_KEYS = (
    "meta_schedule.adaptive_pool_avg", "meta_schedule.adaptive_pool_max", "meta_schedule.auto_tensorize",
    "meta_schedule.auto_tensorize_init", "meta_schedule.cooperative_fetch", "meta_schedule.inline_rule",
    "meta_schedule.layout_rewrite_preproc", "meta_schedule.parallel", "meta_schedule.pool_avg",
    "meta_schedule.pool_max", "meta_schedule.random_compute_producer", "meta_schedule.thread_extent_high_inclusive",
    "meta_schedule.thread_extent_low_inclusive", "meta_schedule.tiling_structure", "meta_schedule.unroll_explicit",
    "meta_schedule.unroll_implicit", "meta_schedule.vectorize", "pragma_auto_unroll_max_step",
    "pragma_loop_partition_hint", "pragma_unroll_explicit", "software_pipeline_async_stages",
    "software_pipeline_order", "software_pipeline_stage", "double_buffer_scope",
    "tirx.manifest_shared_memory_local_stage", "warp_execution",
)


def json_depth(value):
    """How deeply ``value`` (parsed JSON) nests lists and dicts (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (list, dict)):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def _longest_text(value):
    """Length of the longest string in ``value`` (parsed JSON), without recursion."""
    longest, stack = 0, [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            longest = max(longest, len(item))
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
    return longest


def trace_json_problem(trace_json):
    """``None`` when the trace (its JSON: ``[instructions, decisions]``, each instruction ``[kind, inputs,
    attrs, outputs]``) holds only allowed instructions and annotation keys, else a sentence naming the first
    that is not (the app's one allow-list rule, :data:`SCHEDULE_INSTRUCTIONS`, :data:`ANNOTATION_KEYS`)."""
    if not isinstance(trace_json, list) or len(trace_json) != 2 or not isinstance(trace_json[0], list):
        return "its trace is not a MetaSchedule trace"
    for number, inst in enumerate(trace_json[0], 1):
        if not isinstance(inst, list) or len(inst) != 4 or not isinstance(inst[0], str):
            return f"instruction {number} of its trace is not a schedule instruction"
        name, attrs = inst[0], inst[2]
        if name not in SCHEDULE_INSTRUCTIONS:
            return f"instruction {number} of its trace ({name[:60]!r}) is not a schedule instruction the app allows"
        if name in ("Annotate", "Unannotate"):
            key = attrs[0] if isinstance(attrs, list) and attrs else None
            if key not in ANNOTATION_KEYS:
                return (f"instruction {number} of its trace annotates {str(key)[:60]!r}, which the app does not "
                        "allow (an annotation such as pragma_import_llvm carries code that is compiled in)")
        longest = _longest_text(inst[1:3]) if name == "Annotate" else 0  # a layout's index map is long, not code
        if longest > RECORD_TEXT_MAX:
            return (f"instruction {number} of its trace ({name}) carries a text of {longest} characters; a "
                    "schedule carries no source text")
    return None


def _plain_json(value):
    """TVM's FFI containers (``Trace.as_json()``) as plain Python lists, dicts, strings and numbers."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value if not isinstance(value, str) else str(value)
    if hasattr(value, "items"):
        return {str(k): _plain_json(v) for k, v in value.items()}
    if hasattr(value, "__len__") and hasattr(value, "__getitem__"):
        return [_plain_json(v) for v in value]
    return str(value)


def trace_problem(trace):
    """:func:`trace_json_problem` of a ``tvm.s_tir.schedule.Trace`` (a record already in a database)."""
    return trace_json_problem(_plain_json(trace.as_json(remove_postproc=False)))


def _read_line(fh):
    """The next line of binary file ``fh`` and whether it fits :data:`RECORD_LINE_MAX_BYTES`; a longer line is read
    to its end in pieces, never held whole (``b""`` at the end of the file)."""
    raw = fh.readline(RECORD_LINE_MAX_BYTES + 1)
    if len(raw) <= RECORD_LINE_MAX_BYTES or raw.endswith(b"\n"):
        return raw, True
    while raw and not raw.endswith(b"\n"):
        raw = fh.readline(1 << 20)
    return b"-", False


def database_lines(path, warn):
    """``[(line number, place, parsed JSON)]`` of the non-empty lines of ``path`` that are at most
    :data:`RECORD_LINE_MAX_BYTES` long, UTF-8 JSON and nested at most :data:`RECORD_MAX_DEPTH` deep (``place``: the
    line's index among the non-empty lines, skipped ones included, as TVM numbers workloads); ``warn`` gets one
    sentence per other line ("<path>, line N: ...; skipped"). A missing file: ``[]``; a file that is not a regular
    file (a FIFO, a device, a symlink) raises ``OSError``."""
    import json
    import os
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return []
    lines = []
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        number = place = 0
        while True:
            raw, fits = _read_line(fh)
            if not raw:
                break
            number += 1
            if not raw.strip():
                continue
            place += 1
            why = "" if fits else f"longer than {RECORD_LINE_MAX_BYTES >> 20} MiB"
            try:
                value = json.loads(raw.decode("utf-8")) if fits else None
            except RecursionError:
                why = f"nested deeper than {RECORD_MAX_DEPTH} levels"
            except (UnicodeDecodeError, ValueError):
                why = "not a JSON line (truncated or garbage)"
            else:
                if fits and json_depth(value) > RECORD_MAX_DEPTH:
                    why = f"nested deeper than {RECORD_MAX_DEPTH} levels"
            if why:
                warn(f"{path}, line {number}: {why}; skipped")
                continue
            lines.append((number, place - 1, value))
    return lines


def _workload_problem(value):
    """``None`` when ``value`` is a workload line (``[structural hash, base64 of the module's JSON]``) whose module
    JSON is nested at most :data:`RECORD_MAX_DEPTH` deep, else why not."""
    import base64
    import binascii
    import json

    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        return "not a workload ([hash, module])"
    try:
        blob = base64.b64decode(value[1], validate=True)  # 8 bytes of length (little-endian), then the JSON
        if len(blob) < 8 or int.from_bytes(blob[:8], "little") != len(blob) - 8:
            return "its module is not a saved TVM module"
        module = json.loads(blob[8:].decode("utf-8"))
    except RecursionError:
        return f"its module is nested deeper than {RECORD_MAX_DEPTH} levels"
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return "its module is not a saved TVM module"
    if not isinstance(module, dict):
        return "its module is not a saved TVM module"
    if json_depth(module) > RECORD_MAX_DEPTH:
        return f"its module is nested deeper than {RECORD_MAX_DEPTH} levels"
    return None


def _record_problem(value, workloads):
    """``None`` when ``value`` is a record line (``[workload index, [trace, run_secs, target, args]]``) of a kept
    workload whose trace passes :func:`trace_json_problem`, else why not."""
    if not (isinstance(value, list) and len(value) == 2 and isinstance(value[0], int) and isinstance(value[1], list)
            and len(value[1]) == 4):
        return "not a tuning record ([workload, [trace, run_secs, target, args]])"
    if value[0] not in workloads:
        return f"its workload (line {value[0] + 1} of database_workload.json) is missing or was skipped"
    secs = value[1][1]
    if secs is not None and not (isinstance(secs, list) and all(isinstance(s, (int, float)) for s in secs)):
        return "its run_secs are not numbers"
    problem = trace_json_problem(value[1][0])
    return f"refused: {problem}" if problem else None


def scan_database(folder, warn):
    """The good lines of the MetaSchedule JSON database in ``folder``: ``(workloads, records, skipped)`` with
    ``workloads`` = ``{index: (line number, value)}`` (index: the line's place among the non-empty lines, as a
    record names it), ``records`` = ``[(line number, value)]`` and ``skipped``: how many lines were not kept.
    ``warn`` gets one sentence per skipped line (file, line, why): :func:`database_lines`, a line that is not a
    workload/record, a record refused by the allow-list (:func:`trace_json_problem`) or of a skipped workload."""
    import os

    skipped = [0]

    def note(text):
        skipped[0] += 1
        warn(text)

    wl_path = os.path.join(folder, "database_workload.json")
    rec_path = os.path.join(folder, "database_tuning_record.json")
    workloads = {}
    for number, place, value in database_lines(wl_path, note):
        problem = _workload_problem(value)
        if problem:
            note(f"{wl_path}, line {number}: {problem}; skipped")
        else:
            workloads[place] = (number, value)
    records = []
    for number, _place, value in database_lines(rec_path, note):
        problem = _record_problem(value, workloads)
        if problem:
            note(f"{rec_path}, line {number}: {problem}; skipped")
        else:
            records.append((number, value))
    return workloads, records, skipped[0]


def checked_memory_database(folder, warn):
    """A MetaSchedule ``MemoryDatabase`` (structural equality) holding the workloads and records of ``folder``
    that :func:`scan_database` keeps and TVM loads (a record that does not load is skipped with a warning, as
    every other bad line): the user database's look-ups read it so, never the files directly."""
    import os

    from tvm.s_tir import meta_schedule as ms

    workloads, records, _skipped = scan_database(folder, warn)
    database = ms.database.MemoryDatabase(module_equality="structural")
    loaded = {}
    for index, (number, value) in workloads.items():
        try:
            loaded[index] = database.commit_workload(ms.database.Workload.from_json(value).mod)
        except Exception as exc:  # noqa: BLE001 - a workload TVM does not load is skipped, with its records
            warn(f"{os.path.join(folder, 'database_workload.json')}, line {number}: "
                 f"{(str(exc).strip().splitlines() or ['does not load'])[-1][:160]}; skipped")
    for number, value in records:
        if value[0] not in loaded:
            warn(f"{os.path.join(folder, 'database_tuning_record.json')}, line {number}: its workload does not load; "
                 "skipped")
            continue
        try:
            database.commit_tuning_record(ms.database.TuningRecord.from_json(value[1], loaded[value[0]]))
        except Exception as exc:  # noqa: BLE001 - e.g. a trace that does not replay on its workload
            warn(f"{os.path.join(folder, 'database_tuning_record.json')}, line {number}: "
                 f"{(str(exc).strip().splitlines() or ['does not load'])[-1][:160]}; skipped")
    return database


def _kept_lines(path, numbers):
    """The lines of ``path`` whose numbers are in ``numbers`` (without their line ends), read as
    :func:`database_lines` reads them (a line too long is never held)."""
    import os

    out = []
    if not os.path.exists(path):
        return out
    with open(path, "rb") as fh:
        number = 0
        while True:
            raw, _fits = _read_line(fh)
            if not raw:
                return out
            number += 1
            if number in numbers:
                out.append(raw.rstrip(b"\r\n"))


def check_database_folder(folder, warn, owned):
    """Make the MetaSchedule database in ``folder`` fit for TVM's ``JSONDatabase`` (:func:`scan_database`). Returns
    ``(removed, refusal)``: when lines are skipped and both files are the app's (``owned``: the names the folder's
    manifest lists), they are rewritten without those lines (workload indices renumbered; atomic,
    ``replace_file``) and ``removed`` says how many; a file the app did not write is never changed: ``refusal``
    says which file, which lines and what to do (the caller stops the step with it)."""
    import os
    import re

    found = []
    workloads, records, skipped = scan_database(folder, lambda text: (found.append(text), warn(text)))
    if not skipped:
        return 0, None
    found.sort(key=lambda text: ": refused: " not in text)  # records the allow-list refuses are named first
    names = ("database_workload.json", "database_tuning_record.json")
    foreign = [n for n in names if os.path.exists(os.path.join(folder, n)) and n not in set(owned)]
    if foreign:
        return 0, (f"the tuning database in {folder} holds lines the app does not load ({'; '.join(found[:3])}"
                   f"{'; ...' if len(found) > 3 else ''}); {', '.join(foreign)} was not written by this app, so it "
                   "is not changed: delete those lines or the files, or choose another work_dir")
    wl_path, rec_path = (os.path.join(folder, n) for n in names)
    renumber = {index: new for new, index in enumerate(sorted(workloads))}
    wl_text = _kept_lines(wl_path, {n for n, _v in workloads.values()})
    keep = {n: value[0] for n, value in records}
    rec_text = [re.sub(rb"^\s*\[\s*-?\d+", b"[%d" % renumber[keep[n]], raw, count=1)
                for n, raw in zip(sorted(keep), _kept_lines(rec_path, set(keep)))]
    for path, lines in ((wl_path, wl_text), (rec_path, rec_text)):
        replace_file(path, b"".join(line + b"\n" for line in lines), prefix=".rps_db.", suffix=".rps-tmp", mode=0o644)
    return skipped, None


def unloadable_records(work_dir, limit=3):
    """``[(line, reason)]`` of the first ``limit`` records in ``work_dir``'s ``database_tuning_record.json`` that
    do not load (a trace that does not replay on the workload it is filed under, a line that is not a record), or
    ``[]``. Reads the files as MetaSchedule's JSON database does, record by record, to say which line is wrong."""
    import json
    import os

    from tvm.s_tir import meta_schedule as ms

    workloads = []
    with open(os.path.join(work_dir, "database_workload.json"), encoding="utf-8") as fh:
        for text in fh:
            if text.strip():
                try:
                    workloads.append(ms.database.Workload.from_json(json.loads(text)))
                except Exception:  # noqa: BLE001 - a workload that does not load is reported through its records
                    workloads.append(None)
    bad = []
    with open(os.path.join(work_dir, "database_tuning_record.json"), encoding="utf-8") as fh:
        for number, text in enumerate(fh, 1):
            if not text.strip():
                continue
            try:
                index, record = json.loads(text)
                workload = workloads[int(index)]
                if workload is None:
                    raise ValueError(f"its workload (line {int(index) + 1} of database_workload.json) does not load")
                ms.database.TuningRecord.from_json(record, workload)
            except Exception as exc:  # noqa: BLE001 - what is wrong with this line, in a few words
                why = str(exc).strip().splitlines()[-1:] or ["?"]
                bad.append((number, "its schedule does not replay on its workload" if "not rendered" in why[0]
                            or "parallel_for" in why[0] else why[0][:160]))
                if len(bad) >= limit:
                    break
    return bad


#: Constants the helpers use (written into a script before them).
RECORD_CONSTANTS = ("RECORD_LINE_MAX_BYTES", "RECORD_MAX_DEPTH", "RECORD_TEXT_MAX", "SCHEDULE_INSTRUCTIONS",
                    "ANNOTATION_KEYS")
#: Helpers copied into an exported script with a tuning step (after :data:`RECORD_CONSTANTS`).
RECORD_HELPERS = (TuningConfigError, json_depth, _longest_text, trace_json_problem, _plain_json, trace_problem, _read_line,
                  database_lines, _workload_problem, _record_problem, scan_database, checked_memory_database,
                  _kept_lines, check_database_folder, unloadable_records)


def records_constants_source():
    """The assignments of :data:`RECORD_CONSTANTS`, for an exported script."""
    return "".join(f"{name} = {globals()[name]!r}\n" for name in RECORD_CONSTANTS)
