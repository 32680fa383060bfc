"""Which pickles inside a model archive could run code when loaded (TVM-free, torch-free, nothing executed).

A ``.pt2`` archive (``torch.export.save``) holds pickles: sample inputs (``data/sample_inputs/*.pt``, a
``torch.save`` zip with a ``data.pkl``), and weights or constants saved with ``use_pickle: true``. Torch loads
some of them with ``weights_only=False`` or falls back to it, so a crafted pickle whose ``__reduce__`` calls
``os.system`` runs when the archive is loaded (issue 20). This module reads the pickles' opcodes with
:mod:`pickletools` — it never unpickles — and reports every global a pickle would import that is not on
:func:`is_safe_global`'s list: the classes and functions PyTorch's own weights-only loader allows for plain
tensors (tensor rebuilders, storages, dtypes, ``Size``, ``device``, ``OrderedDict``). An archive with such a
pickle is *code* for the consent rules (:mod:`pipeline_model.consent`); an archive without is data.

The scan is bounded: at most :data:`MAX_ENTRIES` archive entries and :data:`MAX_PICKLE_BYTES` per pickle; an
archive that cannot be scanned within those bounds (or is damaged) counts as code, with the reason.
"""

from __future__ import annotations

import io
import pickletools
import re
import zipfile
from dataclasses import dataclass
from typing import IO, Iterator, Optional

#: Entries of an archive read at most.
MAX_ENTRIES = 10_000
#: Bytes of one pickle read at most (larger pickles are reported as not scannable).
MAX_PICKLE_BYTES = 64 * 1024 * 1024
#: Nesting of zip archives (a ``torch.save`` zip inside a ``.pt2`` zip) followed at most.
MAX_DEPTH = 2

_TORCH_DTYPES = re.compile(r"^(float|int|uint|bfloat|complex|bool|half|double|long|short|cfloat|cdouble|chalf|qint|quint|"
                           r"float8_)[A-Za-z0-9_]*$")
_SAFE_EXACT = {
    ("collections", "OrderedDict"),
    ("torch", "Size"),
    ("torch", "device"),
    ("torch", "strided"),
    ("torch", "sparse_coo"),
    ("torch", "Tensor"),
    ("torch._tensor", "_rebuild_from_type_v2"),
    ("torch.nn.parameter", "Parameter"),
    ("torch.serialization", "_get_layout"),
    ("torch.storage", "UntypedStorage"),
    ("torch.storage", "TypedStorage"),
    ("builtins", "set"),
    ("builtins", "frozenset"),
    ("builtins", "complex"),
    ("builtins", "slice"),
    ("builtins", "tuple"),
    ("builtins", "list"),
    ("builtins", "dict"),
}


def is_safe_global(module: str, name: str) -> bool:
    """Whether a pickle may import ``module.name`` without that being code: what PyTorch's weights-only
    unpickler allows for plain tensors and containers (tensor rebuilders, typed storages, dtypes)."""
    if (module, name) in _SAFE_EXACT:
        return True
    if module == "torch._utils" and name.startswith("_rebuild_"):
        return True
    if module == "torch" and (name.endswith("Storage") or _TORCH_DTYPES.match(name)):
        return True
    return False


@dataclass(frozen=True)
class UnsafePickle:
    """A pickle in an archive that could run code: where it is and why (the first unsafe globals)."""

    entry: str
    reason: str


