"""The pipeline documents of the app columns: tuning settings, the untuned variations of
``cpu_build_dlight.json`` (``--variants``), the time-budgeted tuning document of the tuned column
(:func:`budgeted`) and its replay (a re-run applies the stored database without tuning), the targeted one
(:func:`targeted`)."""

from __future__ import annotations

from typing import Any, Optional


#: Untuned variations of cpu_build_dlight.json (``--variants``; the app default before issue 11, with DLight's
#: CPU rules): name -> what it is.
VARIANT_DOCS = {
    "no_dlight": "cpu_build without the DLight step",
    "no_fuse": "cpu_build without FuseOps/FuseTIR",
    "no_mcpu": "cpu_build on the target without 'mcpu' (generic x86-64 code)",
    "no_transpose_matmul": "cpu_build without its FuseTransposeMatmul step (a weight transpose per call)",
    "no_transpose_matmul_no_dlight": "cpu_build without FuseTransposeMatmul and without the DLight step",
    "tuned_no_transpose_matmul": "cpu_tuned without its FuseTransposeMatmul step (tunes: costs --trials)",
}


def set_tuning(doc: Any, trials: Optional[int], work_dir: str) -> None:
    """Point the document's MetaSchedule steps at ``work_dir`` and give them the trial budget."""
    from pipeline_model.passkinds.metaschedule.config import tuning_mode

    for step in doc.steps:
        mode = tuning_mode(step.pass_id)
        if mode is not None:
            step.params["work_dir"] = work_dir
            if trials is not None and mode != "apply":
                step.params["max_trials_global"] = int(trials)
                step.params["num_trials_per_iter"] = min(int(step.params.get("num_trials_per_iter", 16)),
                                                         int(trials))


def variant_doc(name: str, cpu_doc: Any, tuned_doc: Any) -> Any:
    """The document of an untuned (or tuned) variation named in :data:`VARIANT_DOCS`."""

    if name == "no_dlight":
        doc = cpu_doc.clone()
        doc.steps = [s for s in doc.steps if s.pass_id != "dlight.ApplyDefaultSchedule"]
    elif name == "no_fuse":
        doc = cpu_doc.clone()
        doc.steps = [s for s in doc.steps if s.pass_id not in ("relax.FuseOps", "relax.FuseTIR")]
    elif name == "no_mcpu":
        doc = cpu_doc.clone()  # the bench drops 'mcpu' from the host target for this column
    elif name == "no_transpose_matmul":
        doc = cpu_doc.clone()
        doc.steps = [s for s in doc.steps if s.pass_id != "relax.FuseTransposeMatmul"]
    elif name == "no_transpose_matmul_no_dlight":
        doc = cpu_doc.clone()
        doc.steps = [s for s in doc.steps
                     if s.pass_id not in ("relax.FuseTransposeMatmul", "dlight.ApplyDefaultSchedule")]
    elif name == "tuned_no_transpose_matmul":
        doc = tuned_doc.clone()
        doc.steps = [s for s in doc.steps if s.pass_id != "relax.FuseTransposeMatmul"]
    else:
        raise SystemExit(f"unknown variant {name!r}; known: {', '.join(VARIANT_DOCS)}")
    doc.name = name
    return doc


#: The pipeline of the "app tuned" column, also the tuned candidate of "app best"
#: (``resources/pipelines/cpu_tuned_app.json``: the default pipeline, tuning seeded with its schedules,
#: time_budget_s = the minutes).
BEST_TUNED = "cpu_tuned_app"

#: Where the "app best" column keeps its final tuning plan (in the model's work folder): a re-run with the
#: same ``--work-dir`` and minutes applies that folder's database without tuning (only re-measures).
BEST_PLAN_FILE = "bench_best_plan.json"


def targeted(doc: Any, params: dict[str, Any]) -> Any:
    """``doc`` with its ``relax.MetaScheduleTuneTIR`` step made targeted (``focus`` etc. from ``params``)."""
    from pipeline_model.passkinds.metaschedule.config import tuning_mode

    for step in doc.steps:
        if tuning_mode(step.pass_id) == "tir":
            step.params.update(params)
            step.params["num_trials_per_iter"] = min(int(step.params.get("num_trials_per_iter", 16)),
                                                     int(params.get("total_trials") or 16))
    doc.name = f"{doc.name} (targeted)"
    return doc


def budgeted(doc: Any, params: dict[str, Any]) -> Any:
    """``doc`` with ``params`` (``time_budget_s``, ``min_trials``, ``num_trials_per_iter``) on its
    ``relax.MetaScheduleTuneTIR`` step (the app's own validation checks them when it runs)."""
    from pipeline_model.passkinds.metaschedule.config import tuning_mode

    for step in doc.steps:
        if tuning_mode(step.pass_id) == "tir":
            step.params.update(params)
    doc.name = f"{doc.name} ({float(params.get('time_budget_s') or 0):g} s)"
    return doc


def replayed(doc: Any) -> Any:
    """``doc`` without its tuning step: its ``MetaScheduleApplyDatabase`` applies what the work folder's
    database already holds (a tuning step leaves the module unchanged, so the result is the tuned
    pipeline's). A re-run of "app best" uses it to re-measure without tuning again, also for tasks that
    Stop Tuning ended at the deadline (which the reuse state would tune again)."""
    from pipeline_model.passkinds.metaschedule.config import tuning_mode

    doc.steps = [s for s in doc.steps if tuning_mode(s.pass_id) not in ("tir", "irmod")]
    doc.name = f"{doc.name} (stored database)"
    return doc


def read_json(path: str) -> Optional[dict[str, Any]]:
    """The JSON object in ``path``, or None."""
    import json

    try:
        with open(path, encoding="utf-8") as fh:
            data = json.load(fh)
        return data if isinstance(data, dict) else None
    except (OSError, ValueError):
        return None


def write_json(path: str, data: dict[str, Any]) -> None:
    """Write ``data`` to ``path`` as JSON."""
    import json

    with open(path, "w", encoding="utf-8") as fh:
        json.dump(data, fh, indent=1, sort_keys=True)
