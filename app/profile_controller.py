"""``ProfileController``: the Profile panel and the graph's heat overlay (issue 11).

A Build & Run with *Profile* checked returns a :class:`pipeline_model.build_api.Profile` (time per
PrimFunc / packed function call, measured with the VM's instrumentation). Profiles are kept per module
snapshot key, so each step shows its own: selecting a step shows the profile of that step's module — from
this session, or the one the engine keeps (``build_api.stored_profile``), or none. The graph gets a heat
overlay (:meth:`widgets.graph_view.GraphView.set_heat`, shares from ``Profile.node_shares()``) whenever the
graph shown is of the profiled module and function; View ▸ Profile Heat Overlay toggles it. Activating a
callee in the table selects the graph nodes calling it (one after the other on repeated activation).

*Compare with* (the panel's chooser) lists the other steps — and the model input — whose module has a profile,
in this session or kept by the engine (``build_api.stored_profiles``, asked whenever a profile is shown);
choosing one shows :func:`pipeline_model.build_api.compare_profiles` of the two, the earlier step in the
pipeline as *before*. The choice follows the selection (a step without a profile shows none and keeps the
choice; a profiled step that cannot compare with it drops it); it resets with the rest of the panel on
New/Open/model change. The heat overlay
stays that of the selected step.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from PySide6.QtCore import QObject, Signal

from app.context import AppContext
from app.i18n import tr
from pipeline_model import build_api
from pipeline_model.build_api import Profile
from widgets.graph_view import GraphView
from widgets.profile_view import ProfileView


class ProfileController(QObject):
    """Keeps the profiles per snapshot key; shows the selected step's in ``view`` and on ``graph``."""

    #: The profile shown changed (``None`` or a Profile).
    profile_shown = Signal(object)

    def __init__(self, ctx: AppContext, view: ProfileView, graph: GraphView,
                 shown_graph: Callable[[], Optional[tuple[str, Optional[str]]]],
                 step_key: Callable[[str], Optional[str]], current_uid: Callable[[], str],
                 profiled_modules: Optional[Callable[[], list[tuple[str, str]]]] = None) -> None:
        super().__init__(ctx)
        self.ctx = ctx
        self.view = view
        self.graph = graph
        self._shown_graph = shown_graph
        self._step_key = step_key
        self._current_uid = current_uid
        self._modules = profiled_modules or (lambda: [])
        self.profiles: dict[str, Profile] = {}
        #: The key chosen in *Compare with* ("" = none).
        self.compare_key = ""
        self._stored_request: Optional[Any] = None
        self._asked: set[str] = set()  # keys asked from the engine (answer: a profile or none)
        self._cycle: dict[str, int] = {}
        view.callee_activated.connect(self.select_callers)
        view.compare_chosen.connect(self.compare_with)
        graph.graph_shown.connect(self.update_heat)
        ctx.document.document_replaced.connect(self.clear)
        ctx.document.model_changed.connect(self.clear)

    # ---- profiles in --------------------------------------------------------------------------
    def on_build_finished(self, kind: str, value: Any) -> None:
        """A Build & Run answer: keep and show its profile, if it has one."""
        if kind != "build_run" or not isinstance(value, dict) or not value.get("profile"):
            return
        profile = Profile.from_json(value["profile"])
        if profile is None:
            return
        if not profile.key:
            profile.key = str(value.get("key") or "")
        self.add_profile(profile)

    def add_profile(self, profile: Profile) -> None:
        """Keep ``profile`` (under its snapshot key) and show it."""
        if profile.key:
            self.profiles[profile.key] = profile
        self._show(profile)

    def clear(self) -> None:
        """Another document, model or target: the profiles describe modules that are gone."""
        self.profiles.clear()
        self._asked.clear()
        self.compare_key = ""
        if self._stored_request is not None:
            request, self._stored_request = self._stored_request, None
            request.drop_if_queued()  # in flight: its (small) answer is dropped in _on_stored_many
        self._show(None)

    # ---- following the selection ------------------------------------------------------------
    def show_step(self, uid: str) -> None:
        """Show the profile of step ``uid``'s module (kept here, else asked from the engine once)."""
        key = self._step_key(uid) if uid else None
        if not key:
            self._show(None)
            return
        if key in self.profiles:
            self._show(self.profiles[key])
            return
        self._show(None)
        if key in self._asked:
            return
        self._asked.add(key)
        request = self.ctx.engine.submit_fn("profile_get", lambda client, _ev: build_api.stored_profile(client, key))
        request.finished.connect(lambda value: self._on_stored(key, value))

    def _on_stored(self, key: str, value: Any) -> None:
        if not isinstance(value, Profile):
            return
        self.profiles[key] = value
        if self._step_key(self._current_uid()) == key:
            self._show(value)

    def _show(self, profile: Optional[Profile]) -> None:
        self.view.set_profile(profile)
        self._cycle.clear()
        self.update_heat()
        self.refresh_comparison()
        self.profile_shown.emit(profile)
        if profile is not None:
            self._ask_stored()

    # ---- comparison ---------------------------------------------------------------------------
    def _module_labels(self) -> list[tuple[str, str]]:
        """``(key, label)`` of the input and every step with a module, in pipeline order, one per key
        (steps that left the module unchanged share their key: their labels are joined)."""
        order: list[str] = []
        labels: dict[str, list[str]] = {}
        for key, label in self._modules():
            if not key:
                continue
            if key not in labels:
                order.append(key)
                labels[key] = []
            labels[key].append(label)
        return [(key, " = ".join(labels[key])) for key in order]

    def compare_choices(self) -> list[tuple[str, str]]:
        """What *Compare with* offers: the modules with a profile other than the one shown."""
        shown = self.view.profile()
        if shown is None:
            return []
        return [(k, label) for k, label in self._module_labels() if k in self.profiles and k != shown.key]

    def refresh_comparison(self) -> None:
        """Re-fill *Compare with* and show the comparison chosen (or the single profile)."""
        choices = self.compare_choices()
        if self.view.profile() is not None and self.compare_key not in {k for k, _ in choices}:
            self.compare_key = ""  # kept while no profile is shown: the next step's profile compares again
        self.view.set_compare_choices(choices, self.compare_key)
        self._update_comparison()

    def compare_with(self, key: str) -> None:
        """*Compare with* chose ``key`` (``""``: back to the single profile)."""
        self.compare_key = key if key in self.profiles else ""
        self._update_comparison()

    def _update_comparison(self) -> None:
        shown = self.view.profile()
        other = self.profiles.get(self.compare_key) if self.compare_key else None
        if shown is None or other is None:
            self.view.set_comparison(None)
            return
        modules = self._module_labels()
        position = {k: i for i, (k, _label) in enumerate(modules)}
        label = dict(modules)
        # The earlier module in the pipeline is "before" (a key not in the pipeline any more counts as earlier).
        if position.get(other.key or self.compare_key, -1) <= position.get(shown.key, -1):
            before, after = other, shown
        else:
            before, after = shown, other
        self.view.set_comparison(build_api.compare_profiles(before, after),
                                 label.get(before.key, before.label or tr("profile")),
                                 label.get(after.key, after.label or tr("profile")))

    def _ask_stored(self) -> None:
        """Ask the engine, once at a time, for the profiles it keeps of this pipeline's modules."""
        if self._stored_request is not None:
            return
        keys = [k for k, _label in self._module_labels() if k not in self.profiles]
        if not keys:
            return
        request = self.ctx.engine.submit_fn("profile_get",
                                            lambda client, _ev: build_api.stored_profiles(client, keys))
        self._stored_request = request
        request.finished.connect(lambda value: self._on_stored_many(request, value))
        request.failed.connect(lambda _message: self._forget_stored(request))

    def _forget_stored(self, request: Any) -> None:
        if request is self._stored_request:
            self._stored_request = None

    def _on_stored_many(self, request: Any, value: Any) -> None:
        if request is not self._stored_request:
            return  # a cleared panel: the answer describes modules that are gone
        self._stored_request = None
        if not isinstance(value, dict) or not value:
            return
        for key, prof in value.items():
            if isinstance(prof, Profile):
                self.profiles.setdefault(key, prof)
        current = self._step_key(self._current_uid())
        if current in value and self.view.profile() is None:
            self._show(self.profiles[current])
        else:
            self.refresh_comparison()

    # ---- graph --------------------------------------------------------------------------------
    def profile_for_graph(self) -> Optional[Profile]:
        """The profile of the module and function the graph shows, if one is kept."""
        shown = self._shown_graph()
        if not shown:
            return None
        key, function = shown
        profile = self.profiles.get(key or "")
        if profile is None:
            return None
        if function and profile.function and function != profile.function:
            return None
        return profile

    def update_heat(self) -> None:
        """Put the heat overlay of the shown graph's profile on the graph (none when there is none)."""
        profile = self.profile_for_graph()
        shares = profile.node_shares() if profile is not None else {}
        if shares != self.graph.heat():
            self.graph.set_heat(shares)

    def set_heat_visible(self, visible: bool) -> None:
        """View ▸ Profile Heat Overlay."""
        self.graph.set_heat_visible(visible)

    def select_callers(self, callee: str) -> Optional[str]:
        """Select (and centre) a graph node calling ``callee``; the next one on the next call."""
        profile = self.view.profile()
        ids = list((profile.nodes.get(callee) or []) if profile is not None else [])
        present = {str(n.get("id")) for n in (self.graph.graph_json() or {}).get("nodes", [])}
        partial = self.graph.is_partial()  # a collapsed view: its nodes are revealed when the whole graph is shown
        shown = [i for i in ids if partial or i in present] if self.profile_for_graph() is profile else []
        if not shown:
            self.ctx.status(tr("{0} is not called from the graph shown (select the profiled step, "
                               "function {1}).").format(callee, profile.function if profile else "?"), 6000)
            return None
        n = self._cycle.get(callee, 0) % len(shown)
        self._cycle[callee] = n + 1
        node = shown[n]
        self.graph.reveal(node)  # expands a collapsed group holding it, centres and selects it
        if len(shown) > 1:
            self.ctx.status(tr("{0}: call {1} of {2} (activate again for the next)").format(callee, n + 1, len(shown)), 6000)
        return node


def profiled_modules(input_key: Optional[str], doc: Any, step_model: Any, step_key: Callable[[str], Optional[str]]
                     ) -> list[tuple[str, str]]:
    """``(snapshot key, label)`` of the model input and of every step with a result, in pipeline order (the Profile
    panel's *Compare with* offers those that have a profile)."""
    from widgets.step_model import TitleRole

    out: list[tuple[str, str]] = []
    if input_key:
        out.append((input_key, tr("Model input")))
    for row, step in enumerate(doc.steps):
        key = step_key(step.uid)
        if key:
            out.append((key, f"{row + 1}. {step_model.index(row).data(TitleRole) or step.pass_id}"))
    return out
