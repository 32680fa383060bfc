"""The app's side of the bench: pipelines run in the app's engine on the model file, built and exported with the
app's own ``export_library`` (``model.so`` + ``weights.npz`` + ``model.json``), which the bench process then
loads and times next to the other systems (:mod:`bench.latency.systems`).

* TVM default: the model as the app imported it, built by ``tvm.compile``'s default pipeline (the engine's
  "baseline" build);
* an app column: the pipeline document run by the engine on the model (its passes are part of the build the user
  waits for), then built. Its build time is the pipeline's passes plus the build (``build_run`` without timing).

The pipeline documents themselves (tuning settings, variants, the targeted tuning of the tuned column) are
prepared by :mod:`bench.latency.docs`.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from typing import Any, Callable, Iterator, Optional


def progress_printer(label: str) -> Callable[[str, dict], None]:
    """An engine event listener printing one line per tuning progress event to stderr (not while a time-budgeted
    step is still looking its PrimFuncs up in the databases: no trials yet)."""
    def on_event(name: str, data: dict) -> None:
        if name == "tuning_progress" and data.get("phase") != "lookup":
            print(f"  [{label}] tuning {data.get('done')}/{data.get('total')} trials, "
                  f"{float(data.get('elapsed_s') or 0):.0f} s", file=sys.stderr, flush=True)
    return on_event


def make_client() -> Any:
    """An engine client that may load the bench's own model files (``.py`` models are code: consented)."""
    from pipeline_model.consent import Consent
    from pipeline_model.engine.client import EngineClient

    return EngineClient(step_timeout_s=900.0, consent=Consent.everything())


@contextlib.contextmanager
def plan_client(plan: Any) -> Iterator[Any]:
    """:func:`make_client`, closed after the block, with ``plan.target`` set to its first device's target."""
    client = make_client()
    try:
        plan.target = client.request("devices", {})["devices"][0]["target"]
        yield client
    finally:
        client.close()


def _build_args(doc: Any, *, key: Optional[str] = None, baseline: bool = False) -> dict[str, Any]:
    from pipeline_model import build_api

    return build_api.module_request(doc, key=key, baseline=baseline)


def build_and_export(client: Any, doc: Any, out_dir: str, *, key: Optional[str] = None,
                     baseline: bool = False) -> tuple[float, dict[str, Any]]:
    """Build the module (``key``, or the model as loaded with ``baseline``) once to measure the build
    (``build_run`` without timing or check), then ``export_library`` it into ``out_dir``.
    Returns ``(build seconds, export reply)``."""
    build_s = _build_once(client, doc, key=key, baseline=baseline)
    exp = _build_args(doc, key=key, baseline=baseline)
    exp["out_dir"] = os.path.abspath(out_dir)
    reply = client.request("export_library", exp)
    return build_s, reply


def _final_key(run: Any) -> Any:
    """The snapshot key of a run's final module (the model as loaded when no step changed it)."""
    return next((s.snapshot_key for s in reversed(run.steps) if s.snapshot_key), run.input_key)


def _build_once(client: Any, doc: Any, *, key: Optional[str] = None, baseline: bool = False) -> float:
    """Seconds of one ``build_run`` (no timing, no check) of the module ``key`` (or the model as loaded with
    ``baseline``): ``tvm.compile`` with its Relax pipeline, as :func:`build_and_export` measures it."""
    from pipeline_model.build_api import InputSpec

    args = _build_args(doc, key=key, baseline=baseline)
    args.update({"inputs": InputSpec().to_json(), "bench": None, "check": None, "check_against": "tvm",
                 "function": None, "profile": None})
    return float(client.request("build_run", args)["build_ms"]) / 1000.0


def build_rounds(client: Any, tvm_doc: Any, app_doc: Any, rounds: int, first: tuple[float, float]
                 ) -> tuple[list[float], list[float]]:
    """Build times of the TVM default and app default columns over ``rounds`` rounds, ``first`` (the columns'
    own builds, TVM then app) being round 0: each further round clears the engine's module cache (the loaded
    model stays), runs the app's pipeline again and builds its module (the pipeline's passes + the build), and
    builds the model as loaded with ``tvm.compile``'s default, alternating which goes first, so a change of
    machine load falls on both alike. Returns ``(tvm seconds, app seconds)``, one per round."""
    def app_build() -> float:
        client.request("cache_clear", {"models": False})
        run = client.run(app_doc, scripts=False)
        if not run.ok:
            raise RuntimeError(run.error or "the app's pipeline failed in a build round")
        key = _final_key(run)
        return sum(float(s.elapsed_ms or 0.0) for s in run.steps) / 1000.0 + _build_once(client, app_doc, key=key)

    tvm_s, app_s = [first[0]], [first[1]]
    for r in range(1, max(1, rounds)):
        if r % 2:
            app_s.append(app_build())
            tvm_s.append(_build_once(client, tvm_doc, baseline=True))
        else:
            tvm_s.append(_build_once(client, tvm_doc, baseline=True))
            app_s.append(app_build())
    return tvm_s, app_s


