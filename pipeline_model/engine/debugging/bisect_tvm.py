"""Engine half of ``bisect``: test the module after a step and drive :class:`BisectPlan` (imports TVM).

A tested module is completed as the reference build does (:func:`build_module`: a not-yet-lowered module gets
``tvm.compile``'s default pipeline), run on the same inputs and weights as the reference
(:func:`make_arguments`, :func:`reference_values`) and compared with it (:func:`compare_outputs`).
The pipeline itself runs once through the ``run`` command, so every step's module is in the engine's cache.

A crash or a build failure needs no reference: the reference is built once, before the first tested module, under
its own progress (``build_progress`` phases ``reference`` .. ``reference_done``), so a reference that crashes the engine is the reference's failure, not
the tested module's. When the default-pipeline reference fails, the numbers are checked against the framework's
outputs (an ONNX / PyTorch model) or, without one, against the first tested module that built and ran; the report
names the reference used and why the default one failed.
"""

from __future__ import annotations

import time
from typing import Any, Optional

import numpy as np

from pipeline_model.debugging.bisect import (FAIL, PASS, SKIP, BisectPlan, BisectReport, TestedStep,
                                             leave_one_out_order, max_builds)
from pipeline_model.engine.handler_registry import HANDLERS

# The build functions these checks reuse (engine/build and the scriptlib rules exported scripts share).
from pipeline_model.engine.build.devices import device_for as _device_for
from pipeline_model.engine.build.errors import error_text
from pipeline_model.engine.build.inputs import reference_entry, reference_values
from pipeline_model.engine.build.measure import _is_vm_lowered, build_module, make_vm as _vm, run_function
from pipeline_model.engine.build.reference import TVM_REFERENCE, framework_kind, framework_outputs
from pipeline_model.engine.build.requests import DEFAULT_CHECK, progress as _progress
from pipeline_model.scriptlib.arguments import arguments_by_name, integer_input_bounds, make_arguments
from pipeline_model.scriptlib.functions import BuildError, entry_function, relax_function_names
from pipeline_model.scriptlib.outputs import compare_outputs, default_tolerance
from pipeline_model.scriptlib.quant_reference import check_reference

_DONE_STATES = ("changed", "unchanged", "skipped")


class Cancelled(Exception):
    """The client asked to stop between two builds."""


