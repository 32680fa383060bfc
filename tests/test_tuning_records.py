"""Tuning records are code (issue 32): every trace is checked against the app's allow-list before it is replayed
or stored, databases are read with size and nesting limits (a bad line is skipped with one warning naming the
file and the line, the rest kept, never a crash), records the user's own tuning did not write need consent, and
the per-user database only receives records this run measured. Records are made with TVM's API (a few ms each),
never by tuning."""

from __future__ import annotations

import json
import os

import pytest

from pipeline_model import consent
from pipeline_model.passkinds.metaschedule import records, script, script_records
from tests.test_tuning_script import _helpers_namespace
from tests.tuning_fixtures import TUNE_STEP, tuning_document

LLVM_IR = "define void @rps_evil() {\n  ret void\n}"
TARGET = {"kind": "llvm", "num-cores": 1}


# ---- records made with TVM's API ----------------------------------------------------------------
def _workload(n):
    """A one-PrimFunc module adding 1 to ``n`` floats (``n`` a multiple of 8)."""
    import tvm
    from tvm import te

    a = te.placeholder((n,), name="a")
    b = te.compute((n,), lambda i: a[i] + 1.0, name="b")
    return tvm.IRModule({"main": te.create_prim_func([a, b])})


def _trace(mod, annotation=None):
    """A search-like trace (split, parallel, post-processing, vectorize); ``annotation``: (key, value) added."""
    from tvm.s_tir import Schedule

    sch = Schedule(mod)
    (loop,) = sch.get_loops(sch.get_sblock("b"))
    outer, inner = sch.split(loop, [None, 8])
    if annotation is not None:
        sch.annotate(outer, *annotation)
    sch.parallel(outer)
    sch.enter_postproc()
    sch.vectorize(inner)
    return sch.trace


def _fill(folder, entries, secs=1e-6):
    """A MetaSchedule JSON database in ``folder`` with one record per ``(module, annotation)`` of ``entries``."""
    import tvm
    from tvm.s_tir import meta_schedule as ms

    os.makedirs(folder, exist_ok=True)
    database = ms.database.JSONDatabase(work_dir=str(folder), module_equality="structural")
    for mod, annotation in entries:
        workload = database.commit_workload(mod)
        args = ms.arg_info.ArgInfo.from_prim_func(mod["main"])
        database.commit_tuning_record(ms.database.TuningRecord(
            _trace(mod, annotation), workload, [secs], tvm.target.Target(TARGET), args))
    return database


def _lines(path):
    with open(path, encoding="utf-8") as fh:
        return [line for line in fh.read().split("\n") if line.strip()]


# ---- the allow-list --------------------------------------------------------------------------------
def test_the_allow_list_refuses_annotations_that_carry_code():
    mod = _workload(64)
    assert script_records.trace_problem(_trace(mod)) is None
    assert script_records.trace_problem(_trace(mod, ("meta_schedule.unroll_explicit", 16))) is None
    for key in ("pragma_import_llvm", "pragma_import_c", "my_own_key"):
        problem = script_records.trace_problem(_trace(mod, (key, LLVM_IR)))
        assert problem and key in problem and "instruction 4" in problem
    long_text = script_records.trace_problem(_trace(mod, ("meta_schedule.tiling_structure", "S" * 600)))
    assert long_text and "no source text" in long_text
    # The JSON form (what a database line holds) follows the same rule.
    assert "UnsafeSetDType" in script_records.trace_json_problem([[["UnsafeSetDType", [], [], []]], []])
    assert script_records.trace_json_problem("not a trace") == "its trace is not a MetaSchedule trace"


# ---- reading with limits ------------------------------------------------------------------------------
def _damaged(folder):
    """Records of four workloads (the third crafted: an LLVM IR annotation), the first workload's line too deep, and
    one bad record line of each kind."""
    _fill(folder, [(_workload(64), None), (_workload(128), None), (_workload(256), ("pragma_import_llvm", LLVM_IR)),
                   (_workload(512), None)])
    wl, rec = (os.path.join(str(folder), name) for name in script.DATABASE_FILES)
    workloads = _lines(wl)
    with open(wl, "w", encoding="utf-8") as fh:  # the 64-float workload's line: too deep (its record goes too)
        fh.write("\n".join(["[" * 200_000, *workloads[1:]]) + "\n")
    with open(rec, "a", encoding="utf-8") as fh:
        fh.write("[" * 100 + "1" + "]" * 100 + "\n")  # deep, but not enough for Python's own limit
        fh.write("[" * 300_000 + "\n")  # deep past Python's recursion limit
        fh.write("x" * (script_records.RECORD_LINE_MAX_BYTES + 10) + "\n")  # huge
        fh.write('[1,[[[["GetSBlock",[],["b","main"],["b0"]]\n')  # truncated
        fh.write("\x00garbage\xff\n")  # garbage
    return wl, rec


