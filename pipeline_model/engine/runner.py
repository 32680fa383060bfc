"""Runs the steps of a pipeline on a model inside the engine process (imports TVM).

For each enabled step in order the runner builds the pass with
:func:`pipeline_model.passkinds.catalogue_tvm.make_pass`, applies it under a ``tvm.transform.PassContext`` (the pipeline's ``pass_context`` settings) whose
pass instrument records the nested passes (name, time, depth, changed) and checks the cancel
flag before every pass, and records whether the step changed the module (structural equality, never a
text comparison), the wall time and on failure the error, traceback and last good IR.

TVMScript is printed only when asked for: with ``"scripts": false`` in the run arguments the runner
prints nothing for the steps that succeed (the texts stay ``None`` and are printed on demand by the
``snapshot`` command from the module cache); with ``"scripts": true`` (the default, for clients that
do not say) every step's text is printed and sent. A failed step's last good IR is always sent.

Modules are cached under ``sha256(model key, target, [(pass_id, params) of the enabled steps up to k])``
(a hash chain), together with the step's outcome and script, so editing step k re-runs only k..n;
reused steps come back with ``cached=True``.

Run arguments (built by :meth:`pipeline_model.engine.client.EngineClient.run`)::

    {"model": spec, "base_dir": str | None, "target": {...}, "until": int | None,
     "trust_custom_code": bool, "pipeline_path": str | None, "work_dir": str | None,
     "steps": [{"uid", "pass", "params", "enabled", "placeholder"}],
     "known_keys": [snapshot keys whose scripts the client already has; those scripts are not sent],
     "scripts": bool (print and send every step's TVMScript; default true)}
"""

from __future__ import annotations

import hashlib
import json
import os
import time
import traceback
from typing import Any, Callable, Optional

import tvm
import tvm_ffi

from pipeline_model.engine import protocol
from pipeline_model.passkinds.base import PassKind as PassKindBase
from pipeline_model.scriptlib.host import native_target
from pipeline_model.engine.results import (
    CANCELLED,
    CHANGED,
    FAILED,
    NOT_RUN,
    SKIPPED,
    UNCHANGED,
    NestedPassResult,
    RunResult,
    StepResult,
)


