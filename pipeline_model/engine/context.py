"""What a command handler gets: the engine's module cache and the per-request context (:class:`WorkerContext`).

Apart from :mod:`pipeline_model.engine.worker` (the process and its loop) so that handler modules and the
``engine/build`` package can name :class:`WorkerContext` without importing the worker, which imports the runner:
no import cycle, not even through type-checking imports. TVM-free at import (the cache's size estimate and the
model loading import TVM inside functions).
"""

from __future__ import annotations

import collections
import os
import threading
from dataclasses import dataclass, field
from typing import Any, Optional

from pipeline_model.engine import messages, protocol


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

    def _holds_current(self, marks: set[int]) -> bool:
        """Whether ``marks`` (request ids the client sent a control message about) holds the current request."""
        with self._lock:
            return self.request_id is not None and self.request_id in marks

    def _mark(self, marks: set[int], req_id: Any) -> None:
        """Add ``req_id`` to ``marks``; past 1000 ids, those of requests before the current one are dropped."""
        with self._lock:
            marks.add(req_id)
            if len(marks) > 1000:
                marks.intersection_update({i for i in marks if self.request_id is None or i >= self.request_id})

    def cancelled(self) -> bool:
        """True when the client asked to cancel the current request."""
        return self._holds_current(self._cancelled)

    def mark_cancelled(self, req_id: Any) -> None:
        """Record a cancel for request ``req_id`` (called from the reader thread)."""
        self._mark(self._cancelled, req_id)

    def stop_tuning_requested(self) -> bool:
        """True when the client asked to end the tuning in flight in the current request early."""
        return self._holds_current(self._stop_tuning)

    def mark_stop_tuning(self, req_id: Any) -> None:
        """Record a ``stop_tuning`` for request ``req_id`` (called from the reader thread)."""
        self._mark(self._stop_tuning, req_id)

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

        A model ``.py`` file is code, and so is a ``.pt2`` archive holding a pickle that could run code: without
        consent in the current request :class:`ConsentError` is raised before anything of it runs. Such a file is
        read once: consent is checked on those bytes and the loader gets the same bytes
        (:mod:`pipeline_model.importers.content`), so a file replaced after the check is never loaded."""
        import contextlib

        from pipeline_model import consent, models, safe_files
        from pipeline_model.importers import content, load_tvm

        path = consent.model_path(spec, base_dir)
        data: Optional[bytes] = None
        if path is not None:
            try:
                data = safe_files.read_bytes(path, "model file", content.MAX_MODEL_BYTES)
            except OSError:
                data = None  # model_item names the problem (the file cannot be checked)
        item = consent.model_item(spec, base_dir, data=data)
        if item is not None:
            missing = self.missing_consent([item])
            if missing:
                raise ConsentError(consent.refusal_message(missing), missing)
        pin = content.pinned(path, data) if path is not None and data is not None else contextlib.nullcontext()
        with pin:
            key = models.model_key(spec, base_dir)
            loaded = self._models.get(key)
            if loaded is None:
                loaded = load_tvm.load_model(spec, base_dir)
                if data is not None:
                    loaded.content_sha256 = content.sha256(data)
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
