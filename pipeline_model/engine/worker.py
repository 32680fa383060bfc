"""The engine process: ``python -m pipeline_model.engine.worker``.

Reads JSON-line requests on stdin and answers on the *real* stdout (a duplicate of file descriptor 1
taken at start); fd 1 itself is redirected to stderr so prints from TVM or user code cannot corrupt the
protocol stream. A reader thread receives ``cancel`` and ``stop_tuning`` while a request runs; requests run one at a time on
the main thread through a handler registry::

    @handler("name")
    def fn(args: dict, ctx: WorkerContext) -> dict: ...

Handler modules (:mod:`pipeline_model.engine.handler_registry`: every ``engine/handlers_*.py`` plus the
modules named in ``RPS_ENGINE_HANDLER_MODULES``) are imported at start; a plug-in module that cannot be
imported stops the start with a message naming it (the rule of every registry). Built-in commands: ``ping``, ``catalogue``, ``run`` (see :mod:`pipeline_model.engine.runner`),
``snapshot``. The engine refuses to start (``fatal`` message, exit code 3) with a tvm_ffi version that is
known to crash.
"""

from __future__ import annotations

import collections
import importlib
import os
import queue
import sys
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Optional

from pipeline_model.engine import messages, protocol
from pipeline_model.engine.handler_registry import (  # noqa: F401 - re-exported
    ENV_HANDLER_MODULES,
    HANDLERS,
    HandlerFn,
    discover_handler_modules,
    handler,
    load_handlers,
)
from pipeline_model.runtime_threads import ensure_runtime_threads

#: ``RPS_ENGINE_TRACE=1``: the engine writes each request's command and wall time to its stderr (which the
#: client echoes with ``--verbose``/keeps in its stderr tail): where the time of a slow request went.
TRACE = bool(os.environ.get("RPS_ENGINE_TRACE"))

#: tvm_ffi version prefixes known to crash (segfault in ToJSONGraph: save_json, pickle, MetaSchedule).
BAD_FFI_PREFIXES = ("0.1.15",)

#: Exit code of an engine that refused to start.
EXIT_REFUSED = 3



def ffi_version_problem(version: str) -> Optional[str]:
    """A plain message when ``version`` of apache-tvm-ffi is known to crash, else ``None``."""
    if any(version == p or version.startswith(p + ".") for p in BAD_FFI_PREFIXES):
        return (
            f"apache-tvm-ffi {version} is installed, and with it TVM crashes (segfault) when saving "
            "modules and in MetaSchedule tuning. Install the pinned version: "
            "pip install 'apache-tvm-ffi==0.1.14.post1'"
        )
    return None


# --------------------------------------------------------------------------------------------- cache


@dataclass
class CacheEntry:
    """A cached module with what the runner learnt about it (script, step outcome)."""

    mod: Any
    script: Optional[str] = None
    info: dict[str, Any] = field(default_factory=dict)
    size: int = 0


def estimated_text_size(mod: Any) -> int:
    """About how many characters ``mod.script()`` would print, without printing: ~150 per Relax binding,
    ~2,500 per PrimFunc (measured on the decoder before/after legalization and fusion: 130-190 per
    binding). 0 for anything that is not an IRModule. Costs ~0.1 ms."""
    try:
        from tvm import relax

        bindings = prim_funcs = 0
        for _gv, func in mod.functions.items():
            if isinstance(func, relax.Function):
                body = func.body
                if isinstance(body, relax.SeqExpr):
                    bindings += sum(len(block.bindings) for block in body.blocks)
                bindings += len(func.params)
            else:
                prim_funcs += 1
        return 150 * bindings + 2500 * prim_funcs
    except Exception:  # noqa: BLE001 - a stand-in module (tests) or an unexpected object: no estimate
        return 0


