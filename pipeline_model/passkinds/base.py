"""The pass-kind protocol: everything that differs between kinds of pipeline steps, in one class.

A *pass kind* (plain ``relax.transform`` passes, named pipelines, backend stages, DLight,
FuseOpsByPattern, MetaSchedule, custom Python, or one a plug-in adds) is a subclass of
:class:`PassKind` registered with :func:`pipeline_model.passkinds.registry.register`. The runner,
the exporter, the catalogue builder and :mod:`pipeline_model.emit` ask the registry for the kind of a
pass id and call its hooks; no other module compares pass ids.

A kind is one folder ``pipeline_model/passkinds/<kind>/``: ``__init__.py`` holds its subclass of
:class:`PassKind` (TVM-free), ``*_tvm.py`` its engine half (imported lazily by its hooks) and ``script.py``
the code exported scripts contain, which the engine calls too (see ``docs/ARCHITECTURE.md``).

Modules defining kinds must be importable without TVM: engine-side hooks (:meth:`PassKind.add_specs`,
:meth:`PassKind.build_pass`, :meth:`PassKind.run_preflight`, :meth:`PassKind.step_preflight`,
:meth:`PassKind.after_step`) import TVM inside the method.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Sequence

from pipeline_model import emit
from pipeline_model.passkinds.context import PassBuildContext, PassConfigError
from pipeline_model.passkinds.report_html import DEFAULT_ERROR_CSS, ReportSection


@dataclass(frozen=True)
class UserCodeRef:
    """Python code of the user's that a step runs (for trust/consent and error locations).

    ``label`` says what it is (``"custom.python"``, ``"relax.FuseOpsByPattern pattern file /a/p.py"``);
    ``path`` is the file on disk (``None`` for code held in the step); ``filenames`` are the names under
    which tracebacks point at it (``<custom step 3>``, or the path as written and resolved);
    ``read()`` returns the code's text (a ``# cannot read ...`` comment when the file cannot be read).
    """

    label: str
    path: Optional[str]
    filenames: tuple[str, ...]
    read: Callable[[], str]


@dataclass
class ExportPiece:
    """What one step adds to an exported script.

    ``helpers``: source of helper functions (copied once each, in order); ``imports``: modules to
    import; ``functions``: top-level functions (e.g. a custom step's); ``lines``: statements inside
    ``apply_steps`` (without indentation) that leave the step's pass in ``pass_``.
    """

    helpers: list[str] = field(default_factory=list)
    imports: list[str] = field(default_factory=list)
    functions: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)


def resolve_user_path(path: str, base_dir: Optional[str]) -> str:
    """``path`` as written, made absolute against ``base_dir`` (or the working folder) when relative."""
    return path if os.path.isabs(path) else os.path.join(base_dir or os.getcwd(), path)


def read_text_or_comment(path: str) -> Callable[[], str]:
    """A reader of ``path``'s text that returns a ``# cannot read`` comment instead of raising; special
    files (FIFOs, devices, ``/proc``) and files over 4 MiB are refused unread (:mod:`pipeline_model.safe_files`),
    so showing a hostile pipeline's code never blocks."""

    def read() -> str:
        from pipeline_model import safe_files

        try:
            return safe_files.read_text(path, "user code file", 4 * 1024 * 1024)
        except OSError as exc:
            return f"# cannot read {path}: {exc.strerror or exc}"

    return read


class PassKind:
    """Base of all pass kinds; every hook has a default that fits a plain TVM pass.

    Class attributes: ``name`` (shown in the catalogue JSON as ``kind``), ``priority`` (kinds are asked
    :meth:`matches` in ascending priority, so a specific kind wins over a catch-all one) and
    ``catalogue_order`` (order of :meth:`add_specs` calls: a kind that refines specs another kind
    introspected runs after it).
    """

    name = "base"
    priority = 50
    catalogue_order = 100

    # ---- identity -------------------------------------------------------------------------------
    def matches(self, pass_id: str) -> bool:
        """Whether this kind handles ``pass_id``."""
        return False

    def is_composite(self, pass_id: str) -> bool:
        """Whether a step of this kind runs several passes (its nested passes are worth showing)."""
        return False

    def runs_tuning(self, pass_id: str) -> bool:
        """Whether a step of this kind tunes (the GUI shows the tuning panel, events ``tuning_progress``)."""
        return False

    # ---- catalogue (engine side) ----------------------------------------------------------------
    def add_specs(self, cat: Any) -> None:
        """Add this kind's :class:`~pipeline_model.catalogue.PassSpec` entries to ``cat`` (engine side;
        may import TVM). ``cat`` already holds the specs of kinds with a lower ``catalogue_order``."""

    # ---- construction ---------------------------------------------------------------------------
    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        """The TVM-free construction of ``pass_id`` with validated ``params`` (see :mod:`pipeline_model.emit`);
        raises :class:`~pipeline_model.emit.EmitError` when it cannot be built."""
        raise emit.EmitError(f"no construction known for pass {pass_id!r}")

    def build_pass(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, ctx: PassBuildContext) -> Any:
        """The ``tvm.transform.Pass`` of a step (engine side): by default the recipe ``expr`` evaluated
        under the target. Raises :class:`PassConfigError` with a plain message."""
        import tvm

        from pipeline_model.passkinds.evaluate import evaluate

        try:
            with ctx.tvm_target():
                result = evaluate(expr, ctx, pass_id)
        except PassConfigError:
            raise
        except Exception as exc:  # noqa: BLE001 - TVM construction errors become config errors
            raise PassConfigError(f"{pass_id}: cannot build the pass: {type(exc).__name__}: {exc}") from exc
        result = self.wrap_pass(pass_id, result, ctx)
        if not isinstance(result, tvm.transform.Pass):
            raise PassConfigError(f"{pass_id}: construction returned {type(result).__name__}, not a Pass")
        return result

    def wrap_pass(self, pass_id: str, built: Any, ctx: PassBuildContext) -> Any:
        """Post-process the evaluated recipe (e.g. wrap it in a reporting pass); identity by default."""
        return built

    # ---- checks and reports (engine side) -------------------------------------------------------
    def run_preflight(self, pass_id: str, params: dict[str, Any]) -> Optional[str]:
        """A warning to send before the run starts when the step cannot work as configured, else None."""
        return None

    def step_preflight(self, pass_id: str, params: dict[str, Any], mod: Any) -> Optional[str]:
        """A plain message when the step cannot work on ``mod`` (checked just before it runs), else None."""
        return None

    def after_step(self, pass_id: str, before: Any, after: Any, report: dict[str, Any]) -> None:
        """Add what the step did to its ``report`` once it ran (``before``/``after`` are the modules)."""

    def cache_key_extra(self, pass_id: str, params: dict[str, Any], run_args: dict[str, Any]) -> str:
        """More state the step reads, mixed into its cache key (e.g. a tuning database's fingerprint)."""
        return ""

    def environment(self) -> dict[str, Any]:
        """Entries this kind adds to the engine's ``env`` reply (engine side; e.g. FuseOpsByPattern's
        ``pattern_tables``); none by default."""
        return {}

    # ---- TVM-free hooks for the GUI / CLI -------------------------------------------------------
    def report_sections(self) -> tuple[ReportSection, ...]:
        """The report sections this kind's steps produce (rendered by :mod:`.report_html`)."""
        return ()

    def result_line(self, report: dict) -> str:
        """A short line of what a step of this kind produced (its ``StepResult.report``), shown after the step's
        state in the pipeline list — a tuning step that leaves the module unchanged still says what it measured;
        "" (nothing to add) by default."""
        return ""

    def report_html(self, report: dict, target: dict, error_css: str = DEFAULT_ERROR_CSS,
                    sections: Sequence[ReportSection] = ()) -> str:
        """HTML for a step's report ("" when empty): ``sections`` (the registry passes every registered
        kind's and the common ones; by default the common ones and this kind's), in rank order."""
        from pipeline_model.passkinds.report_html import COMMON_SECTIONS, render_report

        chosen = list(sections) or [*COMMON_SECTIONS, *self.report_sections()]
        return render_report(report, target, chosen, error_css)

    def user_code(self, step: Any, base_dir: Optional[str], number: Optional[int] = None) -> list[UserCodeRef]:
        """The user's code a step (``pipeline_model.document.Step``, step number ``number``) runs; none by default."""
        return []

    def export_step(self, pass_id: str, params: dict[str, Any], expr: emit.Expr, *, index: int,
                    label: str) -> ExportPiece:
        """What the step adds to an exported script (raises :class:`~pipeline_model.emit.EmitError`): by
        default the recipe rendered as one statement, with the source of the script functions it calls
        (:class:`~pipeline_model.emit.ScriptCall`, e.g. a kind's ``script.py``) copied as helpers."""
        piece = ExportPiece()
        for call in emit.script_calls(expr):
            for source in emit.script_sources(call.module, call.attr):  # a class's local bases first
                if source not in piece.helpers:
                    piece.helpers.append(source)
        piece.imports.extend(emit.imports_of(expr))
        piece.lines.append(f"pass_ = {emit.render(expr)}")
        return piece


class ScriptPassKind(PassKind):
    """A kind of one step of the app's own: the pass is a function of the kind's ``script.py``, which the engine
    calls and exported scripts contain. Class attributes: ``pass_id``, ``script_module`` and ``script_function``
    (the pass), and the spec's ``title``, ``doc``, ``tvm_name`` (the TVM API it is built on) and ``category``
    (the palette's group); override :meth:`script_args` for arguments."""

    priority = 15
    pass_id = ""
    script_module = ""
    script_function = ""
    title = ""
    doc = ""
    tvm_name = ""
    category = "Optimization"

    def matches(self, pass_id: str) -> bool:
        """Whether ``pass_id`` is this kind's one step."""
        return pass_id == self.pass_id

    def add_specs(self, cat: Any) -> None:
        """The step's spec (in :attr:`category`, no parameters)."""
        from pipeline_model.catalogue import PassSpec

        cat.add(PassSpec(id=self.pass_id, title=self.title, category=self.category, doc=self.doc, kind=self.name,
                         tvm_name=self.tvm_name))

    def script_args(self) -> tuple[emit.Expr, ...]:
        """The arguments of :attr:`script_function` (none by default)."""
        return ()

    def recipe(self, pass_id: str, params: dict[str, Any], *, step_number: Optional[int] = None) -> emit.Expr:
        """A call of :attr:`script_function` of :attr:`script_module`."""
        return emit.ScriptCall(self.script_module, self.script_function, self.script_args())