class RunCancelled(Exception):
    """Raised by the instrument before a pass when the client cancelled the run."""


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _sha(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


def _referenced_files(params: dict[str, Any], base_dir: Optional[str]) -> list[str]:
    """Content hashes of files that string parameters point to (so editing such a file re-runs the step)."""
    hashes = []
    for name in sorted(params):
        value = params[name]
        if not isinstance(value, str) or not value or "\n" in value or len(value) > 4096:
            continue
        path = os.path.expanduser(value)
        if not os.path.isabs(path) and base_dir:
            path = os.path.join(base_dir, path)
        if not os.path.lexists(path):
            continue
        from pipeline_model import safe_files

        try:  # streamed, size-capped; FIFOs, devices and /proc are refused, never read
            hashes.append(f"{name}={safe_files.sha256_file(path, what=f'parameter {name!r}')}")
        except OSError as exc:
            hashes.append(f"{name}=unreadable:{exc}")
    return hashes


def input_key(model_key: str, target: dict[str, Any]) -> str:
    """Cache key of the input module (model before any step) for a target."""
    return _sha("input", model_key, _canonical(target))


def step_key(previous_key: str, pass_id: str, params: dict[str, Any], base_dir: Optional[str] = None,
             extra: str = "") -> str:
    """Cache key after a step, chained on the key before it (``extra``: more state the step reads,
    e.g. :func:`cache_key_extra`)."""
    parts = [*_referenced_files(params, base_dir)] + ([extra] if extra else [])
    return _sha("step", previous_key, pass_id, _canonical(params), *parts)


def modules_equal(before: Any, after: Any) -> bool:
    """Structural equality of two IRModules (identity first, it is free)."""
    if before.same_as(after):
        return True
    return bool(tvm_ffi.structural_equal(before, after))


class _Record:
    __slots__ = ("name", "elapsed_ms", "depth", "before", "after")

    def __init__(self, name: str, elapsed_ms: float, depth: int, before: Any, after: Any) -> None:
        self.name = name
        self.elapsed_ms = elapsed_ms
        self.depth = depth
        self.before = before
        self.after = after


@tvm.ir.instrument.pass_instrument
class StepInstrument:
    """Records every pass run inside a step (pre-order) and stops before a pass when cancelled."""

    def __init__(self, cancelled: Callable[[], bool]) -> None:
        self.reset(cancelled)

    def reset(self, cancelled: Callable[[], bool]) -> None:
        """Start a step: no records, this cancel flag."""
        self._cancelled = cancelled
        self.stack: list[tuple[str, float, Any, int]] = []
        self.records: list[Optional[_Record]] = []
        self.cancel_hit = False

    def release(self) -> None:
        """Drop the step's records (and the modules they hold) once they were reported."""
        self.reset(_never)

    def run_before_pass(self, mod: Any, info: Any) -> None:
        if self._cancelled():
            self.cancel_hit = True
            raise RunCancelled(f"cancelled before pass {info.name}")
        self.stack.append((str(info.name), time.perf_counter(), mod, len(self.records)))
        self.records.append(None)

    def run_after_pass(self, mod: Any, info: Any) -> None:
        if not self.stack:
            return
        name, start, before, slot = self.stack.pop()
        self.records[slot] = _Record(name, (time.perf_counter() - start) * 1000.0, len(self.stack), before, mod)


def _never() -> bool:
    return False


_SHARED_INSTRUMENT: Optional[StepInstrument] = None


def step_instrument(cancelled: Callable[[], bool]) -> StepInstrument:
    """The engine's one :class:`StepInstrument`, reset for a new step.

    A pass instrument's FFI object holds its Python methods, which hold the instrument: a cycle
    through C++ that Python's collector cannot see, so an instrument per step (with the modules its
    records hold) was never freed. One shared instrument, released after each step, keeps the
    engine's memory flat; steps run one at a time, so sharing is safe."""
    global _SHARED_INSTRUMENT
    if _SHARED_INSTRUMENT is None:
        _SHARED_INSTRUMENT = StepInstrument(cancelled)
    _SHARED_INSTRUMENT.reset(cancelled)
    return _SHARED_INSTRUMENT


class _ScriptMemo:
    """Prints each distinct module object once."""

    def __init__(self) -> None:
        self._items: list[tuple[Any, str]] = []

    def add(self, mod: Any, script: str) -> None:
        self._items.append((mod, script))

    def script(self, mod: Any) -> str:
        for known, text in self._items:
            if known.same_as(mod):
                return text
        text = mod.script()
        self._items.append((mod, text))
        return text


def _pass_build_context(args: dict[str, Any], target: Any, ctx: Any, index: int,
                        input_key: Optional[str] = None, weights: Optional[dict[str, Any]] = None) -> Any:
    """The ``PassBuildContext`` for step ``index`` (whose input module is snapshot ``input_key``)."""
    from pipeline_model.engine.build.profile import profile_module, time_variants
    from pipeline_model.passkinds import catalogue_tvm
    from pipeline_model.work_dirs import run_work_dir

    def emit(event: str, data: dict[str, Any]) -> None:
        payload = {"index": index}
        payload.update(data or {})
        ctx.emit(event, payload)

    def profile(mod: Any, fresh: bool = False) -> tuple[dict[str, Any], str]:
        # fresh: measure ``mod`` now (time-budgeted tuning profiles its tuned module), not the stored profile
        return profile_module(mod, dict(args.get("target") or {"kind": "llvm"}), None if fresh else input_key)

    return catalogue_tvm.PassBuildContext(
        target=target,
        base_dir=args.get("base_dir"),
        trust_custom_code=bool(args.get("trust_custom_code")),
        work_dir=run_work_dir(args),
        emit=emit,
        cancelled=ctx.cancelled,
        step_number=index + 1,
        should_stop_tuning=getattr(ctx, "stop_tuning_requested", None),
        input_key=input_key,
        weights=lambda: weights,
        profile=profile,
        measure=lambda mods: time_variants(mods, dict(args.get("target") or {"kind": "llvm"}), ctx.cancelled),
    )


def cache_key_extra(pass_id: str, params: dict[str, Any], args: dict[str, Any]) -> str:
    """More state step ``pass_id`` reads, for its cache key: its pass kind's
    :meth:`~pipeline_model.passkinds.base.PassKind.cache_key_extra` (e.g. the tuning database of a
    MetaSchedule step); "" for most steps."""
    from pipeline_model.passkinds.registry import kind_for

    kind = kind_for(pass_id)
    return kind.cache_key_extra(pass_id, params, args) if kind is not None else ""


def _error_text(exc: BaseException) -> str:
    """A failed step's error text: the rule reproducers carry too (one copy)."""
    from pipeline_model.debugging.reproducer import exception_text

    return str(exception_text(exc))


class _RunOutput:
    """What one run sends back: the :class:`RunResult` and the step JSON, without the scripts the client
    already holds (``known_keys``: snapshot keys are content hashes)."""

    def __init__(self, args: dict[str, Any], ctx: Any) -> None:
        self.t_start = time.perf_counter()
        self.result = RunResult()
        self.ctx = ctx
        self.steps_in = list(args.get("steps") or [])
        # Scripts the client already holds (by snapshot key) are not sent again: keys are content hashes.
        self.known = set(args.get("known_keys") or [])
        # Print and send each step's text only when the client asked for it (else on demand: ``snapshot``).
        self.want_scripts = bool(args.get("scripts", True))

    def not_run(self, i: int, step: dict[str, Any]) -> StepResult:
        """Step ``i`` as not run (its state until it runs)."""
        return StepResult(index=i, uid=str(step.get("uid", "")), pass_id=str(step.get("pass", "")),
                          title=self.ctx.pass_title(str(step.get("pass", ""))), state=NOT_RUN)

    def step_json(self, res: StepResult) -> dict[str, Any]:
        """``res`` as JSON, without the scripts the client holds."""
        data = res.to_json()
        if self.known:
            if data.get("snapshot_key") in self.known:
                data["script"] = None
            for item in data.get("nested") or []:
                if item.get("snapshot_key") in self.known:
                    item["script"] = None
        return data

    def step_finished(self, res: StepResult) -> None:
        """Send the ``step_finished`` event of ``res``."""
        self.ctx.emit(protocol.EV_STEP_FINISHED, {"step": self.step_json(res)})

    def fail_before_steps(self, error: str) -> dict[str, Any]:
        """The reply of a run that could not start: ``error``, every step not run."""
        self.result.error = error
        self.result.steps = [self.not_run(i, s) for i, s in enumerate(self.steps_in)]
        return self.finish()

    def finish(self) -> dict[str, Any]:
        """The run's reply (``RunResult.to_json()``)."""
        result = self.result
        result.total_ms = (time.perf_counter() - self.t_start) * 1000.0
        data = result.to_json()
        data["steps"] = [self.step_json(s) for s in result.steps]
        if result.input_key in self.known:
            data["input_script"] = None
        return data


class _Position:
    """Where the run stands: the current module, its script (or None) and its snapshot key."""

    def __init__(self, mod: Any, script: Optional[str], key: str) -> None:
        self.mod, self.script, self.key = mod, script, key


def run_pipeline(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Run the steps described by ``args`` (see the module docstring); returns ``RunResult.to_json()``."""
    out = _RunOutput(args, ctx)
    result = out.result
    until = args.get("until")
    try:
        target_dict = dict(args.get("target") or {"kind": "llvm"})
        target = tvm.target.Target(native_target(target_dict))  # "mcpu": "native": this machine's CPU
    except Exception as exc:  # noqa: BLE001
        source = f"{args['pipeline_path']}: " if args.get("pipeline_path") else ""
        return out.fail_before_steps(f"{source}bad target {args.get('target')!r}: {_error_text(exc)}")
    from pipeline_model.engine import pass_context_tvm  # PassContext settings of the pipeline (checked before any step)

    pc_fingerprint, pc_problem = pass_context_tvm.prepare(args.get("pass_context"), args.get("pipeline_path"))
    if pc_problem:
        return out.fail_before_steps(pc_problem)
    try:
        loaded = ctx.load_model(str(args.get("model") or ""), args.get("base_dir"))
    except Exception as exc:  # noqa: BLE001 - loaders raise ModelLoadError, anything else is reported too
        return out.fail_before_steps(f"model {args.get('model')!r} could not be loaded: {exc}")

    pos = _input_position(out, loaded, target_dict)
    _preflight_warnings(out.steps_in, ctx, target_dict)

    stop = False  # a step failed or the run was cancelled: the rest stays NOT_RUN
    for i, step in enumerate(out.steps_in):
        res = out.not_run(i, step)
        result.steps.append(res)
        if stop or (until is not None and i > int(until)):
            continue
        if not step.get("enabled", True) or step.get("placeholder"):
            res.state = SKIPPED
            res.script, res.snapshot_key = pos.script, pos.key
            if step.get("placeholder"):
                res.error = str(step.get("placeholder"))
            out.step_finished(res)
            continue
        if ctx.cancelled():
            res.state = CANCELLED
            result.cancelled = True
            stop = True
            continue
        pass_id, params = str(step.get("pass", "")), dict(step.get("params") or {})
        new_key = step_key(pos.key, pass_id, params, args.get("base_dir"),
                           cache_key_extra(pass_id, params, args) + pc_fingerprint)
        if _reuse_cached(out, res, new_key, pos):
            continue
        stop = not _run_step(out, res, args, target, loaded, pos, new_key)
    return out.finish()


def _input_position(out: _RunOutput, loaded: Any, target_dict: dict[str, Any]) -> _Position:
    """The input module (cached under :func:`input_key`), recorded in the result and announced with
    ``model_loaded``."""
    ctx, want_scripts = out.ctx, out.want_scripts
    key = input_key(loaded.key, target_dict)
    entry = ctx.cache.entry(key)
    if entry is None:
        entry = ctx.cache.put(key, loaded.mod, loaded.mod.script() if want_scripts else None)
    elif entry.script is None and want_scripts:
        ctx.cache.set_script(key, entry.mod.script())
    mod, script = entry.mod, (entry.script if want_scripts else None)
    out.result.input_key, out.result.input_script = key, script
    ctx.emit(protocol.EV_MODEL_LOADED, {"input_key": key, "input_script": None if key in out.known else script,
                                        "source": loaded.source})
    return _Position(mod, script, key)


def _reuse_cached(out: _RunOutput, res: StepResult, new_key: str, pos: _Position) -> bool:
    """When the step's outcome is cached under ``new_key``: fill ``res`` from it (``cached=True``), move
    ``pos`` on and return True; else False."""
    ctx, want_scripts = out.ctx, out.want_scripts
    hit = ctx.cache.entry(new_key)
    if hit is None or hit.info.get("state") not in (CHANGED, UNCHANGED):
        return False
    if hit.script is None and want_scripts:
        ctx.cache.set_script(new_key, hit.mod.script())
    hit_script = hit.script if want_scripts else None
    res.state = hit.info["state"]
    res.elapsed_ms = float(hit.info.get("elapsed_ms", 0.0))
    res.nested = [NestedPassResult(**n) for n in hit.info.get("nested", [])]
    for item in res.nested:  # texts live under the nested keys, printed when wanted
        item.script = (ctx.cache.script(item.snapshot_key)
                       if want_scripts and item.changed and item.snapshot_key in ctx.cache else None)
    res.report = dict(hit.info.get("report") or {})
    res.script, res.snapshot_key, res.cached = hit_script, new_key, True
    pos.mod, pos.script, pos.key = hit.mod, hit_script, new_key
    out.step_finished(res)
    return True


def _apply_step(args: dict[str, Any], ctx: Any, target: Any, loaded: Any, i: int, pass_id: str,
                params: dict[str, Any], pos: _Position, instrument: StepInstrument
                ) -> tuple[Any, dict[str, Any], Optional[BaseException], str]:
    """Build step ``i``'s pass (its kind's hooks) and apply it to a copy of ``pos.mod``:
    ``(new module, report, error, traceback)``."""
    from pipeline_model.engine import pass_context_tvm
    from pipeline_model.passkinds import catalogue_tvm
    from pipeline_model.passkinds.registry import kind_for

    report: dict[str, Any] = {}
    new_mod = None
    try:
        build_ctx = _pass_build_context(args, target, ctx, i, pos.key, loaded.params)
        the_pass = catalogue_tvm.make_pass(pass_id, params, build_ctx)
        kind = kind_for(pass_id)
        problem = kind.step_preflight(pass_id, params, pos.mod) if kind is not None else None
        if problem:
            raise catalogue_tvm.PassConfigError(problem)
        # Passes get a shallow copy: some (DLight's ApplyDefaultSchedule, user code) update the
        # module they are given in place, which would corrupt the cached module before the step.
        with target, pass_context_tvm.make_pass_context(args.get("pass_context"), [instrument]):
            new_mod = the_pass(pos.mod.clone())
        report = dict(getattr(build_ctx, "report", None) or {})
        if isinstance(new_mod, tvm.IRModule) and kind is not None:
            kind.after_step(pass_id, pos.mod, new_mod, report)
    except Exception as exc:  # noqa: BLE001 - any failure of a step is reported on that step
        return new_mod, report, exc, traceback.format_exc()
    return new_mod, report, None, ""


def _run_step(out: _RunOutput, res: StepResult, args: dict[str, Any], target: Any, loaded: Any,
              pos: _Position, new_key: str) -> bool:
    """Run step ``res.index`` (not cached), record its outcome in ``res`` and the cache and move ``pos`` on.
    Returns False when the run must stop (the step failed or the run was cancelled)."""
    ctx, result, i = out.ctx, out.result, res.index
    pass_id = res.pass_id
    params = dict(out.steps_in[i].get("params") or {})
    if hasattr(ctx, "clear_stop_tuning"):
        ctx.clear_stop_tuning()  # a stop_tuning ends the tuning of the step it was sent for only
    ctx.emit(protocol.EV_STEP_STARTED, {"index": i, "uid": res.uid, "pass_id": pass_id})
    instrument = step_instrument(ctx.cancelled)
    t0 = time.perf_counter()
    new_mod, report, error, tb = _apply_step(args, ctx, target, loaded, i, pass_id, params, pos, instrument)
    res.elapsed_ms = (time.perf_counter() - t0) * 1000.0

    memo = _ScriptMemo() if out.want_scripts else None
    if memo is not None and pos.script is not None:
        memo.add(pos.mod, pos.script)
    if error is None and not isinstance(new_mod, tvm.IRModule):
        error = TypeError(f"step {i + 1} ({pass_id}) returned {type(new_mod).__name__}, not an IRModule")
    new_script: Optional[str] = None
    changed = False
    if error is None:
        changed = not modules_equal(pos.mod, new_mod)  # structural: no printing needed to know
        if memo is not None:
            new_script = memo.script(new_mod) if changed or pos.script is None else pos.script
            memo.add(new_mod, new_script)
    res.nested = _nested_results(instrument, memo, new_key, ctx, i)
    cancel_hit = instrument.cancel_hit
    instrument.release()
    del memo

    if error is not None:
        if cancel_hit or isinstance(error, RunCancelled):
            res.state = CANCELLED
            result.cancelled = True
        else:
            res.state = FAILED
            res.error = f"step {i + 1} ({pass_id}) failed: {_error_text(error)}"
            res.traceback = tb
            result.failed_index = i
            # The error view shows the last good IR: printed now even when scripts are on demand.
            result.last_good_script = pos.script if pos.script is not None else ctx.cache.script(pos.key)
        out.step_finished(res)
        return False

    res.state = CHANGED if changed else UNCHANGED
    res.report = report
    res.script, res.snapshot_key = new_script, new_key
    ctx.cache.put(new_key, new_mod, new_script, {
        "state": res.state,
        "elapsed_ms": res.elapsed_ms,
        "nested": [dict(n.__dict__, script=None) for n in res.nested],
        "report": report,
    })
    pos.mod, pos.script, pos.key = new_mod, new_script, new_key
    out.step_finished(res)
    return True


def _preflight_warnings(steps: list[dict[str, Any]], ctx: Any, target: Optional[dict[str, Any]] = None) -> None:
    """Before any step runs: one ``warning`` event per enabled step whose pass kind says it cannot work
    as configured (:meth:`~pipeline_model.passkinds.base.PassKind.run_preflight`, e.g. a
    FuseOpsByPattern step with ``annotate_codegen`` for a codegen this TVM build lacks)."""
    from pipeline_model.passkinds import catalogue_tvm
    from pipeline_model.passkinds.registry import kind_for

    for i, step in enumerate(steps):
        if not step.get("enabled", True) or step.get("placeholder"):
            continue
        pass_id = str(step.get("pass", ""))
        kind = kind_for(pass_id)
        if kind is None or type(kind).run_preflight is PassKindBase.run_preflight:
            continue
        try:
            cleaned, errors = catalogue_tvm.catalogue().validate_params(pass_id, dict(step.get("params") or {}), target)
            if errors:
                continue  # the step itself reports bad parameters
            message = kind.run_preflight(pass_id, cleaned)
        except Exception:  # noqa: BLE001 - a preflight must never break the run
            continue
        if message:
            ctx.emit("warning", {"index": i, "pass_id": pass_id, "preflight": True,
                                 "message": f"step {i + 1} ({pass_id}): {message}"})


def _nested_results(instrument: StepInstrument, memo: Optional[_ScriptMemo], base_key: str, ctx: Any,
                    index: int) -> list[NestedPassResult]:
    """The nested passes of a step (only when the step ran more than one pass). A changed nested
    module is cached under ``<step key>:n<j>``; its text is printed only with a ``memo`` (scripts wanted),
    else on demand through the ``snapshot`` command."""
    records = [r for r in instrument.records if r is not None]
    if len(records) <= 1:
        return []
    nested = []
    for j, rec in enumerate(records):
        changed = not modules_equal(rec.before, rec.after)
        item = NestedPassResult(name=rec.name, elapsed_ms=rec.elapsed_ms, changed=changed, depth=rec.depth)
        if changed:
            item.script = memo.script(rec.after) if memo is not None else None
            item.snapshot_key = f"{base_key}:n{j}"
            ctx.cache.put(item.snapshot_key, rec.after, item.script, {"nested_of": base_key})
        nested.append(item)
        ctx.emit(protocol.EV_NESTED, {"index": index, "nested": item.__dict__.copy()})
    return nested