def first_line(text: Optional[str]) -> str:
    """The first non-empty line of ``text``."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()
    return ""


class Tester:
    """Builds, runs and checks modules of one pipeline against one reference (see the module docstring)."""

    def __init__(self, args: dict[str, Any], ctx: Any) -> None:
        run_args = args.get("run")
        if not isinstance(run_args, dict):
            raise BuildError("bisect request without run arguments")
        self.run_args = dict(run_args, until=None, scripts=False)
        self.ctx = ctx
        check = dict(args.get("check") or {})
        #: the tolerances the request gave; None: the run check's default for each tested module (:meth:`tolerance`)
        self.given: dict[str, Optional[float]] = {
            name: None if check.get(name) is None else float(check[name]) for name in ("rtol", "atol")}
        #: float tolerances where a request gave none (divergence rows compare one build's values with another's)
        self.rtol = DEFAULT_CHECK["rtol"] if self.given["rtol"] is None else float(self.given["rtol"])
        self.atol = DEFAULT_CHECK["atol"] if self.given["atol"] is None else float(self.given["atol"])
        self.against = str(args.get("check_against") or "tvm")
        if self.against not in ("tvm", "framework"):
            raise BuildError(f"check_against must be tvm or framework, not {self.against!r}")
        self.inputs = args.get("inputs")
        self.function = args.get("function")
        self.target = dict(self.run_args.get("target") or {"kind": "llvm"})
        _progress(ctx, "loading", f"loading model {self.run_args.get('model')}")
        self.loaded = ctx.load_model(str(self.run_args.get("model") or ""), self.run_args.get("base_dir"))
        self.builds = 0
        self._ref: Optional[list[np.ndarray]] = None
        self._ref_tried = False
        self.candidate_reference = False  # the reference is a tested module's outputs (no other works)
        self.reference_label = ""
        #: Why the default-pipeline reference failed (a crash an earlier engine died of, a build or run error).
        self.reference_failure: Optional[str] = None
        #: How it failed: ``"crash"``, ``"build"`` or ``"run"`` (None while it works or was not tried).
        self.reference_failure_kind: Optional[str] = None

    def check_cancel(self) -> None:
        """Raise :class:`Cancelled` when the client asked to stop."""
        if self.ctx.cancelled():
            raise Cancelled()

    def run_steps(self, steps: Optional[list[dict[str, Any]]] = None) -> dict[str, Any]:
        """Run the pipeline (``steps`` instead of the request's) through the ``run`` command; its reply."""
        run = HANDLERS.get("run")
        if run is None:
            raise BuildError("this engine has no run command")
        args = dict(self.run_args)
        if steps is not None:
            args["steps"] = steps
        return run(args, self.ctx)

    def arguments(self, mod: Any) -> tuple[str, list[np.ndarray], list[np.ndarray], list[dict[str, Any]]]:
        """``(entry, module arguments, reference arguments, described)`` as ``build_run`` makes them."""
        func_name = entry_function(mod, self.function)
        loaded = self.loaded
        bounds = integer_input_bounds(loaded.mod, func_name) if func_name in relax_function_names(loaded.mod) else None
        arrays, described = make_arguments(mod, func_name, loaded.params, self.inputs, bounds)
        values = reference_values(mod, func_name, loaded, arrays, described, self.inputs, bounds)
        ref_arrays = arguments_by_name(loaded.mod, reference_entry(loaded, func_name), values, arrays)
        return func_name, arrays, ref_arrays, described

    def reference(self, mod: Any) -> Optional[list[np.ndarray]]:
        """The reference outputs, computed once: the model as loaded on the CPU, or its framework; when the
        default-pipeline reference fails, the framework's outputs, else ``None`` (the first module that builds
        and runs becomes the reference, :meth:`evaluate`)."""
        if self._ref is None and not self._ref_tried:
            self._ref_tried = True
            func_name, arrays, ref_arrays, described = self.arguments(mod)
            n_in = len([d for d in described if not d.get("weight")])
            if self.against == "framework":
                self._ref, self.reference_label = framework_outputs(self.loaded, arrays[:n_in])
                return self._ref
            if self.reference_failure is None:
                self._default_reference(func_name, ref_arrays)
            if self.reference_failure is not None:
                self._fallback_reference(arrays[:n_in])
        return self._ref

    def default_pipeline_works(self) -> bool:
        """True when the default-pipeline reference built and ran for this very target (an llvm CPU): the model
        as loaded, completed with the stock lowering (position 0), is then known to build and run."""
        return (self.against == "tvm" and self.reference_failure is None and self._ref is not None
                and not self.candidate_reference and self.target.get("kind") == "llvm")

    def _default_reference(self, func_name: str, ref_arrays: list[np.ndarray]) -> None:
        """Build and run the model as loaded with ``tvm.compile``'s default pipeline (its own progress, so the
        client tells a crash here from a tested module's)."""
        _progress(self.ctx, "reference", "building the reference (model as loaded, default pipeline, CPU)")
        try:  # (a quantized model: each op in float64, as the run check compares it)
            ref_mod, quant_label = check_reference(self.loaded.mod)
            ex = build_module(ref_mod, {"kind": "llvm"}, baseline=True)
            dev = _device_for({"kind": "llvm"})
        except BuildError as exc:
            self.reference_failure = f"{TVM_REFERENCE}: build failed: {first_line(str(exc))}"
            self.reference_failure_kind = "build"
        else:
            try:
                self._ref = run_function(_vm(ex, dev), reference_entry(self.loaded, func_name), dev, ref_arrays)
                self.reference_label = quant_label or TVM_REFERENCE
            except Exception as exc:  # noqa: BLE001 - BuildError or a VM that cannot be made
                self.reference_failure = f"{TVM_REFERENCE}: run failed: {first_line(error_text(exc))}"
                self.reference_failure_kind = "run"
        _progress(self.ctx, "reference_done", "the reference failed" if self.reference_failure else "reference ready")

    def _fallback_reference(self, inputs: list[np.ndarray]) -> None:
        """The framework's outputs when the model came from ONNX / PyTorch with its weights (else none yet)."""
        if framework_kind(self.loaded) is None or not self.loaded.params:
            return
        try:
            self._ref, label = framework_outputs(self.loaded, inputs)
        except BuildError:
            return
        self.reference_label = f"{label} (fallback: the default-pipeline reference failed)"

    def evaluate(self, mod: Any, what: str = "the tested module") -> dict[str, Any]:
        """Build (completing it with the stock lowering when not yet lowered), run and check ``mod``: ``built``,
        ``ran``, ``kind`` (``None`` passed, ``"numeric"``, ``"build"``, ``"run"``), ``error``,
        ``max_abs_over_ref``, ``ms``. Without any reference, ``mod`` (``what``) becomes the reference."""
        self.check_cancel()
        t0 = time.perf_counter()
        out: dict[str, Any] = {"built": False, "ran": False, "kind": None, "error": None, "max_abs_over_ref": None}
        ref = self.reference(mod)
        func_name, arrays, _ref_arrays, _described = self.arguments(mod)
        self.check_cancel()
        self.builds += 1
        try:
            ex = build_module(mod, self.target)
        except BuildError as exc:
            out.update(kind="build", error=str(exc), ms=(time.perf_counter() - t0) * 1000.0)
            return out
        out["built"] = True
        dev = _device_for(self.target)
        try:
            got = run_function(_vm(ex, dev, mod), func_name, dev, arrays)
        except BuildError as exc:
            out.update(kind="run", error=str(exc), ms=(time.perf_counter() - t0) * 1000.0)
            return out
        except Exception as exc:  # noqa: BLE001 - a VM that cannot even be made
            out.update(kind="run", error=error_text(exc), ms=(time.perf_counter() - t0) * 1000.0)
            return out
        out["ran"] = True
        if ref is None:  # no reference works: the first module that runs is the one the others are checked against
            self._ref = ref = got
            self.candidate_reference = True
            self.reference_label = (f"{what} (the first tested module that built and ran: the default-pipeline "
                                    "reference failed and the model has no framework to check against)")
        rtol, atol, scale = self.tolerance(mod, ref)
        check = compare_outputs(got, ref, rtol, atol, scale)
        out["max_abs_over_ref"] = check.get("max_abs_over_ref")
        if not check["passed"]:
            out["kind"] = "numeric"
            out["error"] = check.get("error") or (
                f"check failed: max |diff|/max |ref| = {check.get('max_abs_over_ref'):.3g} "
                f"(rtol {rtol:g}, atol {atol:g}{', absolute' if scale == 'absolute' else ''})")
        out["ms"] = (time.perf_counter() - t0) * 1000.0
        return out


    def tolerance(self, mod: Any, ref: list[np.ndarray]) -> tuple[float, float, str]:
        """``(rtol, atol, scale)`` a tested module is checked at: the request's tolerances, else the run check's
        default for it (:func:`~pipeline_model.scriptlib.outputs.default_tolerance`: its lowest float precision, or,
        for a quantized model, one quantization step of the output, absolute), so bisect judges a module as Build &
        Run does and does not blame an int8 lowering for rounding a float32 build would not."""
        given = self.given
        if given["rtol"] is not None and given["atol"] is not None:
            return float(given["rtol"]), float(given["atol"]), "output"
        default = default_tolerance(mod, self.loaded.mod, self.loaded.params, ref)
        rtol = default["rtol"] if given["rtol"] is None else given["rtol"]
        atol = default["atol"] if given["atol"] is None else given["atol"]
        return float(rtol), float(atol), str(default.get("scale") or "output")


def well_formed_problem(mod: Any) -> str:
    """Why ``mod`` is not well formed (``relax.analysis.well_formed``'s first violation), ``""`` when it is."""
    from tvm import relax

    try:
        relax.analysis.well_formed(mod)
    except Exception as exc:  # noqa: BLE001 - the violation, as TVM words it
        return first_line(error_text(exc)) or type(exc).__name__
    return ""


def classify(result: dict[str, Any], failure: dict[str, Any]) -> str:
    """:data:`PASS`, :data:`FAIL` (wrong, or fails like the full pipeline) or :data:`SKIP` (does not build,
    unlike the failure looked for: the module cannot be completed)."""
    kind = result.get("kind")
    if kind is None:
        return PASS
    if kind in ("numeric", "run", "crash"):
        return FAIL
    if failure.get("kind") == "build" and first_line(result.get("error")) == failure.get("first_line"):
        return FAIL
    return SKIP


def _tested(position: int, step: int, pass_id: str, outcome: str, result: dict[str, Any],
            mode: str = "prefix") -> TestedStep:
    return TestedStep(position=position, step=step, pass_id=pass_id, outcome=outcome, mode=mode,
                      built=bool(result.get("built")), ran=bool(result.get("ran")),
                      max_abs_over_ref=result.get("max_abs_over_ref"), error=result.get("error"),
                      ms=round(float(result.get("ms") or 0.0), 3))


class Bisection:
    """One ``bisect`` request: run the pipeline, test the full module, bisect, maybe leave steps out."""

    def __init__(self, args: dict[str, Any], ctx: Any) -> None:
        self.tester = Tester(args, ctx)
        self.ctx = ctx
        self.report = BisectReport()
        self.steps: list[dict[str, Any]] = []
        self.keys: list[Optional[str]] = []  # key of the module after each doc step (or before, when not run)
        self.candidates: list[int] = []  # doc indices of the steps that changed the module
        self.input_key: Optional[str] = None
        # Results of an earlier engine that died during this bisection (a tested module crashed or hung it), by
        # (mode, position): the client sends them again, so nothing is built twice (``request_bisect``).
        self.known: dict[tuple[str, int], dict[str, Any]] = {}
        for item in args.get("known") or []:
            if item.get("mode") == "reference":  # the default-pipeline reference killed an earlier engine
                error = first_line((item.get("result") or {}).get("error")) or "the engine died"
                self.tester.reference_failure = f"{TVM_REFERENCE}: {error}"
                self.tester.reference_failure_kind = "crash"
            else:
                self.known[(str(item.get("mode") or "prefix"), int(item["position"]))] = dict(item["result"])
        self.tester.builds = len(self.known)

    def evaluate(self, mode: str, position: int, mod: Any) -> dict[str, Any]:
        """:meth:`Tester.evaluate`, or the result an earlier engine found (or died of) for the same module;
        a ``bisect_tested`` event carries each new result to the client."""
        known = self.known.get((mode, position))
        if known is not None:
            return known
        step, pass_id = self.step_of(position)
        if mode == "without":
            what = f"the pipeline without step {step} ({pass_id})"
        else:
            what = f"the module after step {step} ({pass_id})" if position else "the model as loaded"
        result = self.tester.evaluate(mod, what)
        self.ctx.emit("bisect_tested", {"mode": mode, "position": position, "result": result})
        return result

    def emit(self, message: str, **extra: Any) -> None:
        """A ``bisect_progress`` event (GUI progress) with the counts so far."""
        self.ctx.emit("bisect_progress", {"message": message, "builds": self.tester.builds,
                                          "budget": self.report.max_builds, "tested": len(self.report.tested),
                                          **extra})

    def key_at(self, position: int) -> str:
        """Snapshot key of the module after ``position`` candidate steps."""
        if position == 0:
            return str(self.input_key)
        return str(self.keys[self.candidates[position - 1]])

    def module(self, key: str) -> Any:
        """The cached module of ``key``."""
        mod = self.ctx.cache.get(key)
        if mod is None:
            raise BuildError(f"module {key!r} left the engine's cache during the bisection; run again")
        return mod

    def step_of(self, position: int) -> tuple[int, str]:
        """``(1-based step number, pass id)`` of a position (``(0, "")`` for the model as loaded)."""
        if position == 0:
            return 0, ""
        index = self.candidates[position - 1]
        return index + 1, str(self.steps[index].get("pass_id") or "")

    def run(self) -> dict[str, Any]:
        """The whole request; the report as JSON."""
        t0 = time.perf_counter()
        try:
            self._run()
        except Cancelled:
            self.report.cancelled = True
            self.report.message = "cancelled; " + (self.report.message or "no verdict yet")
        self.report.builds = self.tester.builds
        self.report.reference = self.tester.reference_label
        if self.tester.reference_failure and self.tester.against == "tvm":
            self.report.reference_failure = self.tester.reference_failure
            self.report.default_pipeline_fails = self.report.default_pipeline_fails or self.tester.reference_failure_kind
        self.report.total_ms = round((time.perf_counter() - t0) * 1000.0, 3)
        return self.report.to_json()

    def _run(self) -> None:
        report = self.report
        _progress(self.ctx, "pipeline", "running the pipeline")
        reply = self.tester.run_steps()
        if reply.get("error"):
            raise BuildError(f"the pipeline run failed: {reply['error']}")
        self.steps = list(reply.get("steps") or [])
        self.input_key = reply.get("input_key")
        key = self.input_key
        for step in self.steps:
            if step.get("state") in _DONE_STATES and step.get("snapshot_key"):
                key = step["snapshot_key"]
            self.keys.append(key)
        failed = reply.get("failed_index")
        if failed is not None and str(self.steps[failed].get("error") or "").startswith("nothing ran"):
            raise BuildError(str(self.steps[failed].get("error")))  # refused for lack of consent: no culprit
        if failed is not None:
            self._step_failed(int(failed))
            return
        self.candidates = [i for i, s in enumerate(self.steps) if s.get("state") == "changed"]
        report.candidates = [i + 1 for i in self.candidates]
        n = len(self.candidates)
        report.max_builds = max_builds(n)
        if n == 0:
            self._nothing_changed()
            return
        self._bisect(n)

    def _step_failed(self, failed: int) -> None:
        """A step raised while the pipeline ran: it is the culprit, unless an earlier step's output is not well
        formed while that step's input was (the step that raises only tripped over the ill-formed IR)."""
        report = self.report
        step = self.steps[failed]
        error = first_line(step.get("error"))
        report.failure = {"kind": "step", "first_line": error, "error": step.get("error")}
        report.method = "run"
        culprit, reason = failed, ""
        found = self._first_ill_formed(failed)
        if found is not None:
            culprit, reason = found
            report.method = "well-formed"
        report.culprit_step, report.culprit_pass_id = culprit + 1, str(self.steps[culprit].get("pass_id") or "")
        report.last_good_key = self.keys[culprit - 1] if culprit > 0 else self.input_key
        failing = f"step {failed + 1} ({step.get('pass_id') or ''})"
        if culprit == failed:
            report.message = f"{failing} failed while the pipeline ran: {error}"
        else:
            report.culprit_key = self.keys[culprit]
            report.message = (f"culprit: step {culprit + 1} ({report.culprit_pass_id}) produced IR that is not "
                              f"well-formed: {reason}; {failing} failed on it: {error}")

    def _first_ill_formed(self, failed: int) -> Optional[tuple[int, str]]:
        """``(doc index, reason)`` of the first step before ``failed`` whose output is not well formed
        (``relax.analysis.well_formed``) while its input was; ``None`` when there is none."""
        verdicts: dict[str, str] = {}

        def problem(key: Optional[str]) -> Optional[str]:
            """Why the module of ``key`` is not well formed ("" when it is; None when it is not cached)."""
            if key is None or self.ctx.cache.get(key) is None:
                return None
            if key not in verdicts:
                verdicts[key] = well_formed_problem(self.ctx.cache.get(key))
            return verdicts[key]

        for index in range(failed):
            if self.steps[index].get("state") != "changed":
                continue
            before = self.keys[index - 1] if index > 0 else self.input_key
            after = problem(self.keys[index])
            if after and problem(before) == "":
                return index, after
        return None

    def _nothing_changed(self) -> None:
        """No step changed the module: it is the model as loaded; it must still build and run (else TVM's
        default pipeline fails on it, and no step is to blame)."""
        report = self.report
        tester = self.tester
        tester.reference(self.module(self.key_at(0)))  # the model as loaded, built by the default pipeline
        result: dict[str, Any] = {"kind": None}
        if tester.default_pipeline_works():
            outcome = PASS
        elif tester.reference_failure is not None and tester.against == "tvm" and tester.target.get("kind") == "llvm":
            # the reference was this very module built for this target: its failure is the module's
            kind = tester.reference_failure_kind or "build"
            result = {"built": kind != "build", "ran": False, "kind": kind, "error": tester.reference_failure}
            outcome = FAIL
            report.tested.append(_tested(0, 0, "", FAIL, result))
        else:
            outcome, result = self._test_position(0, None)
        if outcome == PASS:
            report.ok = True
            report.message = "no step changed the module: nothing to bisect (the model as loaded builds and runs)"
            return
        kind = str(result.get("kind") or "build")
        report.failure = {"kind": kind, "first_line": first_line(result.get("error")), "error": result.get("error")}
        if kind == "numeric":  # against a framework reference: the default pipeline's numbers are wrong
            report.default_pipeline_fails = "numeric"
            report.message = ("no step changed the module, and the model as loaded gives a wrong result even with "
                              f"no step (TVM's default pipeline: a TVM bug): {report.failure['first_line']}")
            return
        report.default_pipeline_fails = kind
        verb = {"run": "does not run", "crash": "crashes"}.get(kind, "does not build")
        report.message = (f"the model {verb} even with no step (TVM's default pipeline fails on it: a TVM bug); "
                          f"no step to blame: {report.failure['first_line']}")

    def _test_position(self, position: int, failure: Optional[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
        step, pass_id = self.step_of(position)
        what = f"the module after step {step} ({pass_id})" if position else "the model as loaded"
        self.emit(f"testing {what}", step=step, position=position, mode="prefix")
        result = self.evaluate("prefix", position, self.module(self.key_at(position)))
        outcome = classify(result, failure) if failure is not None else (PASS if result["kind"] is None else FAIL)
        self.report.tested.append(_tested(position, step, pass_id, outcome, result))
        return outcome, result

    def _bisect(self, n: int) -> None:
        report = self.report
        plan = BisectPlan(n)
        outcome, result = self._test_position(n, None)
        if outcome == PASS:
            report.ok = True
            if self.tester.candidate_reference:  # it was its own reference
                report.message = "the final module builds and runs; its numbers could not be checked (no reference)"
            else:
                report.message = (f"the pipeline is correct: the final module matches the reference "
                                  f"(max |diff|/max |ref| = {result.get('max_abs_over_ref') or 0:.3g})")
            return
        failure = {"kind": result["kind"], "first_line": first_line(result.get("error")), "error": result.get("error")}
        report.failure = failure
        plan.record(n, FAIL)
        zero: Optional[str] = None
        if (failure["kind"] in ("build", "run", "crash") and self.tester.reference_failure is None
                and not self.tester.default_pipeline_works()):
            # A crash or a build failure needs no reference; but when the stock lowering itself fails on the model
            # as loaded, every completed prefix fails with it and only the pipeline as written can tell (the
            # reference, when it built and ran for this target, already showed that the stock lowering works).
            zero, zero_result = self._test_position(0, failure)
            if zero != PASS:
                report.default_pipeline_fails = str(zero_result.get("kind") or "build")
        if self.tester.reference_failure is not None or zero not in (None, PASS):
            if not self._leave_one_out(1, n, n, failure):
                report.message = ("TVM's default pipeline fails on the model as loaded, and leaving single steps "
                                  f"out of the pipeline does not help: no step to blame ({failure['first_line']})")
            return
        position = plan.next_position()
        while position is not None:
            outcome, _result = self._test_position(position, failure)
            plan.record(position, outcome)
            position = plan.next_position()
        report.skipped = sorted(self.step_of(p)[0] for p in plan.skipped)
        first, last = plan.culprit_range() or (n, n)
        if first == last and not any(o == PASS for o in plan.outcomes.values()):
            # Every tested prefix failed: is the model as loaded (completed the same way) good?
            if (zero or self._test_position(0, failure)[0]) != PASS:
                if not self._leave_one_out(first, last, n, failure):
                    report.message = ("every module fails, the model as loaded (completed with the stock lowering) "
                                      "too, and leaving single steps out does not help: no step to blame "
                                      f"({failure['first_line']})")
                return
        elif first != last or (last == n and n > 1 and _is_vm_lowered(self.module(self.key_at(n)))):
            if self._leave_one_out(first, last, n, failure):
                return
        if first == last:
            self._name(first, "bisect")
        else:
            a, b = self.step_of(first)[0], self.step_of(last)[0]
            report.culprit_range = [a, b]
            report.message = (f"the failure starts in steps {a}..{b}; the modules between could not be completed "
                              "(skipped), and leaving single steps out did not isolate one")

    def _name(self, position: int, method: str) -> None:
        report = self.report
        step, pass_id = self.step_of(position)
        report.culprit_step, report.culprit_pass_id, report.method = step, pass_id, method
        index = self.candidates[position - 1]
        report.last_good_key = self.keys[index - 1] if index > 0 else self.input_key
        report.culprit_key = self.keys[index]
        how = ("the first step after which the result is wrong or the build fails" if method == "bisect"
               else "leaving it out makes the pipeline pass")
        report.message = f"culprit: step {step} ({pass_id}): {how} ({(report.failure or {}).get('first_line', '')})"

    def _leave_one_out(self, first: int, last: int, n: int, failure: dict[str, Any]) -> bool:
        """Leave single candidate steps out (suspected range first); True when one removal passes."""
        self.report.method = "leave-one-out"
        for position in leave_one_out_order(first, last, n):
            index = self.candidates[position - 1]
            steps = [dict(s) for s in self.tester.run_args.get("steps") or []]
            steps[index]["enabled"] = False
            step, pass_id = self.step_of(position)
            self.emit(f"testing the pipeline without step {step} ({pass_id})", step=step, position=position,
                      mode="without")
            reply = self.tester.run_steps(steps)
            if reply.get("error") or reply.get("failed_index") is not None:
                self.report.tested.append(TestedStep(position, step, pass_id, SKIP, mode="without",
                                                     error=first_line(reply.get("error")) or "a later step failed"))
                continue
            final = reply.get("input_key")
            for item in reply.get("steps") or []:
                if item.get("state") in _DONE_STATES and item.get("snapshot_key"):
                    final = item["snapshot_key"]
            result = self.evaluate("without", position, self.module(str(final)))
            outcome = classify(result, failure)
            self.report.tested.append(_tested(position, step, pass_id, outcome, result, mode="without"))
            if outcome == PASS:
                self._name(position, "leave-one-out")
                return True
        self.report.method = "bisect"
        return False