class ModuleCache:
    """LRU cache of IRModules (and their TVMScript) by key, bounded by bytes (optionally by entries).

    An entry is charged its script's length twice (the text, and roughly as much again for the
    IRModule's objects, which print to about that size) plus :attr:`MODULE_COST`; entries without a
    script yet (runs print texts on demand) are charged twice :func:`estimated_text_size` instead, so
    the byte bound holds whether or not anyone asked for the text."""

    #: Nominal size charged per module besides its script text.
    MODULE_COST = 64 * 1024

    #: Default bound on the number of modules. Modules made by passes share most of their objects with their
    #: input, so the real memory of an entry is far below its charged size: measured with
    #: ``bench/soak_workspace.py`` (MLP and transformer, varied edits), RSS grew ~16 KiB per cached entry with no
    #: plateau before 384 MiB were charged (~6,000 entries); 512 entries hold the modules of the last ~30 runs of a
    #: 17-step pipeline (every prefix of the document being edited) and make the engine's memory flat.
    MAX_ENTRIES = 512

    def __init__(self, max_entries: Optional[int] = MAX_ENTRIES, max_bytes: int = 384 * 1024 * 1024) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._entries: "collections.OrderedDict[str, CacheEntry]" = collections.OrderedDict()
        self._bytes = 0

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, key: str) -> bool:
        return key in self._entries

    @property
    def nbytes(self) -> int:
        """Bytes charged to the cache (script text plus a nominal cost per module)."""
        return self._bytes

    def entry(self, key: str) -> Optional[CacheEntry]:
        """The entry under ``key`` (marked as recently used), or ``None``."""
        item = self._entries.get(key)
        if item is not None:
            self._entries.move_to_end(key)
        return item

    def get(self, key: str) -> Any:
        """The IRModule under ``key``, or ``None``."""
        item = self.entry(key)
        return item.mod if item is not None else None

    def put(self, key: str, mod: Any, script: Optional[str] = None, info: Optional[dict[str, Any]] = None) -> CacheEntry:
        """Store ``mod`` (and optionally its script and step info) under ``key``; evicts the oldest entries."""
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old.size
        item = CacheEntry(mod=mod, script=script, info=dict(info or {}))
        item.size = self.MODULE_COST + 2 * (len(script) if script else estimated_text_size(mod))
        self._entries[key] = item
        self._bytes += item.size
        self._evict()
        return item

    def set_script(self, key: str, script: str) -> None:
        """Remember the script of an entry (counted in the byte bound)."""
        item = self._entries.get(key)
        if item is None:
            return
        self._bytes -= item.size
        item.script = script
        item.size = self.MODULE_COST + 2 * len(script)
        self._bytes += item.size
        self._evict()

    def script(self, key: str) -> Optional[str]:
        """TVMScript of the module under ``key`` (printed once, then kept), or ``None`` if absent."""
        item = self.entry(key)
        if item is None:
            return None
        if item.script is None:
            self.set_script(key, item.mod.script())
        return item.script

    def drop(self, key: str) -> bool:
        """Remove one entry; True when it was there."""
        item = self._entries.pop(key, None)
        if item is None:
            return False
        self._bytes -= item.size
        return True

    def clear(self) -> None:
        """Drop everything."""
        self._entries.clear()
        self._bytes = 0

    def _evict(self) -> None:
        while self._entries and ((self.max_entries is not None and len(self._entries) > self.max_entries)
                                 or self._bytes > self.max_bytes):
            if len(self._entries) == 1:
                break  # always keep the newest entry
            _key, item = self._entries.popitem(last=False)
            self._bytes -= item.size


# --------------------------------------------------------------------------------------------- context


class ConsentError(PermissionError):
    """The request would execute code without consent; answered with ``CONSENT_REQUIRED``."""

    rpc_code = messages.CONSENT_REQUIRED

    def __init__(self, message: str, items: Optional[list[Any]] = None) -> None:
        super().__init__(message)
        self.items = list(items or [])


class _Output:
    """Thread-safe writer of protocol lines to the duplicated stdout descriptor."""

    def __init__(self, fd: int) -> None:
        self._file = os.fdopen(fd, "wb", buffering=0)
        self._lock = threading.Lock()

    def write(self, message: Any) -> None:
        data = protocol.encode(message)
        with self._lock:
            view = memoryview(data)
            while view:
                written = self._file.write(view)
                view = view[written:]


