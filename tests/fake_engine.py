"""A TVM-free fake of the ``EngineClient`` API the GUI uses, for GUI tests that test GUI logic.

Honest by construction: every module it returns says it is fake (``# fake module ...``); it never
pretends to optimise anything. What it models is the *protocol*: ``ping``, ``catalogue`` (a small
recorded catalogue, ``tests/data/fake_catalogue.json``), ``run`` with ``model_loaded`` /
``step_started`` / ``step_finished`` events, snapshot keys per step prefix and a step cache
(``cached``), consent like the engine's (:mod:`pipeline_model.consent`: the client's ``consent`` — a
``Consent`` the GUI's worker hands it, as to the real client — goes with every request that may run code
(``trust_all``/``trusted_hashes`` in the recorded arguments; ``consented()`` swaps it for a block); a run whose
code items — model ``.py`` file, custom sources, pattern files — it does not cover runs nothing and says
which file and why, as the engine's ``run`` handler does), a syntax error in custom code at its line,
disabled steps skipped, ``cancel`` between steps, ``custom_sources_run`` (the custom sources the fake
was allowed to run: trusted and compiling; it records them, it does not execute them), ``graph`` / ``prim_func`` / ``snapshot`` of a key
(an unknown key fails naming it; an unknown function falls back to ``main`` with ``missing``), and the ``devices`` / ``validate_target`` commands. Building
(``build_run``, ``compare``, ``export_library``) is refused with a clear message: those tests use
the real engine; so ``profile_get`` has only the profiles a test puts in ``profiles``, and ``env`` answers the real reply's shape with
values marked fake. Steps after a failed one come back as ``not_run`` (as from the real engine). Rules the fake follows: every enabled step changes the module, except the pass
ids in :data:`UNCHANGING`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from typing import Any, Callable, Iterator, Optional

from pipeline_model import consent as consent_mod
from pipeline_model import graph_collapsed, graph_hierarchy
from pipeline_model.document import PipelineDocument
from pipeline_model.engine import messages
from pipeline_model.engine.client import EngineError
from pipeline_model.engine.results import CHANGED, FAILED, NOT_RUN, SKIPPED, UNCHANGED, RunResult, StepResult

CATALOGUE_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "fake_catalogue.json")
#: Pass ids that leave the fake module unchanged.
UNCHANGING = frozenset({"relax.FoldConstant"})
CPU = {"kind": "cpu", "index": 0, "name": "fake CPU", "target": {"kind": "llvm", "num-cores": 2}, "details": {}}
#: Config keys the fake ``env`` reply lists (a few real TVM names with their types; nothing else is modelled).
FAKE_PASS_CONFIGS = {"relax.FuseOps.max_depth": "int", "tir.disable_vectorize": "bool"}
KNOWN_TARGET_KINDS = ("llvm", "cuda", "vulkan", "opencl", "rocm", "metal")


class FakeEngineClient:
    """The fake client; ``calls`` records ``(method, detail)`` for tests that check what was asked."""

    def __init__(self, step_delay_s: float = 0.0) -> None:
        self.step_delay_s = step_delay_s
        self.restarts = 0
        self.calls: list[tuple[str, Any]] = []
        self.scripts: dict[str, str] = {}
        #: Sources of custom steps the fake accepted to run (trusted, compiling), in run order.
        self.custom_sources_run: list[str] = []
        #: The code items (JSON) of each run refused for lack of consent.
        self.refusals: list[list[dict]] = []
        #: Profiles "kept by the engine" (snapshot key -> profile JSON): only what a test puts here.
        self.profiles: dict[str, dict] = {}
        self.pid = 1000
        #: What the user consented to (like ``EngineClient.consent``; the GUI's worker replaces it with its own).
        self.consent = consent_mod.Consent()
        self._cancel = threading.Event()
        self.closed = False
        #: Graph requests for these keys wait until ``graph_gate`` is set (a slow graph, e.g. a huge module).
        self.held_graphs: set[str] = set()
        self.graph_gate = threading.Event()
        #: Whole-graph requests (not collapsed ones) for these keys wait until ``graph_gate`` is set.
        self.held_whole_graphs: set[str] = set()
        #: Functions with more nodes are answered collapsed when asked so (the engine's
        #: ``graph_collapsed.COLLAPSE_MIN_NODES``; a test lowers it to see the collapsed path on small graphs).
        self.collapse_min_nodes = graph_collapsed.COLLAPSE_MIN_NODES
        #: Extra layers of the fake graph (``layers.<i>.proj`` groups of two bindings each): a larger graph.
        self.extra_layers = 0

    # ---- the EngineClient API the GUI uses ---------------------------------------------------
    def ping(self) -> dict:
        self.calls.append(("ping", None))
        return {"tvm": "fake", "tvm_ffi": "fake", "pid": self.pid, "handlers": ["catalogue", "devices", "graph", "ping",
                                                                         "prim_func", "run", "snapshot", "validate_target"]}

    def catalogue(self) -> dict:
        self.calls.append(("catalogue", None))
        with open(CATALOGUE_FILE, encoding="utf-8") as handle:
            return json.load(handle)

    def cancel(self) -> None:
        self._cancel.set()

    def stop_tuning(self) -> None:
        self.calls.append(("stop_tuning", None))

    def close(self) -> None:
        self.closed = True

    def restart(self) -> None:
        self.calls.append(("restart", None))
        self.restarts += 1
        self.pid += 1

    @contextlib.contextmanager
    def consented(self, consent: consent_mod.Consent) -> Iterator["FakeEngineClient"]:
        """Like ``EngineClient.consented``: ``consent`` for the requests of the block."""
        saved, self.consent = self.consent, consent
        try:
            yield self
        finally:
            self.consent = saved

    def run(self, doc: PipelineDocument, until: Optional[int] = None,
            on_event: Optional[Callable[[str, dict], None]] = None, step_timeout_s: Optional[float] = None,
            scripts: bool = True) -> RunResult:
        """Like ``EngineClient.run``; with ``scripts=False`` the texts are left out (``None``) as the engine
        does, except a failed run's ``last_good_script``; ``snapshot(key)`` gives them."""
        self._cancel.clear()
        fields = self.consent.fields()
        self.calls.append(("run", {"steps": [s.pass_id for s in doc.steps], "until": until, "trust": fields["trust_all"],
                                   "trusted_hashes": list(fields.get("trusted_hashes") or []),
                                   "pass_context": dict(doc.pass_context or {}), "scripts": scripts}))
        refused = self._refused(doc, until, fields["trust_all"], list(fields.get("trusted_hashes") or []))
        if refused is not None:
            return refused
        emit = on_event or (lambda _n, _d: None)
        # Like the engine's cache key, the fake's keys include the PassContext settings (when not default).
        key = self._key(doc.model, doc.target) if not doc.pass_context else self._key(doc.model, doc.target, doc.pass_context)
        script = f"# fake module: {doc.model}\n"
        self.scripts.setdefault(key, script)
        sent = (lambda text: text) if scripts else (lambda text: None)
        emit("model_loaded", {"input_script": sent(script), "input_key": key})
        result = RunResult(input_script=sent(script), input_key=key)
        last = len(doc.steps) - 1 if until is None else min(int(until), len(doc.steps) - 1)
        for index, step in enumerate(doc.steps[: last + 1]):
            if self._cancel.is_set():
                result.cancelled = True
                break
            emit("step_started", {"index": index, "uid": step.uid})
            if self.step_delay_s:
                self._cancel.wait(self.step_delay_s)
            res = StepResult(index=index, uid=step.uid, pass_id=step.pass_id, title=step.pass_id)
            if not step.runnable:
                res.state, res.script, res.snapshot_key = SKIPPED, sent(script), key
            else:
                error = self._step_error(index, step)
                if error:
                    res.state, res.error = FAILED, error
                    result.failed_index, result.last_good_script = index, script
                else:
                    if step.pass_id == "custom.python":
                        # A step without a source runs the template, as the engine fills in the default.
                        from pipeline_model.passkinds.custom_python import CUSTOM_TEMPLATE

                        self.custom_sources_run.append(str(step.params.get("source", CUSTOM_TEMPLATE) or ""))
                    new_key = self._key(key, step.pass_id, step.params)
                    res.cached = new_key in self.scripts
                    if step.pass_id not in UNCHANGING:
                        script = script + f"# after {step.pass_id} {json.dumps(step.params, sort_keys=True, default=str)}\n"
                    res.state = CHANGED if step.pass_id not in UNCHANGING else UNCHANGED
                    key = new_key
                    self.scripts[key] = script
                    res.script, res.snapshot_key = sent(script), key
            result.steps.append(res)
            emit("step_finished", {"step": res.to_json()})
            if res.state == FAILED:
                break
        # Like the real engine: every step the run did not reach is in the reply, state not_run.
        for index in range(len(result.steps), len(doc.steps)):
            step = doc.steps[index]
            result.steps.append(StepResult(index=index, uid=step.uid, pass_id=step.pass_id, title=step.pass_id,
                                           state=NOT_RUN))
        return result

    def graph(self, key: str, function: Optional[str] = None, collapsed: bool = False,
              before: Optional[str] = None, have: Optional[list[str]] = None) -> dict:
        self.calls.append(("graph_collapsed" if collapsed else "graph", key))
        if key in self.held_graphs or (key in self.held_whole_graphs and not collapsed):
            self.graph_gate.wait(30)
        graph = self._graph_json(key)
        functions = ["main"]
        missing = bool(function) and function not in functions
        reply = {"graph": graph, "functions": functions,
                 "function": "main" if missing or not function else function, "requested": function, "missing": missing}
        if collapsed:  # like the engine's handler: the module annotation, then the summary of a large graph
            graph_hierarchy.annotate_modules(graph)
            old = self._graph_json(before) if before and before in self.scripts else None
            if old is not None:
                graph_hierarchy.annotate_modules(old)
            summary = graph_collapsed.collapsed_summary(graph, old, self.collapse_min_nodes)
            if summary is not None:
                reply.update(graph=None, collapsed=json.loads(json.dumps(summary)))
        return reply

    def _graph_json(self, key: str) -> dict:
        """The fake graph of module ``key``: a chain of one call per step (and ``extra_layers`` layers)."""
        script = self._script(key)
        lines = [line for line in script.splitlines() if line.startswith("# after")]
        nodes = [{"id": "x", "kind": "param", "name": "x", "type_text": "R.Tensor((1, 784), \"float32\")"}]
        edges = []
        prev = "x"
        for i, line in enumerate(lines):
            # A weight per step, named like a model's layer (layers.<i>.proj.weight): the graph view groups
            # the binding that uses it into module group "layers.<i>.proj".
            weight = f"layers.{i}.proj.weight"
            nodes.append({"id": weight, "kind": "param", "name": weight, "type_text": "R.Tensor((10, 10), \"float32\")"})
            nodes.append({"id": f"n{i}", "kind": "binding", "name": f"lv{i}", "op": "relax.call_tir",
                          "callee": f"fake_prim_{i}", "callee_kind": "prim_func", "type_text": "R.Tensor((1, 10), \"float32\")",
                          "attrs": {"step": line[len("# after "):]}})
            edges.append({"source": prev, "target": f"n{i}", "index": 0})
            edges.append({"source": weight, "target": f"n{i}", "index": 1})
            prev = f"n{i}"
        for i in range(self.extra_layers):
            for part in ("a", "b"):
                weight = f"layers.{len(lines) + i}.proj.{part}.weight"
                nodes.append({"id": weight, "kind": "param", "name": weight, "type_text": "R.Tensor((10, 10), \"float32\")"})
                nid = f"x{i}{part}"
                nodes.append({"id": nid, "kind": "binding", "name": f"lv_{i}_{part}", "op": "relax.matmul",
                              "type_text": "R.Tensor((1, 10), \"float32\")"})
                edges += [{"source": prev, "target": nid, "index": 0}, {"source": weight, "target": nid, "index": 1}]
                prev = nid
        from pipeline_model.ir_graph import GRAPH_FORMAT, GRAPH_VERSION

        return {"format": GRAPH_FORMAT, "version": GRAPH_VERSION, "nodes": nodes, "edges": edges}

    def prim_func(self, key: str, name: str) -> str:
        self.calls.append(("prim_func", name))
        self._script(key)
        return f"# fake TensorIR of {name}\n@T.prim_func\ndef {name}():\n    pass\n"

    def snapshot(self, key: str) -> str:
        self.calls.append(("snapshot", key))
        return self._script(key)

    def request(self, cmd: str, args: Optional[dict] = None, on_event: Any = None) -> dict:
        if cmd not in messages.CODE_FREE_METHODS:  # like the real client: consent goes with code-running requests
            args = {**(args or {}), **self.consent.fields()}
        self.calls.append((cmd, args))
        args = args or {}
        if cmd == "devices":
            return {"devices": [dict(CPU)]}
        if cmd == "rpc_devices":  # TVM-free: the real listing (a real tracker, or why none answers)
            from pipeline_model.targets import rpc_device_listing

            return rpc_device_listing(str(args.get("tracker") or ""), timeout_s=2.0)
        if cmd == "validate_target":
            kind = str((args.get("target") or {}).get("kind", ""))
            if kind in KNOWN_TARGET_KINDS:
                return {"ok": True, "target": dict(args["target"]), "keys": [kind]}
            return {"ok": False, "error": f"fake engine: unknown target kind {kind!r}"}
        if cmd == "env":
            # The shape of the real ``env`` reply; every value says it is fake.
            return {"tvm": {"version": "fake", "path": "(fake engine)"},
                    "tvm_ffi": {"version": "fake", "path": "(fake engine)"},
                    "llvm_version": None, "libinfo": {}, "devices": [dict(CPU)], "codegens": {},
                    "pattern_tables": {}, "pass_configs": dict(FAKE_PASS_CONFIGS)}
        if cmd == "profile_get":
            # The fake never builds: it keeps only the profiles a test put in ``profiles`` (hand-made inputs).
            if args.get("key"):
                return {"profile": self.profiles.get(str(args["key"]))}
            return {"keys": list(self.profiles)}
        raise EngineError(f"the fake engine does not run {cmd!r} (use the real engine for builds)")

    # ---- helpers --------------------------------------------------------------------------------
    @staticmethod
    def _key(*parts: Any) -> str:
        return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def _script(self, key: str) -> str:
        if key not in self.scripts:
            raise EngineError(f"module {key!r} is not in the fake engine's cache")
        return self.scripts[key]

    def _refused(self, doc: PipelineDocument, until: Optional[int], trust_all: bool,
                 trusted_hashes: list[str]) -> Optional[RunResult]:
        """The engine's consent check (``handle_run``): ``None`` when the run may go on, else the
        refused run (nothing ran; the message names each file and why)."""
        from pipeline_model import consent
        from pipeline_model.engine.run_call import run_args

        args = run_args(doc, until=until)
        steps = [s for i, s in enumerate(args["steps"]) if until is None or i <= until]
        items = consent.code_items(str(args["model"] or ""), args["base_dir"], steps)
        missing = [i for i in items if not i.sha256 and i.kind != consent.KIND_CUSTOM] \
            or consent.missing_consent(items, trusted_hashes, trust_all)
        if not missing:
            return None
        self.refusals.append([item.to_json() for item in missing])
        result = RunResult()
        model_missing = [m for m in missing if m.index is None]
        first = min((m.index for m in missing if m.index is not None), default=None)
        for i, step in enumerate(doc.steps):
            res = StepResult(index=i, uid=step.uid, pass_id=step.pass_id, title=step.pass_id, state=NOT_RUN)
            if not model_missing and i == first:
                res.state, res.error = FAILED, "nothing ran: " + consent.refusal_message(missing)
                result.failed_index = i
            result.steps.append(res)
        if model_missing:
            result.error = "nothing ran: " + consent.refusal_message(missing)
        return result

    @staticmethod
    def _step_error(index: int, step: Any) -> Optional[str]:
        if step.pass_id != "custom.python":
            return None
        try:
            compile(str(step.params.get("source") or ""), f"<custom step {index + 1}>", "exec")
        except SyntaxError as exc:
            # framed as the engine's runner frames a step's error
            return f"step {index + 1} ({step.pass_id}) failed: <custom step {index + 1}>: syntax error at line {exc.lineno}: {exc.msg}"
        return None
