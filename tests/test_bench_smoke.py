"""Smoke tests of bench/bench_latency.py's set-up (no TVM, no torch, no tuning): the bundled tuned CPU
pipeline is well formed, and the benchmark's column documents are what their names say."""

from __future__ import annotations

import os

import pytest

from pipeline_model.fileformat import load_pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPES = os.path.join(ROOT, "resources", "pipelines")
TUNE, APPLY = "relax.MetaScheduleTuneTIR", "relax.MetaScheduleApplyDatabase"


def _bench():
    from bench import bench_latency

    return bench_latency


def test_cpu_tuned_pipeline_is_well_formed() -> None:
    doc = load_pipeline(os.path.join(PIPES, "cpu_tuned.json"))
    ids = [s.pass_id for s in doc.steps]
    assert doc.name and doc.description and doc.model == "builtin:mlp"
    assert doc.target["kind"] == "llvm" and int(doc.target["num-cores"]) >= 1
    # Tuning after FuseTIR (the tasks are the fused PrimFuncs), then the database is applied.
    assert ids.index("relax.FuseTIR") < ids.index(TUNE) < ids.index(APPLY) == len(ids) - 1
    assert ids.index("relax.LegalizeOps") < ids.index("relax.FuseOps") < ids.index("relax.FuseTIR")
    # FuseTransposeMatmul works on Relax ops, so it must come before LegalizeOps.
    assert ids.index("relax.FuseTransposeMatmul") < ids.index("relax.LegalizeOps")
    tune = doc.steps[ids.index(TUNE)]
    assert 8 <= int(tune.params["max_trials_global"]) <= 256
    assert all(s.enabled for s in doc.steps)


def test_set_tuning_points_both_steps_at_the_work_dir(tmp_path) -> None:
    bench = _bench()
    doc = load_pipeline(os.path.join(PIPES, "cpu_tuned.json"))
    bench._set_tuning(doc, 5, str(tmp_path))
    by_id = {s.pass_id: s for s in doc.steps}
    assert by_id[TUNE].params["work_dir"] == by_id[APPLY].params["work_dir"] == str(tmp_path)
    assert by_id[TUNE].params["max_trials_global"] == 5
    assert by_id[TUNE].params["num_trials_per_iter"] <= 5
    assert "max_trials_global" not in by_id[APPLY].params


@pytest.mark.parametrize("name", ["no_dlight", "no_fuse", "no_mcpu", "no_transpose_matmul",
                                  "no_transpose_matmul_no_dlight", "tuned_no_transpose_matmul"])
def test_variant_documents(name: str) -> None:
    bench = _bench()
    cpu = load_pipeline(os.path.join(PIPES, "cpu_build_dlight.json"))  # the variants' base (with DLight)
    tuned = load_pipeline(os.path.join(PIPES, "cpu_tuned.json"))
    doc = bench._variant_doc(name, cpu, tuned)
    ids = [s.pass_id for s in doc.steps]
    assert ("dlight.ApplyDefaultSchedule" in ids) == (name in ("no_fuse", "no_mcpu", "no_transpose_matmul"))
    assert ("relax.FuseOps" in ids) == (name != "no_fuse")
    assert (ids[0] == "relax.FuseTransposeMatmul") == (name in ("no_dlight", "no_fuse", "no_mcpu"))
    assert ids.count("relax.FuseTransposeMatmul") <= 1
    assert (TUNE in ids) == name.startswith("tuned")
    # The bundled documents are left as they were.
    assert [s.pass_id for s in cpu.steps] == [s.pass_id for s in load_pipeline(os.path.join(PIPES, "cpu_build_dlight.json")).steps]


def test_unknown_variant_is_refused() -> None:
    bench = _bench()
    cpu = load_pipeline(os.path.join(PIPES, "cpu_build.json"))
    with pytest.raises(SystemExit, match="unknown variant 'nope'"):
        bench._variant_doc("nope", cpu, cpu)


def test_best_targeted_document_tunes_by_share_with_a_total_budget() -> None:
    from pipeline_model.passkinds.metaschedule.focus import focus_settings, is_targeted

    bench = _bench()
    doc = bench._targeted(load_pipeline(os.path.join(PIPES, "cpu_tuned.json")),
                          {"focus": "share", "min_share": 0.02, "min_trials": 8, "total_trials": 300,
                           "num_trials_per_iter": 16})
    tune = [s for s in doc.steps if s.pass_id == TUNE]
    assert len(tune) == 1 and is_targeted(tune[0].params)
    settings = focus_settings(tune[0].params)  # the app's own validation accepts it
    assert (settings["focus"], settings["min_share"], settings["total_trials"]) == ("share", 0.02, 300)
    small = bench._targeted(load_pipeline(os.path.join(PIPES, "cpu_tuned.json")),
                            {"focus": "share", "total_trials": 4})
    assert [s for s in small.steps if s.pass_id == TUNE][0].params["num_trials_per_iter"] == 4


def test_best_rerun_applies_the_stored_database_without_tuning(tmp_path) -> None:
    bench = _bench()
    base = load_pipeline(os.path.join(PIPES, "cpu_tuned_focus.json"))
    bench._set_tuning(base, None, str(tmp_path))
    doc = bench._replayed(base.clone())
    ids = [s.pass_id for s in doc.steps]
    assert TUNE not in ids and "relax.MetaScheduleTuneIRMod" not in ids
    assert ids == [i for i in (s.pass_id for s in base.steps) if i != TUNE]
    assert ids[-1] == APPLY and doc.steps[-1].params["work_dir"] == str(tmp_path)
    assert TUNE in [s.pass_id for s in base.steps]  # the original is left alone


def test_cpu_tuned_focus_pipeline_is_cpu_tuned_with_a_targeted_step() -> None:
    import json

    import jsonschema

    from pipeline_model import fileformat
    from pipeline_model.passkinds.metaschedule.focus import focus_settings, is_targeted

    path = os.path.join(PIPES, "cpu_tuned_focus.json")
    with open(path, encoding="utf-8") as fh:
        assert json.load(fh)["version"] == 1  # like the other bundled files: migrated on load
    doc = load_pipeline(path)
    jsonschema.Draft202012Validator(fileformat.load_schema()).validate(fileformat.pipeline_to_json(doc))
    plain = load_pipeline(os.path.join(PIPES, "cpu_tuned.json"))
    assert doc.name and doc.description and doc.target == plain.target
    assert [s.pass_id for s in doc.steps] == [s.pass_id for s in plain.steps]
    assert len({s.uid for s in doc.steps} | {s.uid for s in plain.steps}) == 2 * len(doc.steps)
    tune = next(s for s in doc.steps if s.pass_id == TUNE)
    assert is_targeted(tune.params)
    settings = focus_settings(tune.params, path)
    assert settings["focus"] == "share" and 0 < settings["min_share"] < 0.5
    assert settings["total_trials"] > 0 and settings["min_trials"] >= 1
    # the bench's "app best" column starts from this file
    assert _bench().BEST_TUNED == "cpu_tuned_focus"
