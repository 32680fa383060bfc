"""Running a built module on an RPC device (engine side; imports TVM inside the functions).

A ``build_run``/``compare`` request with ``remote`` (``{"tracker": "HOST:PORT", "key": ...}``,
:func:`pipeline_model.targets.remote_spec`) builds here as usual, then: the executable is written with
``export_library`` into a private temporary folder, a device of the key is requested from the tracker
(:func:`pipeline_model.scriptlib.rpc.tracker_request_fn`, which says which server serves), the library is
uploaded and loaded there, and the Relax VM runs, is timed (``time_evaluator`` over RPC) and its outputs come
back to be checked against the local reference. Within :func:`one_device` (a ``compare`` request) every module
goes to the same device.

TVM's VM over RPC takes tensors only through its stateful API (``set_input``, ``invoke_stateful``,
``get_outputs``; a tuple argument cannot cross: "Cannot pass argument 0, type ffi.Array"), which
:class:`RemoteVM` wraps. So the weight transform ``LiftTransformParams`` lifts (its argument is a tuple) runs
here on the CPU and its results are uploaded: a CPU target this machine can run. The VM instrument a local
profile uses is a Python callback, which TVM cannot call from a remote VM: the profile on an RPC device times
each kernel there by itself (:mod:`pipeline_model.engine.build.remote_profile`).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import uuid
from typing import Any, Iterator, Optional

from pipeline_model import targets as targets_mod
from pipeline_model.engine.build.errors import error_text
from pipeline_model.scriptlib.arguments import TRANSFORM_SUFFIX
from pipeline_model.scriptlib.functions import BuildError
from pipeline_model.scriptlib.rpc import tracker_devices, tracker_request_fn

#: Seconds an RPC server keeps one Build & Run session (the server ends it after that).
SESSION_TIMEOUT_S = 600
#: Inside :func:`one_device`: the session of each ``(tracker, key)`` the request has opened.
_SHARED: Optional[dict[tuple[str, str], tuple[Any, str]]] = None


@contextlib.contextmanager
def one_device() -> Iterator[None]:
    """Every module placed on an RPC device of a key within this block goes to the same device (one session):
    a comparison timed on two boards would compare the boards. The sessions end with the block."""
    global _SHARED
    outer, _SHARED = _SHARED, {} if _SHARED is None else _SHARED
    try:
        yield
    finally:
        _SHARED = outer


def _session(host: str, port: int, key: str) -> tuple[Any, str]:
    """A session on a device of ``key`` and its ``host:port`` (the block's own inside :func:`one_device`)."""
    shared = _SHARED.get((f"{host}:{port}", key)) if _SHARED is not None else None
    if shared is None:
        shared = tracker_request_fn()(host, port, key, SESSION_TIMEOUT_S)
        if _SHARED is not None:
            _SHARED[(f"{host}:{port}", key)] = shared
    return shared


def check_remote(remote: Any) -> dict[str, Any]:
    """``remote`` checked: a tracker address and a key the tracker has a device for; ``BuildError`` in one line
    otherwise (the tracker is asked with a 5-s socket timeout)."""
    if not isinstance(remote, dict):
        raise BuildError("remote must be {\"tracker\": \"HOST:PORT\", \"key\": ...}")
    try:
        spec = targets_mod.remote_spec(str(remote.get("tracker") or ""), str(remote.get("key") or ""))
        host, port = targets_mod.parse_tracker(spec["tracker"])
    except ValueError as exc:
        raise BuildError(str(exc)) from None
    try:
        devices = tracker_devices(host, port)
    except OSError as exc:
        raise BuildError(f"cannot reach the RPC tracker at {spec['tracker']}: {exc}") from None
    if not devices.get(spec["key"], {}).get("total"):
        known = ", ".join(sorted(k for k, v in devices.items() if v.get("total"))) or "none"
        raise BuildError(f"the RPC tracker at {spec['tracker']} has no device with key {spec['key']!r} "
                         f"(keys it has: {known})")
    return spec


class RemoteRun:
    """A built executable placed on an RPC device: ``vm`` (a Relax VM there), ``dev`` (the remote device),
    ``device`` (its label, ``rpc <key> <host:port> <device>``), ``session`` and ``executable`` (what was
    uploaded). Keeps the session open while it lives."""

    def __init__(self, executable: Any, target: dict[str, Any], remote: dict[str, Any]) -> None:
        import tvm

        spec = check_remote(remote)
        self.executable = executable
        host, port = targets_mod.parse_tracker(spec["tracker"])
        with tempfile.TemporaryDirectory(prefix="rps-rpc-") as private:
            name = f"rps_{uuid.uuid4().hex[:12]}.so"  # a module of its own: another one may be loaded there
            path = os.path.join(private, name)
            try:
                executable.export_library(path)
            except Exception as exc:  # noqa: BLE001
                raise BuildError(f"export_library for the RPC device failed: {error_text(exc)}") from None
            try:
                self.session, server = _session(host, port, spec["key"])
                self.session.upload(path)
                library = self.session.load_module(name)
                self.dev = self.session.device(targets_mod.device_kind_for(target), 0)
                self.vm = RemoteVM(tvm.relax.VirtualMachine(library, self.dev), executable, self.dev, target)
            except BuildError:
                raise
            except Exception as exc:  # noqa: BLE001 - connection, upload, a device the server lacks
                raise BuildError(f"RPC device {spec['key']} at {spec['tracker']}: {error_text(exc)}") from None
        self.device = f"rpc {spec['key']} {server} {targets_mod.device_kind_for(target)}:0"


class RemoteVM:
    """A Relax VM on an RPC device called as a local one is (``vm[name](*args)``, ``time_evaluator``), through
    the stateful API; ``<f>_transform_params`` runs on this machine's CPU (``executable``), its results are
    copied to the device."""

    def __init__(self, vm: Any, executable: Any, dev: Any, target: dict[str, Any]) -> None:
        self.vm, self.executable, self.dev, self.target = vm, executable, dev, target
        self._local: Any = None

    def __getitem__(self, name: str) -> Any:
        if name.endswith(TRANSFORM_SUFFIX):
            return self._transform(name)

        def call(*args: Any) -> Any:
            self.vm.set_input(name, *args)
            self.vm.invoke_stateful(name)
            return self.vm.get_outputs(name)

        return call

    def time_evaluator(self, name: str, dev: Any, *args: Any, **kwargs: Any) -> Any:
        """TVM's stateful timing over RPC: the inputs set, then ``invoke_stateful`` timed on the device."""
        evaluator = self.vm.time_evaluator("invoke_stateful", dev, *args, **kwargs)

        def timed(*call_args: Any) -> Any:
            self.vm.set_input(name, *call_args)
            return evaluator(name)

        return timed

    def _transform(self, name: str) -> Any:
        import tvm

        if targets_mod.device_kind_for(self.target) != "cpu":
            raise BuildError(f"{name} (LiftTransformParams) takes a tuple, which TVM cannot pass to a VM over RPC, "
                             f"and this machine cannot run it for {self.target.get('kind')}: build without "
                             "LiftTransformParams to run on this RPC device")
        if self._local is None:
            self._local = tvm.relax.VirtualMachine(self.executable, tvm.cpu())

        def run(params: Any) -> list[Any]:
            local = [tvm.runtime.tensor(p.numpy(), tvm.cpu()) for p in params]
            try:
                out = self._local[name](local)
            except Exception as exc:  # noqa: BLE001 - code for another CPU than this one
                raise BuildError(f"{name} (LiftTransformParams) runs on this machine for an RPC device and "
                                 f"failed: {error_text(exc)}") from None
            fields = [out] if hasattr(out, "numpy") else list(out)
            return [tvm.runtime.tensor(f.numpy(), self.dev) for f in fields]

        return run
