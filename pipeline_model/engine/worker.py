"""The engine process: ``python -m pipeline_model.engine.worker``.

Reads JSON-line requests on stdin and answers on the *real* stdout (a duplicate of file descriptor 1
taken at start); fd 1 itself is redirected to stderr so prints from TVM or user code cannot corrupt the
protocol stream. A reader thread receives ``cancel`` and ``stop_tuning`` while a request runs; requests run one at a time on
the main thread through a handler registry::

    @handler("name")
    def fn(args: dict, ctx: WorkerContext) -> dict: ...

Extra handler modules (:data:`HANDLER_MODULES`) are imported at start; one that does not exist is
skipped. Built-in commands: ``ping``, ``catalogue``, ``run`` (see :mod:`pipeline_model.engine.runner`),
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

from pipeline_model.engine import protocol
from pipeline_model.engine.handler_registry import HANDLERS, HandlerFn, handler  # noqa: F401 - re-exported

#: Extra handler modules imported at start (skipped when they do not exist).
HANDLER_MODULES = [
    "pipeline_model.engine.handlers_graph",
    "pipeline_model.engine.handlers_build",
    "pipeline_model.engine.handlers_tuning",
    "pipeline_model.engine.handlers_env",
]

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


class ModuleCache:
    """LRU cache of IRModules (and their TVMScript) by key, bounded by entry count and script bytes."""

    #: Nominal size charged per module besides its script text.
    MODULE_COST = 64 * 1024

    def __init__(self, max_entries: int = 400, max_bytes: int = 512 * 1024 * 1024) -> None:
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
        item.size = self.MODULE_COST + (len(script) if script else 0)
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
        item.size = self.MODULE_COST + len(script)
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
        while self._entries and (len(self._entries) > self.max_entries or self._bytes > self.max_bytes):
            if len(self._entries) == 1:
                break  # always keep the newest entry
            _key, item = self._entries.popitem(last=False)
            self._bytes -= item.size


# --------------------------------------------------------------------------------------------- context


class _Output:
    """Thread-safe writer of protocol lines to the duplicated stdout descriptor."""

    def __init__(self, fd: int) -> None:
        self._file = os.fdopen(fd, "wb", buffering=0)
        self._lock = threading.Lock()

    def write(self, message: dict[str, Any]) -> None:
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

    # events and cancellation
    def emit(self, event: str, data: dict[str, Any]) -> None:
        """Send an event for the current request."""
        if self._output is None:
            self.events.append((event, data))
            return
        self._output.write(protocol.event(self.request_id, event, data))

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

    # models
    def load_model(self, spec: str, base_dir: Optional[str]) -> Any:
        """Load a model (``LoadedModel``), memoised by its key (which includes the file's content hash)."""
        from pipeline_model import models, models_tvm

        key = models.model_key(spec, base_dir)
        loaded = self._models.get(key)
        if loaded is None:
            loaded = models_tvm.load_model(spec, base_dir)
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
            from pipeline_model import catalogue_tvm

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
    """Run a pipeline (see :func:`pipeline_model.engine.runner.run_pipeline`)."""
    from pipeline_model.engine import runner

    return runner.run_pipeline(args, ctx)


def import_handler_modules(names: list[str]) -> list[str]:
    """Import the extra handler modules that exist; returns the names imported."""
    imported = []
    for name in names:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name == name:
                continue
            raise
        imported.append(name)
    return imported


def dispatch(message: dict[str, Any], ctx: WorkerContext) -> dict[str, Any]:
    """Run one request message and return the final reply/error message."""
    req_id = message.get("id")
    cmd = message.get("cmd")
    fn = HANDLERS.get(str(cmd))
    if fn is None:
        return protocol.error(req_id, f"unknown engine command {cmd!r} (known: {', '.join(sorted(HANDLERS))})")
    ctx.request_id = req_id
    try:
        value = fn(dict(message.get("args") or {}), ctx)
        return protocol.reply(req_id, value if isinstance(value, dict) else {"value": value})
    except Exception as exc:  # noqa: BLE001 - every handler failure goes back to the client
        text = str(exc).strip()
        msg = f"{type(exc).__name__}: {text}" if text else type(exc).__name__
        if isinstance(exc, KeyError) and exc.args:
            msg = str(exc.args[0])
        return protocol.error(req_id, msg, traceback.format_exc())
    finally:
        ctx.request_id = None


def _reader(stream: Any, inbox: "queue.Queue[Optional[dict]]", ctx: WorkerContext) -> None:
    """Read requests; cancels take effect at once, everything else queues for the main loop."""
    for raw in stream:
        try:
            message = protocol.decode(raw)
        except protocol.ProtocolError as exc:
            print(f"engine: ignoring bad protocol line: {exc}", file=sys.stderr)
            continue
        cmd = message.get("cmd")
        if cmd == protocol.CMD_CANCEL:
            ctx.mark_cancelled(message.get("id"))
        elif cmd == protocol.CMD_STOP_TUNING:
            ctx.mark_stop_tuning(message.get("id"))
        elif cmd == protocol.CMD_SHUTDOWN:
            break
        else:
            inbox.put(message)
    inbox.put(None)


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
        output.write(protocol.event(None, protocol.EV_FATAL, {"message": problem}))
        print(f"engine: {problem}", file=sys.stderr)
        return EXIT_REFUSED

    start = time.perf_counter()
    _import_without_torch("tvm")  # import once, up front
    import tvm

    from pipeline_model.engine import runner  # noqa: F401 - runner imports tvm pieces

    imported = import_handler_modules(HANDLER_MODULES)
    ctx = WorkerContext(output)
    output.write(
        protocol.event(
            None,
            protocol.EV_READY,
            {
                "pid": os.getpid(),
                "tvm": str(tvm.__version__),
                "tvm_ffi": str(tvm_ffi.__version__),
                "handler_modules": imported,
                "startup_ms": (time.perf_counter() - start) * 1000.0,
            },
        )
    )
    inbox: "queue.Queue[Optional[dict]]" = queue.Queue()
    reader = threading.Thread(target=_reader, args=(sys.stdin.buffer, inbox, ctx), daemon=True)
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
