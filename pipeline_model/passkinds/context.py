"""What building a pass needs besides its parameters (TVM-free at import; TVM is imported lazily).

:class:`PassConfigError` and :class:`PassBuildContext` live here (not in
:mod:`pipeline_model.passkinds.catalogue_tvm`, which re-exports them) so that every pass kind's engine half
can use them without an import cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional


#: Why a step that needs the model's own weights (``weights.BindAsConstants``) cannot run without them.
NO_MODEL_WEIGHTS = ("the model carries no weights of its own (built-in and TVMScript models get random weights "
                    "at run time), so there is nothing to bind; load an ONNX or PyTorch model, or remove this step")


#: Why custom Python code (a custom step, a targeted tuning step's schedule function) does not run untrusted.
UNTRUSTED_MESSAGE = (
    "custom Python code is not trusted: it runs arbitrary code on this machine. Enable 'trust custom "
    "code' (GUI) or pass --trust-custom-code (CLI) to run it"
)


class PassConfigError(ValueError):
    """A pass cannot be built: bad parameters, unavailable pass, untrusted or broken custom code."""


@dataclass
class PassBuildContext:
    """What building a pass may need besides its parameters.

    ``target`` is a target dict (or a ``tvm.target.Target``); ``base_dir`` is the pipeline file's
    folder (relative pattern files are resolved against it); ``work_dir`` is the tuning folder used
    when a MetaSchedule step leaves ``work_dir`` empty; ``emit(event, data)`` sends an engine event
    (warnings, tuning progress); ``cancelled()`` says whether the run was cancelled;
    ``should_stop_tuning()`` says whether the client asked to end the tuning in flight early (a
    tuning step then ends as a successful step with what was measured, and the run goes on);
    ``step_number`` (1-based) names custom code in tracebacks (``<custom step N>``); ``input_key`` is
    the engine's snapshot key of the module the step gets (targeted tuning reads its stored profile);
    ``weights()`` gives the loaded model's own weights (``weights.BindAsConstants`` binds them);
    ``profile(mod)`` gives the engine's profile of the step's input module ``mod`` as ``(profile,
    "stored" | "measured")`` (targeted tuning chooses PrimFuncs by it). Building a pass
    may fill ``report`` (read back into ``StepResult.report`` after the step): ``"dlight"`` (rule per
    PrimFunc), ``"fusion"`` (what FuseOpsByPattern fused), ``"tuning"`` / ``"apply_database"``.

    Passes are meant to be applied inside ``with target, tvm.transform.PassContext(opt_level=3)``
    (DLight needs the current target); exported scripts do exactly that.
    """

    target: Any = field(default_factory=lambda: {"kind": "llvm"})
    base_dir: Optional[str] = None
    trust_custom_code: bool = False
    work_dir: Optional[str] = None
    emit: Optional[Callable[[str, dict], None]] = None
    cancelled: Optional[Callable[[], bool]] = None
    step_number: Optional[int] = None
    should_stop_tuning: Optional[Callable[[], bool]] = None
    report: dict = field(default_factory=dict)
    input_key: Optional[str] = None  # snapshot key of the step's input module (its stored profile, if any)
    #: The loaded model's own weights (name -> numpy array), or None when it carries none (built-in models).
    weights: Optional[Callable[[], Optional[dict[str, Any]]]] = None
    #: The engine's profile of the step's input module: ``profile(mod) -> (profile, source)``.
    profile: Optional[Callable[[Any], tuple[dict[str, Any], str]]] = None
    #: Variants of the step's model built and timed in place, in rotating rounds: ``measure([mod, ...]) ->
    #: [{"wall_us", "funcs"}]`` (the apply step's ``keep_wins``).
    measure: Optional[Callable[[list], list[dict[str, Any]]]] = None

    def tvm_target(self) -> Any:
        """The target as a ``tvm.target.Target`` (imports TVM)."""
        import tvm

        if isinstance(self.target, tvm.target.Target):
            return self.target
        return tvm.target.Target(dict(self.target))

    def send(self, event: str, data: dict) -> None:
        """Emit an engine event if an emitter is set."""
        if self.emit is not None:
            self.emit(event, data)