#: The warnings :func:`_damaged` makes: (file index, line) -> what each says.
DAMAGE = {(0, 1): "nested deeper", (1, 1): "its workload (line 1 of database_workload.json) is missing or was skipped",
          (1, 3): "refused: instruction 4 of its trace annotates 'pragma_import_llvm'", (1, 5): "nested deeper",
          (1, 6): "nested deeper", (1, 7): "longer than 16 MiB", (1, 8): "not a JSON line", (1, 9): "not a JSON line"}


def test_bad_lines_are_skipped_one_warning_each_and_the_good_records_kept(tmp_path):
    paths = _damaged(tmp_path)
    warnings: list[str] = []
    database = script_records.checked_memory_database(str(tmp_path), warnings.append)
    assert len(database) == 2  # the 128- and 512-float records; TVM never parsed a bad line
    assert len(warnings) == len(DAMAGE), warnings
    for (index, line), why in DAMAGE.items():
        assert sum(w.startswith(f"{paths[index]}, line {line}: ") and why in w for w in warnings) == 1, (line, warnings)


def test_a_work_folder_the_app_wrote_loses_only_its_bad_lines(tmp_path):
    """The app's own files (in the manifest): rewritten without the bad lines, workloads renumbered, then TVM loads
    them; a file the app did not write is never changed: the step stops with the file and the line."""
    from tvm.s_tir import meta_schedule as ms

    wl, rec = _damaged(tmp_path)
    with open(rec, "rb") as fh:
        before = fh.read()
    with pytest.raises(script.TuningConfigError, match=r"database_tuning_record.json, line 3: refused: .*pragma_imp"):
        script.open_work_database(str(tmp_path))
    with open(rec, "rb") as fh:
        assert fh.read() == before  # not the app's: untouched
    script.write_manifest(str(tmp_path), list(script.DATABASE_FILES))
    warnings: list[str] = []
    database = script.open_work_database(str(tmp_path), warnings.append)
    assert len(warnings) == len(DAMAGE) and len(database) == 2
    assert len(_lines(wl)) == 3 and len(_lines(rec)) == 2  # workloads renumbered: the records point at theirs
    again = ms.database.JSONDatabase(work_dir=str(tmp_path), module_equality="structural")
    for n, count in ((128, 1), (256, 0), (512, 1)):
        assert len(again.get_top_k(again.commit_workload(_workload(n)), 5)) == count, n
    assert script.open_work_database(str(tmp_path), warnings.append) is not None and len(warnings) == len(DAMAGE)


def test_the_user_database_never_hands_out_a_crafted_record(tmp_path):
    """Look-up: the crafted record is refused with a warning naming it; the good ones are imported. Commit: a
    record the work folder held before tuning (a pipeline folder's) never reaches the user database."""
    from tvm.s_tir import meta_schedule as ms

    from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target

    user = tmp_path / "user"
    evil, good = _workload(256), _workload(64)
    _fill(user, [(good, None), (evil, ("pragma_import_llvm", LLVM_IR))])
    work = ms.database.MemoryDatabase(module_equality="structural")
    warnings: list[str] = []
    target = tuning_target(TARGET)
    assert script.import_user_records(str(user), work, evil, target, warnings.append) == 0
    assert any("line 2: refused" in w and "pragma_import_llvm" in w for w in warnings), warnings
    assert script.import_user_records(str(user), work, good, target, warnings.append) == 1
    # A work folder that came with a pipeline: its record (search-like, fast) is known before tuning.
    shipped = _fill(tmp_path / "shipped", [(_workload(512), None)])
    known = script.held_traces(shipped, [_workload(512)])
    mine = tmp_path / "mine"
    assert script.commit_user_records(str(mine), shipped, [_workload(512)], target, known) == (0, None)
    assert not os.path.exists(mine / "database_tuning_record.json")
    assert script.commit_user_records(str(mine), shipped, [_workload(512)], target) == (1, None)  # measured: added
    # The user database's own bad lines: removed (the app wrote it) before anything is added.
    with open(mine / "database_tuning_record.json", "a", encoding="utf-8") as fh:
        fh.write("[" * 300_000 + "\n")
    assert script.commit_user_records(str(mine), work, [good], target, (), warnings.append) == (1, None)
    assert len(_lines(mine / "database_tuning_record.json")) == 2
    # A crafted record is never copied into the user database, whatever database it sits in.
    crafted = ms.database.MemoryDatabase(module_equality="structural")
    workload = crafted.commit_workload(evil)
    crafted.commit_tuning_record(ms.database.TuningRecord(_trace(evil, ("pragma_import_llvm", LLVM_IR)), workload,
                                                          [1e-6], target, ms.arg_info.ArgInfo.from_prim_func(evil["main"])))
    assert script.commit_user_records(str(mine), crafted, [evil], target) == (0, None)


