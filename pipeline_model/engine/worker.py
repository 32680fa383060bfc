"""The engine process: ``python -m pipeline_model.engine.worker``.

Reads JSON-line requests on stdin and answers on the *real* stdout (a duplicate of file descriptor 1
taken at start); fd 1 itself is redirected to stderr so prints from TVM or user code cannot corrupt the
protocol stream. A reader thread receives ``cancel`` and ``stop_tuning`` while a request runs; requests run one at a time on
the main thread through a handler registry::

    @handler("name")
    def fn(args: dict, ctx: WorkerContext) -> dict: ...

Handler modules (:mod:`pipeline_model.engine.handler_registry`: every ``engine/handlers_*.py``, then the
plug-ins' ``relax_pipeline_studio.engine_commands`` entry points) are imported at start; a plug-in that cannot
be imported is left out and named in the ``ping`` reply (``plugin_failures``) and the ``env`` reply. Built-in commands: ``ping``, ``catalogue``, ``run`` (see :mod:`pipeline_model.engine.runner`),
``snapshot``. The engine refuses to start (``fatal`` message, exit code 3) with a tvm_ffi version that is
known to crash.
"""

from __future__ import annotations

import importlib
import os
import queue
import sys
import threading
import time
import traceback
from typing import Any, Optional

from pipeline_model import plugins
from pipeline_model.engine import messages, protocol
from pipeline_model.engine.context import ConsentError, WorkerContext, _Output
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
        "plugin_failures": [f.to_json() for f in plugins.failures()],
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
    from pipeline_model.work_dirs import run_work_dir

    steps = list(args.get("steps") or [])
    until = args.get("until")
    considered = [s for i, s in enumerate(steps) if until is None or not isinstance(until, int) or i <= until]
    items = consent.code_items(str(args.get("model") or ""), args.get("base_dir"), considered, run_work_dir(args))
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
            res.error = consent.REFUSAL_PREFIX + consent.refusal_message([m for m in missing if m.index == i])
            if len(missing) > 1:
                res.error += "\n" + consent.refusal_message([m for m in missing if m.index != i])
            result.failed_index = i
        result.steps.append(res)
    if model_missing:
        result.error = consent.REFUSAL_PREFIX + consent.refusal_message(missing)
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

    imported = load_handlers()  # every handlers_*.py, then the plug-ins' engine commands
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