class WorkerContext:
    """What a handler gets: events, cancellation, the module cache, model loading and the catalogue."""

    def __init__(self, output: Optional[_Output] = None) -> None:
        self._output = output
        self.cache = ModuleCache()
        self.request_id: Optional[int] = None
        self._cancelled: set[int] = set()
        self._stop_tuning: set[int] = set()
        self._lock = threading.Lock()
        self._models: "collections.OrderedDict[str, Any]" = collections.OrderedDict()
        self._catalogue: Any = None
        self.events: list[tuple[str, dict]] = []  # kept only when there is no output (in-process use)
        #: Consent fields of the request in flight (``trust_all``, ``trust_custom_code``, ``trusted_hashes``).
        self.consent: dict[str, Any] = {}

    # events and cancellation
    def emit(self, event: str, data: dict[str, Any]) -> None:
        """Send an event for the current request."""
        if self._output is None:
            self.events.append((event, data))
            return
        self._output.write(messages.Notification(self.request_id, messages.make_event(event, data)))

    def cancelled(self) -> bool:
        """True when the client asked to cancel the current request."""
        with self._lock:
            return self.request_id is not None and self.request_id in self._cancelled

    def mark_cancelled(self, req_id: Any) -> None:
        """Record a cancel for request ``req_id`` (called from the reader thread)."""
        with self._lock:
            self._cancelled.add(req_id)
            if len(self._cancelled) > 1000:
                self._cancelled = {i for i in self._cancelled if self.request_id is None or i >= self.request_id}

    def stop_tuning_requested(self) -> bool:
        """True when the client asked to end the tuning in flight in the current request early."""
        with self._lock:
            return self.request_id is not None and self.request_id in self._stop_tuning

    def mark_stop_tuning(self, req_id: Any) -> None:
        """Record a ``stop_tuning`` for request ``req_id`` (called from the reader thread)."""
        with self._lock:
            self._stop_tuning.add(req_id)
            if len(self._stop_tuning) > 1000:
                self._stop_tuning = {i for i in self._stop_tuning if self.request_id is None or i >= self.request_id}

    def clear_stop_tuning(self) -> None:
        """Forget a ``stop_tuning`` of the current request (the runner calls it when a step starts, so
        a stop ends only the tuning step it was meant for)."""
        with self._lock:
            self._stop_tuning.discard(self.request_id)

    # consent
    def missing_consent(self, items: list[Any]) -> list[Any]:
        """The code items (:class:`pipeline_model.consent.CodeItem`) the current request has no consent for."""
        from pipeline_model import consent

        hashes = self.consent.get("trusted_hashes") or []
        return consent.missing_consent(items, hashes if isinstance(hashes, list) else [],
                                       consent.request_trusts_all(self.consent))

    # models
    def load_model(self, spec: str, base_dir: Optional[str]) -> Any:
        """Load a model (``LoadedModel``), memoised by its key (which includes the file's content hash).

        A model ``.py`` file is code: without consent in the current request :class:`ConsentError`
        is raised before anything of it runs."""
        from pipeline_model import consent, models
        from pipeline_model.importers import load_tvm

        item = consent.model_item(spec, base_dir)
        if item is not None:
            missing = self.missing_consent([item])
            if missing:
                raise ConsentError(consent.refusal_message(missing), missing)
        key = models.model_key(spec, base_dir)
        loaded = self._models.get(key)
        if loaded is None:
            loaded = load_tvm.load_model(spec, base_dir)
            self._models[key] = loaded
            while len(self._models) > 8:
                self._models.popitem(last=False)
        else:
            self._models.move_to_end(key)
        return loaded

    def clear_models(self) -> None:
        """Forget the loaded models."""
        self._models.clear()

    # catalogue
    def catalogue(self) -> Any:
        """The pass catalogue (``pipeline_model.catalogue.Catalogue``), built once per engine."""
        if self._catalogue is None:
            from pipeline_model.passkinds import catalogue_tvm

            self._catalogue = catalogue_tvm.catalogue()  # build_catalogue(), once per process
        return self._catalogue

    def pass_title(self, pass_id: str) -> str:
        """Title of a pass from the catalogue, or the id itself when unknown."""
        try:
            spec = self.catalogue().get(pass_id)
        except Exception:  # noqa: BLE001 - a title is cosmetic
            return pass_id
        return str(getattr(spec, "title", "") or pass_id) if spec is not None else pass_id


# --------------------------------------------------------------------------------------------- handlers


@handler(protocol.CMD_PING)
def handle_ping(args: dict, ctx: WorkerContext) -> dict:
    """Versions and pid of the engine."""
    import tvm
    import tvm_ffi

    return {
        "tvm": str(tvm.__version__),
        "tvm_ffi": str(tvm_ffi.__version__),
        "pid": os.getpid(),
        "python": sys.version.split()[0],
        "handlers": sorted(HANDLERS),
        "cache_entries": len(ctx.cache),
        "cache_bytes": ctx.cache.nbytes,
    }