def tvm_default(client: Any, doc: Any, out_dir: str) -> dict[str, Any]:
    """The "TVM default" column: the model as imported by the app, built by ``tvm.compile``'s default."""
    try:
        build_s, _reply = build_and_export(client, doc, out_dir, baseline=True)
    except Exception as exc:  # noqa: BLE001 - the engine's error names the problem
        return {"error": str(exc)}
    return {"lib": out_dir, "build_s": build_s}


def _run_pipeline(client: Any, doc: Any, label: str, deadline_s: Optional[float]) -> tuple[Any, list]:
    """Run ``doc`` in the engine (Stop Tuning ``deadline_s`` after the start); ``(run, progress paces)``."""
    timer = None
    if deadline_s is not None:
        timer = threading.Timer(max(0.0, deadline_s), client.stop_tuning)
        timer.daemon = True
        timer.start()
    printer = progress_printer(label)
    paces: list[tuple[int, float]] = []  # (done, elapsed_s) of each progress event

    def on_event(event: str, data: dict) -> None:
        if event == "tuning_progress":
            paces.append((int(data.get("done") or 0), float(data.get("elapsed_s") or 0.0)))
        printer(event, data)

    try:
        # No step texts: the app's build does not print modules (the GUI asks for a text when shown).
        return client.run(doc, on_event=on_event, scripts=False), paces
    finally:
        if timer is not None:
            timer.cancel()


def app_column(client: Any, doc: Any, label: str, out_dir: Optional[str], *, deadline_s: Optional[float] = None,
               profile_top: int = 0) -> dict[str, Any]:
    """Run the pipeline ``doc`` in the engine, then build and export its module into ``out_dir``.

    Returns ``lib`` (the export folder), ``build_s`` (the pipeline's passes + the build), ``pipeline_s``,
    ``tuning`` (the tuning steps' reports), ``tuning_s``, ``pace`` ((trials, seconds) of the search from its
    first measured round), ``keep`` (the apply steps' ``keep_wins`` reports: which PrimFuncs kept a tuned schedule) and with ``profile_top`` the largest entries of the built module's profile; or
    ``error``. ``out_dir`` None runs the pipeline only (a calibration round of the tuned column)."""
    from pipeline_model import build_api

    run, paces = _run_pipeline(client, doc, label, deadline_s)
    # The pipeline's passes (the steps' own times); like the TVM column, the model import is not counted.
    pipeline_s = sum(float(s.elapsed_ms or 0.0) for s in run.steps) / 1000.0
    tuned = [s for s in run.steps if isinstance(s.report, dict) and s.report.get("tuning")]
    started = [p for p in paces if p[0] > 0]
    out: dict[str, Any] = {
        "tuning": [s.report["tuning"] for s in tuned],
        "tuning_s": sum(float(s.elapsed_ms or 0.0) for s in tuned) / 1000.0,
        "pace": (started[-1][0] - started[0][0], started[-1][1] - started[0][1]) if len(started) > 1 else (0, 0.0),
        "pipeline_s": pipeline_s,
        "keep": [s.report["apply_database"]["keep"] for s in run.steps if isinstance(s.report, dict)
                 and isinstance(s.report.get("apply_database"), dict) and "keep" in s.report["apply_database"]]}
    if not run.ok:
        failed = run.steps[run.failed_index] if run.failed_index is not None and run.failed_index < len(run.steps) else None
        detail = getattr(failed, "error", None) or ""
        return {**out, "error": run.error or f"step {run.failed_index} failed: {detail}"}
    if out_dir is None:
        return out
    key = _final_key(run)
    try:
        build_s, _reply = build_and_export(client, doc, out_dir, key=key)
    except Exception as exc:  # noqa: BLE001 - the engine's error names the problem
        return {**out, "error": str(exc)}
    out.update({"lib": out_dir, "build_s": pipeline_s + build_s, "key": key})
    if profile_top:
        prof = build_api.profile(client, doc, key=key)
        out["profile"] = [(e.name, e.kind, e.share, e.total_us) for e in prof.top(profile_top)]
    return out


def timed(label: str, fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """``fn()`` with a progress line on stderr (its wall time, or its error)."""
    t0 = time.perf_counter()
    col = fn()
    took = time.perf_counter() - t0
    print(f"  {label}: " + (f"ERROR {col['error'][:300]}" if "error" in col else
                            f"build {col.get('build_s', 0.0):.1f} s (done in {took:.0f} s)"),
          file=sys.stderr, flush=True)
    return col
