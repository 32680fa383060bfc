"""The bundled tuned pipeline with packed weights (resources/pipelines/cpu_tuned_prepack.json): TVM's layout-rewrite
path with the weights bound as constants, so the weight packing is folded at build time (runs once, never per
inference), then the untuned leftovers get the app's schedule rule."""

from __future__ import annotations

import logging
import os

import numpy as np
import pytest

from pipeline_model.fileformat import load_pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPELINE = os.path.join(ROOT, "resources", "pipelines", "cpu_tuned_prepack.json")
TARGET = {"kind": "llvm", "num-cores": 2}


def test_prepack_pipeline_is_the_layout_rewrite_path_with_visible_steps():
    import json

    import jsonschema

    from pipeline_model import fileformat
    from pipeline_model.passkinds.metaschedule.focus import focus_settings, is_budgeted

    doc = load_pipeline(PIPELINE)
    jsonschema.Draft202012Validator(fileformat.load_schema()).validate(fileformat.pipeline_to_json(doc))
    with open(PIPELINE, encoding="utf-8") as fh:
        assert json.load(fh)["version"] == 1
    ids = [s.pass_id for s in doc.steps]
    assert all(s.enabled for s in doc.steps) and len({s.uid for s in doc.steps}) == len(ids)
    # weights bound first, so FoldConstant can pack them; layout-free buffers marked before tuning
    assert ids[0] == "weights.BindAsConstants"
    order = ["relax.FuseTIR", "relax.AttachAttrLayoutFreeBuffers", "relax.MetaScheduleTuneTIR",
             "relax.MetaScheduleApplyDatabase", "relax.SplitLayoutRewritePreproc"]
    assert [ids.index(i) for i in order] == sorted(ids.index(i) for i in order)
    after = ids[ids.index("relax.SplitLayoutRewritePreproc"):]
    assert "relax.FoldConstant" in after
    # what tuning left untouched gets the app's schedule rule, not a serial loop, before the packing is split out
    # and folded: the rules pack weights too (after the fold, theirs ran at every call)
    dlight = doc.steps[ids.index("dlight.ApplyDefaultSchedule")]
    assert ids.index("relax.MetaScheduleApplyDatabase") < ids.index("dlight.ApplyDefaultSchedule") < ids.index(
        "relax.SplitLayoutRewritePreproc")
    assert "app.CPUParallel" in dlight.params["rules"]
    tune = doc.steps[ids.index("relax.MetaScheduleTuneTIR")]
    assert is_budgeted(tune.params) and focus_settings(tune.params, PIPELINE)["min_trials"] >= 1


@pytest.mark.slow
def test_weights_are_packed_at_build_time(tmp_path):
    """One convolution tuned cheaply (2 replayed traces), then the pipeline's own post-tuning steps: the packing
    block is split out and folded into the constant weight, and so are those of the functions the app's rules
    schedule (the other convolutions, the classifier's one-row product): no packing function is left to run per
    call, and the module computes what the untuned one does."""
    import tvm
    from tvm import relax
    from tvm.s_tir import meta_schedule as ms

    from pipeline_model.importers import load_tvm
    from pipeline_model.passkinds.bind_weights.script import bind_model_weights
    from pipeline_model.passkinds.metaschedule.builder_tvm import tuning_target
    from pipeline_model.passkinds.metaschedule.config import TuningConfig
    from pipeline_model.passkinds.metaschedule.script_measure import close_tuning_tools, tuning_builder, tuning_runner

    doc = load_pipeline(PIPELINE)
    ids = [s.pass_id for s in doc.steps]
    loaded = load_tvm.load_model(os.path.join(ROOT, "resources", "models", "cnn_bn.onnx"), None)
    before = [bind_model_weights(loaded.params)] + [
        getattr(relax.transform, i.split(".", 1)[1])() for i in ids[1:ids.index("relax.MetaScheduleTuneTIR")]]
    with tvm.transform.PassContext(opt_level=3):
        mod = tvm.transform.Sequential(before)(loaded.mod)
    target = tuning_target(TARGET)
    conv = max((gv.name_hint for gv, f in mod.functions_items() if "conv2d" in gv.name_hint), key=len)
    assert mod[conv].attrs["layout_free_buffers"], "AttachAttrLayoutFreeBuffers marks the constant weight"
    work = str(tmp_path / "wd")
    options = TuningConfig(num_trials_per_iter=2, builder_workers=1).to_json()
    # MetaSchedule's logging set-up fails on unnamed handlers (pytest's); tasks_tvm._task_loggers does the same
    meta_logger = logging.getLogger("tvm.s_tir.meta_schedule")
    unnamed = [h for h in meta_logger.handlers if not h.get_name()]
    for h in unnamed:
        meta_logger.removeHandler(h)
    builder, runner = tuning_builder(options), tuning_runner(options)
    try:
        ms.tir_integration.tune_tir(tvm.IRModule({"main": mod[conv]}), target, work, 2, num_trials_per_iter=2,
                                    builder=builder, runner=runner, strategy="replay-trace",
                                    task_scheduler="round-robin", cost_model="random")  # the search is not the subject
    finally:
        close_tuning_tools(builder, runner)
        for h in unnamed:
            meta_logger.addHandler(h)
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d
    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul
    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    def step(pass_id):  # type: ignore[no-untyped-def]
        if pass_id == "dlight.ApplyDefaultSchedule":
            return dl.ApplyDefaultSchedule(CPUMatmul(), CPUConv2d(), CPUParallel())
        return getattr(relax.transform, pass_id.split(".", 1)[1])()

    with target:
        post = [relax.transform.MetaScheduleApplyDatabase(work_dir=work)] + [
            step(i) for i in ids[ids.index("relax.MetaScheduleApplyDatabase") + 1:]]
        with tvm.transform.PassContext(opt_level=3):
            out = tvm.transform.Sequential(post)(mod)
    names = [gv.name_hint for gv in out.get_global_vars()]
    assert f"{conv}_prepacked" in names, names  # the tuned convolution reads the packed weight
    assert len([n for n in names if n.endswith("_prepacked")]) > 1, names  # so do the rules' functions
    assert "layout_rewrite_preproc" not in out.script()  # the packing itself was folded away
    main = out["main"].script()
    assert "_weight_prepack" not in main, main  # no packing left to run per call
    for line in (x for x in main.splitlines() if "_prepacked" in x):
        assert line.count('metadata["ir.GenericConst"]') >= 1, line  # a constant argument: packed at build time
    ex, ex0 = tvm.compile(out, target=target), tvm.compile(mod, target=target)
    shape = [int(s) for s in out["main"].params[0].ty.shape]
    x = tvm.runtime.tensor(np.random.default_rng(0).standard_normal(shape).astype("float32"))
    got = relax.VirtualMachine(ex, tvm.cpu())["main"](x).numpy()
    want = relax.VirtualMachine(ex0, tvm.cpu())["main"](x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