# ---- consent ---------------------------------------------------------------------------------------------------
def test_a_pipeline_folders_records_need_consent_until_the_users_own_tuning_wrote_them(tmp_path, monkeypatch):
    monkeypatch.setenv("RPS_CONFIG_DIR", str(tmp_path / "config"))
    doc = tuning_document(str(tmp_path / "shipped.json"))
    folder = tmp_path / "shipped.tuning"
    _fill(folder, [(_workload(64), ("pragma_import_llvm", LLVM_IR))])
    steps = [{"pass": s.pass_id, "params": dict(s.params), "enabled": s.enabled} for s in doc.steps]
    items = [i for i in consent.code_items(doc.model, str(tmp_path), steps, str(folder)) if i.kind == consent.KIND_TUNING]
    assert len(items) == 1 and items[0].index == TUNE_STEP and items[0].sha256
    assert "tuning database " + str(folder) in consent.refusal_message(items)
    assert "REFUSED" in consent.tuning_listing(items[0]) and "pragma_import_llvm" in consent.tuning_listing(items[0])
    assert consent.code_items(doc.model, str(tmp_path), steps) == []  # no run work folder given: nothing to ask
    named = [{"pass": "pipeline.static_shape_tuning", "params": {"work_dir": "", "total_trials": 8}}]
    assert [i.index for i in consent.tuning_items(named, str(folder), str(tmp_path))] == [0]  # TVM's pipeline too
    records.remember_own_database(str(folder))  # what the engine does after the user's own tuning step
    assert not [i for i in consent.code_items(doc.model, str(tmp_path), steps, str(folder)) if i.kind == consent.KIND_TUNING]
    with open(folder / "database_tuning_record.json", "a", encoding="utf-8") as fh:
        fh.write("\n")  # changed outside the app: asked about again
    assert [i for i in consent.code_items(doc.model, str(tmp_path), steps, str(folder)) if i.kind == consent.KIND_TUNING]


def test_the_engine_refuses_a_run_on_a_shipped_work_folder_without_consent(engine, tmp_path):
    """Nothing runs (no model load, no look-up, no copy into the user database) until the records are consented."""
    doc = tuning_document(str(tmp_path / "shipped.json"))
    folder = tmp_path / "shipped.tuning"
    _fill(folder, [(_workload(64), ("pragma_import_llvm", LLVM_IR))])
    with open(folder / "database_tuning_record.json", "rb") as fh:
        before = fh.read()
    result = engine.run(doc)
    assert not result.ok
    error = result.steps[TUNE_STEP].error or ""
    assert error.startswith(consent.REFUSAL_PREFIX) and f"tuning database {folder}" in error and "--trust" in error
    with open(folder / "database_tuning_record.json", "rb") as fh:
        assert fh.read() == before
    # The tune command likewise refuses before it loads anything.
    from pipeline_model.engine.client import ConsentRequired

    with pytest.raises(ConsentRequired, match="tuning database"):
        engine.request("tune", {"model": "builtin:mlp", "work_dir": str(folder), "params": {"max_trials_global": 1}})
    # With consent (--trust) the crafted record is still refused: the step stops in one line naming it, the engine
    # lives (it used to crash with SIGSEGV at build), the folder (not the app's) is unchanged.
    with engine.consented(consent.Consent.everything()):
        result = engine.run(doc)
    error = result.steps[TUNE_STEP].error or ""
    assert not result.ok and "database_tuning_record.json, line 1: refused: " in error and "pragma_import_llvm" in error
    assert "\n" not in error.strip() and "Traceback" not in error
    with open(folder / "database_tuning_record.json", "rb") as fh:
        assert fh.read() == before
    assert engine.request("ping", {}) is not None


# ---- exported scripts ---------------------------------------------------------------------------------------
def test_an_exported_script_refuses_the_crafted_record_in_one_line(tmp_path, capsys):
    from pipeline_model.export import export_script

    work = tmp_path / "work"
    _fill(work, [(_workload(64), None), (_workload(128), ("pragma_import_llvm", LLVM_IR))])
    doc = tuning_document()
    source = export_script(doc, work_dir=str(work))
    assert "ANNOTATION_KEYS = (" in source and "def trace_json_problem(" in source
    ns = _helpers_namespace(source)
    with pytest.raises(SystemExit, match=r"^error: .*database_tuning_record.json, line 2: refused: .*pragma_import_llvm"):
        ns["check_work_dir"](str(work))
    script.write_manifest(str(work), list(script.DATABASE_FILES))  # the script's own files: the line is removed
    ns["check_work_dir"](str(work))
    assert "warning: " in capsys.readouterr().out
    assert len(_lines(work / "database_tuning_record.json")) == 1
    # The apply step of a script reads the folder only after the same check.
    apply_only = tuning_document()
    apply_only.steps = apply_only.steps[TUNE_STEP + 1:]
    assert "check_work_dir(" in export_script(apply_only, work_dir=str(work)).split("def apply_steps(", 1)[1]


def test_database_lines_never_hold_a_huge_line(tmp_path):
    """A line past the limit is read in pieces and skipped: the reader's result never includes it."""
    path = tmp_path / "database_workload.json"
    path.write_bytes(b"[" + b"1," * (script_records.RECORD_LINE_MAX_BYTES // 2) + b"1]\n" + json.dumps(["1", "2"]).encode() + b"\n")
    warnings: list[str] = []
    assert script_records.database_lines(str(path), warnings.append) == [(2, 1, ["1", "2"])]
    assert warnings == [f"{path}, line 1: longer than 16 MiB; skipped"]