def _globals(data: bytes) -> Iterator[tuple[str, str]]:
    """``(module, name)`` of every global the pickle ``data`` would import (GLOBAL, INST, STACK_GLOBAL)."""
    memo: dict[int, object] = {}
    stack: list[object] = []  # string-valued pushes only (enough to resolve STACK_GLOBAL)
    for opcode, arg, _pos in pickletools.genops(io.BytesIO(data)):
        name = opcode.name
        if name in ("GLOBAL", "INST"):
            module, _, attr = str(arg).partition(" ")
            yield module, attr
        elif name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8", "UNICODE", "SHORT_BINSTRING", "BINSTRING",
                      "STRING"):
            stack.append(arg)
        elif name == "MEMOIZE":
            memo[len(memo)] = stack[-1] if stack else None
        elif name in ("BINPUT", "LONG_BINPUT", "PUT"):
            memo[int(str(arg))] = stack[-1] if stack else None
        elif name in ("BINGET", "LONG_BINGET", "GET"):
            stack.append(memo.get(int(str(arg))))
        elif name == "STACK_GLOBAL":
            top: object = stack.pop() if stack else None
            below: object = stack.pop() if stack else None
            yield (below if isinstance(below, str) else "?"), (top if isinstance(top, str) else "?")
        else:
            stack.append(None)  # some other value: keeps positions right for later STACK_GLOBALs


def unsafe_globals(data: bytes) -> list[str]:
    """The unsafe globals of pickle ``data`` as ``module.name`` (in order, no duplicates); a pickle that cannot
    be parsed is reported as ``<unreadable pickle: …>``."""
    out: list[str] = []
    try:
        for module, name in _globals(data):
            if not is_safe_global(module, name):
                text = f"{module}.{name}"
                if text not in out:
                    out.append(text)
    except Exception as exc:  # noqa: BLE001 - a damaged or crafted pickle: it counts as code
        out.append(f"<unreadable pickle: {type(exc).__name__}: {exc}>")
    return out


def _looks_like_pickle(head: bytes) -> bool:
    return len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5


def _scan_zip(handle: IO[bytes], prefix: str, depth: int, found: list[UnsafePickle]) -> None:
    with zipfile.ZipFile(handle) as archive:
        infos = archive.infolist()
        if len(infos) > MAX_ENTRIES:
            found.append(UnsafePickle(prefix or "archive", f"more than {MAX_ENTRIES} entries: not scanned"))
            return
        for info in infos:
            if info.is_dir():
                continue
            where = f"{prefix}{info.filename}"
            with archive.open(info) as entry:
                head = entry.read(4)
            if head.startswith(b"PK\x03\x04") and depth < MAX_DEPTH:
                if info.file_size > MAX_PICKLE_BYTES:
                    found.append(UnsafePickle(where, f"nested archive of {info.file_size} bytes: not scanned"))
                    continue
                _scan_zip(io.BytesIO(archive.read(info)), where + "/", depth + 1, found)
            elif _looks_like_pickle(head) or info.filename.endswith((".pkl", ".pickle")):
                if info.file_size > MAX_PICKLE_BYTES:
                    found.append(UnsafePickle(where, f"pickle of {info.file_size} bytes: not scanned"))
                    continue
                bad = unsafe_globals(archive.read(info))
                if bad:
                    listed = ", ".join(bad[:3]) + (" …" if len(bad) > 3 else "")
                    found.append(UnsafePickle(where, f"imports {listed}"))


def scan_archive(path: str, data: Optional[bytes] = None, handle: Optional[IO[bytes]] = None) -> list[UnsafePickle]:
    """The pickles in the zip archive at ``path`` (or in ``data``, its bytes, or read from the open ``handle``)
    that could run code when loaded.

    Empty for an archive of safe pickles only. A file that is not a readable zip archive is reported as one
    entry (it cannot be shown safe)."""
    found: list[UnsafePickle] = []
    try:
        if data is not None:
            _scan_zip(io.BytesIO(data), "", 0, found)
        elif handle is not None:
            _scan_zip(handle, "", 0, found)
        else:
            with open(path, "rb") as fh:
                _scan_zip(fh, "", 0, found)
    except (OSError, zipfile.BadZipFile, RuntimeError, ValueError, EOFError) as exc:
        found.append(UnsafePickle(path, f"not a readable archive: {type(exc).__name__}: {exc}"))
    return found