@handler(protocol.CMD_CATALOGUE)
def handle_catalogue(args: dict, ctx: WorkerContext) -> dict:
    """The pass catalogue as JSON (``Catalogue.to_json()``)."""
    return ctx.catalogue().to_json()


@handler(protocol.CMD_SNAPSHOT)
def handle_snapshot(args: dict, ctx: WorkerContext) -> dict:
    """TVMScript of a cached module: ``{"key": ...}`` -> ``{"key": ..., "script": ...}``."""
    key = str(args.get("key") or "")
    script = ctx.cache.script(key)
    if script is None:
        raise KeyError(f"snapshot {key!r} is not in the engine's cache (evicted or from an earlier engine); run again")
    return {"key": key, "script": script}


@handler("cache_clear")
def handle_cache_clear(args: dict, ctx: WorkerContext) -> dict:
    """Drop cached modules: ``{"keys": [...]}`` drops those entries only; otherwise everything (and,
    unless ``"models": false``, the loaded models). Returns how many entries were dropped."""
    keys = args.get("keys")
    if keys is not None:
        return {"dropped": sum(1 for key in keys if ctx.cache.drop(str(key)))}
    count = len(ctx.cache)
    ctx.cache.clear()
    if args.get("models", True):
        ctx.clear_models()
    return {"dropped": count}


@handler(protocol.CMD_RUN)
def handle_run(args: dict, ctx: WorkerContext) -> dict:
    """Run a pipeline (see :func:`pipeline_model.engine.runner.run_pipeline`).

    Before anything is loaded or run, the code the run would execute (model ``.py`` file, custom
    steps, pattern files; :mod:`pipeline_model.consent`) must be consented to by the request; else
    nothing runs: a model without consent is a run error, a step without consent is that step failed
    (every step not run), each message naming the file and why."""
    from pipeline_model import consent
    from pipeline_model.engine import runner

    steps = list(args.get("steps") or [])
    until = args.get("until")
    considered = [s for i, s in enumerate(steps) if until is None or not isinstance(until, int) or i <= until]
    items = consent.code_items(str(args.get("model") or ""), args.get("base_dir"), considered)
    # A file that cannot be read safely (FIFO, device, too big) is refused even with trust_all.
    missing = [i for i in items if not i.sha256 and i.kind != consent.KIND_CUSTOM] or ctx.missing_consent(items)
    if missing:
        return _refused_run(steps, missing, ctx)
    # Everything this run executes was consented to (by hash or trust_all) or ships with the app
    # (files under resources/ are not consent items): the pass builders may run it.
    args = dict(args, trust_custom_code=True)
    return runner.run_pipeline(args, ctx)


def _refused_run(steps: list[dict], missing: list[Any], ctx: WorkerContext) -> dict:
    """``RunResult`` JSON of a run refused for lack of consent: no step ran."""
    from pipeline_model import consent
    from pipeline_model.engine.results import FAILED, NOT_RUN, RunResult, StepResult

    result = RunResult()
    model_missing = [m for m in missing if m.index is None]
    first_step = min((m.index for m in missing if m.index is not None), default=None)
    for i, step in enumerate(steps):
        pass_id = str(step.get("pass", "")) if isinstance(step, dict) else ""
        res = StepResult(index=i, uid=str(step.get("uid", "")) if isinstance(step, dict) else "", pass_id=pass_id,
                         title=ctx.pass_title(pass_id) if pass_id else "", state=NOT_RUN)
        if not model_missing and i == first_step:
            res.state = FAILED
            res.error = "nothing ran: " + consent.refusal_message([m for m in missing if m.index == i])
            if len(missing) > 1:
                res.error += "\n" + consent.refusal_message([m for m in missing if m.index != i])
            result.failed_index = i
        result.steps.append(res)
    if model_missing:
        result.error = "nothing ran: " + consent.refusal_message(missing)
    return result.to_json()


def dispatch(message: Any, ctx: WorkerContext) -> Any:
    """Run one request (a :class:`messages.Request`, or its JSON dict) and return the final
    :class:`messages.Reply` / :class:`messages.ErrorReply`."""
    if isinstance(message, dict):
        try:
            message = messages.Request.from_json(message)
        except messages.MessageError as exc:
            req_id = message.get("id") if isinstance(message.get("id"), int) else None
            return messages.ErrorReply.make(req_id, f"bad request: {exc}", code=messages.INVALID_REQUEST)
    req_id = message.id
    fn = HANDLERS.get(message.method)
    if fn is None:
        return messages.ErrorReply.make(
            req_id, f"unknown engine command {message.method!r} (known: {', '.join(sorted(HANDLERS))})",
            code=messages.METHOD_NOT_FOUND)
    ctx.request_id = req_id
    ctx.consent = request_consent(message.params)
    started = time.perf_counter()
    try:
        value = fn(dict(message.params), ctx)
        return messages.Reply(req_id, value if isinstance(value, dict) else {"value": value})
    except Exception as exc:  # noqa: BLE001 - every handler failure goes back to the client
        text = str(exc).strip()
        msg = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        if isinstance(exc, KeyError) and exc.args:
            msg = str(exc.args[0])
        code = int(getattr(exc, "rpc_code", messages.HANDLER_ERROR))
        reply = messages.ErrorReply.make(req_id, msg, traceback.format_exc(), code=code)
        if isinstance(exc, ConsentError):
            reply.error.data["files"] = [item.to_json() for item in exc.items]
        return reply
    finally:
        ctx.request_id = None
        ctx.consent = {}
        if TRACE:
            print(f"[engine] {message.method} #{req_id}: {(time.perf_counter() - started) * 1000:.0f} ms",
                  file=sys.stderr, flush=True)


def request_consent(params: dict[str, Any]) -> dict[str, Any]:
    """The consent fields of a request's params, including those of the run arguments nested in build
    requests (``run``; ``a``/``b``.``run`` of ``compare``; ``modules[].run`` of a multi-compare): the union
    of the consented content hashes, and ``trust_all`` when any part consents to everything."""
    runs: list[dict[str, Any]] = [params]
    for part in [params, params.get("a"), params.get("b"), *(params.get("modules") or [])]:
        if isinstance(part, dict) and isinstance(part.get("run"), dict):
            runs.append(part["run"])
    out: dict[str, Any] = {}
    hashes: list[str] = []
    for run in runs:
        if run.get("trust_all") or run.get("trust_custom_code"):
            out["trust_all"] = True
        for sha in run.get("trusted_hashes") or []:
            if isinstance(sha, str) and sha not in hashes:
                hashes.append(sha)
    if hashes:
        out["trusted_hashes"] = hashes
    return out


def _reader(stream: Any, inbox: "queue.Queue[Optional[messages.Request]]", ctx: WorkerContext,
            output: Optional[_Output] = None) -> None:
    """Read requests; controls take effect at once, requests queue for the main loop.

    End of input (the client closed the pipe or died) ends the engine at once, also when a request
    is running: the process group is killed (see :func:`_end_process_group`).
    """
    for raw in stream:
        try:
            message = protocol.decode_client(raw)
        except protocol.ProtocolError as exc:
            print(f"engine: ignoring bad protocol line: {exc}", file=sys.stderr)
            try:
                data = protocol.decode(raw)
                if output is not None and isinstance(data.get("id"), int) and not isinstance(data.get("id"), bool):
                    output.write(messages.ErrorReply.make(data["id"], str(exc), code=messages.INVALID_REQUEST))
            except (protocol.ProtocolError, OSError):
                pass
            continue
        if isinstance(message, messages.Control):
            if message.method == messages.CMD_CANCEL:
                ctx.mark_cancelled(message.id)
            elif message.method == messages.CMD_STOP_TUNING:
                ctx.mark_stop_tuning(message.id)
            else:  # shutdown: after the request in flight
                inbox.put(None)
                return
        else:
            inbox.put(message)
    # EOF: nobody is listening any more.
    if ctx.request_id is not None:
        _end_process_group(0)
    inbox.put(None)


def _end_process_group(code: int) -> None:
    """Exit now and take the engine's own process group (children of user code) along."""
    try:
        sys.stderr.flush()
    except Exception:  # noqa: BLE001
        pass
    if _leads_own_group() and hasattr(os, "killpg"):
        try:
            os.killpg(os.getpgrp(), 9)
        except OSError:
            pass
    os._exit(code)


def _leads_own_group() -> bool:
    """True when the client started this engine as the leader of its own process group (never
    kill a group the engine does not own, e.g. when started by hand)."""
    return bool(os.environ.get("RPS_ENGINE_OWN_GROUP")) and hasattr(os, "getpgrp") and os.getpgrp() == os.getpid()


def _set_parent_death_signal(sig: int) -> bool:
    """Linux ``prctl(PR_SET_PDEATHSIG, sig)`` through ctypes; False where unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(1, int(sig), 0, 0, 0) == 0  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        return False


def start_guardian(stdin_fd: int = 0) -> Optional[int]:
    """Fork the engine's guardian: a tiny process in the engine's process group that kills the whole
    group (engine and every child of user code) when the client goes away — the read end of the
    engine's stdin pipe hangs up (client closed it, exited or was killed with SIGKILL) — or when the
    engine itself dies (``PR_SET_PDEATHSIG``, so even a SIGKILLed engine leaves no children). Called
    before any thread exists. Returns the guardian's pid (``None`` when not started: not POSIX, or
    the engine is not the leader of its own process group)."""
    if not hasattr(os, "fork") or not _leads_own_group():
        return None
    engine_pid = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    # Guardian: no Python state of the engine is used beyond this function.
    import select
    import signal

    group = os.getpgrp()
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (1, 2):
        if fd != stdin_fd:
            os.dup2(devnull, fd)
    os.closerange(3, 65536)  # the protocol pipes: the client must see EOF when the engine dies

    def kill_group(*_args: Any) -> None:
        try:
            os.killpg(group, signal.SIGKILL)
        finally:
            os._exit(0)

    signal.signal(signal.SIGUSR1, kill_group)
    _set_parent_death_signal(signal.SIGUSR1)
    if os.getppid() != engine_pid:
        kill_group()
    poller = select.poll()
    poller.register(stdin_fd, 0)  # only POLLHUP / POLLERR / POLLNVAL
    while True:
        events = poller.poll(1000)
        if events or os.getppid() != engine_pid:
            kill_group()


def _import_without_torch(module_name: str) -> None:
    """Import ``module_name`` (``tvm_ffi``, ``tvm``) without the eager ``import torch`` they do.

    torch costs ~3 s of engine start-up, and the engine needs it only for the PyTorch importer,
    which imports it itself when a torch model is loaded. tvm_ffi and ``tvm.relax.base_py_module``
    try ``import torch`` at import time for optional DLPack interop (which the app does not use); a
    ``None`` entry in ``sys.modules`` makes that import fail fast, and removing the entry afterwards
    lets a later ``import torch`` work normally.
    """
    if "torch" in sys.modules:
        importlib.import_module(module_name)
        return
    sys.modules["torch"] = None  # type: ignore[assignment]
    try:
        importlib.import_module(module_name)
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]


def main() -> int:
    """Engine entry point."""
    start_guardian(0)
    proto_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    output = _Output(proto_fd)

    _import_without_torch("tvm_ffi")
    import tvm_ffi

    problem = ffi_version_problem(str(tvm_ffi.__version__))
    if problem is None and os.environ.get("RPS_ENGINE_FAKE_FFI_VERSION"):
        # Lets tests check the refusal path without installing a bad version.
        problem = ffi_version_problem(os.environ["RPS_ENGINE_FAKE_FFI_VERSION"])
    if problem:
        output.write(messages.Notification(None, messages.Fatal(message=problem)))
        print(f"engine: {problem}", file=sys.stderr)
        return EXIT_REFUSED

    # Before anything parallel runs: TVM's runtime would use half the cores (pipeline_model.runtime_threads).
    ensure_runtime_threads()
    start = time.perf_counter()
    _import_without_torch("tvm")  # import once, up front
    import tvm

    from pipeline_model.engine import runner  # noqa: F401 - runner imports tvm pieces

    imported = load_handlers()  # every handlers_*.py, then RPS_ENGINE_HANDLER_MODULES
    ctx = WorkerContext(output)
    output.write(messages.Notification(None, messages.Ready(
        pid=os.getpid(), tvm=str(tvm.__version__), tvm_ffi=str(tvm_ffi.__version__),
        handler_modules=imported, startup_ms=(time.perf_counter() - start) * 1000.0)))
    inbox: "queue.Queue[Optional[messages.Request]]" = queue.Queue()
    reader = threading.Thread(target=_reader, args=(sys.stdin.buffer, inbox, ctx, output), daemon=True)
    reader.start()
    while True:
        message = inbox.get()
        if message is None:
            break
        output.write(dispatch(message, ctx))
    return 0


if __name__ == "__main__":
    # Run the imported module's main so handler modules that import this module register their
    # handlers in the same registry (``python -m`` would otherwise make a second copy as __main__).
    from pipeline_model.engine import worker as _worker

    sys.exit(_worker.main())
