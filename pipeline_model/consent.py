"""Consent for code that files bring (TVM-free).

A run may execute code that came with a file: the source of a ``custom.python`` step, a pattern file
of ``relax.FuseOpsByPattern`` (``pattern_source: "file"``), and a model ``.py`` file of any kind
(TVMScript, Relax nn.Module, PyTorch). Built-in models shipped in ``resources/`` are the app's own
code and are trusted. :func:`code_items` lists what a run would execute, each with the SHA-256 of
its content; consent is given per content hash, so a changed file is asked about again.

Requests that may execute such code carry (see ``docs/ARCHITECTURE.md``, "Engine protocol")::

    "trusted_hashes": ["<sha256>", ...]   # content the user consented to
    "trust_all": true                     # consent to everything (CLI --trust)
    "trust_custom_code": true             # older name of trust_all (accepted from older clients)

Nobody writes these fields by hand: a :class:`Consent` (what the user consented to) is held by the
engine client (``EngineClient.consent``), which attaches its :meth:`Consent.fields` to every request that
may execute code. The CLI's ``--trust`` is ``Consent(trust_all=True)``; the GUI's consent service grants
the content hashes the user consented to.

The engine checks the request with :func:`missing_consent` before it loads the model or runs any
step; without consent nothing runs and the message (:func:`refusal_message`) names each file and why,
e.g. "model file x.py is Python code (an nn.Module file); it runs only with consent: run with --trust
or consent in the app".

:class:`ConsentStore` remembers consents per content hash in a JSON file under the user's config
directory (``$XDG_CONFIG_HOME/relax-pipeline-studio/consent.json``), for the GUI.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import os
import threading
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Optional

from pipeline_model import safe_files
from pipeline_model.resources import resource_root

KIND_CUSTOM = "custom_pass"
KIND_PATTERN = "pattern_file"
KIND_MODEL = "model_file"
#: A reproducer folder's ``repro.py`` (reduce runs it on every candidate module).
KIND_REPRO = "reproducer"
#: A MetaSchedule tuning database the user's own tuning did not write (its schedules are compiled in).
KIND_TUNING = "tuning_records"

#: The app's own folder: code under ``resources/`` ships with the app and is trusted.
RESOURCES_DIR = str(resource_root())

HOW_TO_CONSENT = "it runs only with consent: run with --trust or consent in the app"


@dataclass(frozen=True)
class CodeItem:
    """One piece of code a run would execute: ``kind`` (:data:`KIND_CUSTOM`, :data:`KIND_PATTERN`,
    :data:`KIND_MODEL`), a ``label`` for messages, the ``path`` (``None`` for inline code), the
    ``sha256`` of the content ("" when unreadable), the step ``index`` (``None`` for the model) and
    ``reason`` (why it is code, or why it cannot be checked)."""

    kind: str
    label: str
    path: Optional[str]
    sha256: str
    index: Optional[int] = None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        """Plain dict (for the engine's refusal reply and the GUI's consent dialog)."""
        return asdict(self)


def sha256_text(text: str) -> str:
    """Hex SHA-256 of a text's UTF-8 bytes (how inline custom code is hashed)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _resolve(path: str, base_dir: Optional[str]) -> str:
    full = os.path.expanduser(path)
    if not os.path.isabs(full):
        full = os.path.join(base_dir or os.getcwd(), full)
    return os.path.normpath(full)


def is_app_file(path: str) -> bool:
    """True for files shipped with the app (under ``resources/``)."""
    real = os.path.realpath(path)
    root = os.path.realpath(RESOURCES_DIR)
    return real == root or real.startswith(root + os.sep)


def _file_item(kind: str, label: str, path: str, index: Optional[int], reason: str) -> CodeItem:
    try:
        digest = safe_files.sha256_file(path, what=label)
    except OSError as exc:
        return CodeItem(kind, label, path, "", index, str(exc))
    return CodeItem(kind, label, path, digest, index, reason)


#: Model file suffixes that may hold code: Python files always; archives when a pickle in them could run code.
CODE_BEARING_SUFFIXES = (".py", ".pt2")


def model_path(spec: str, base_dir: Optional[str]) -> Optional[str]:
    """The file a model spec names when it may hold code (a ``.py`` or ``.pt2`` file outside the app's own
    ``resources/``), else ``None`` (built-ins, ONNX, the app's files)."""
    spec = str(spec or "").strip()
    if not spec or spec.startswith("builtin:"):
        return None
    path = _resolve(spec, base_dir)
    if not path.lower().endswith(CODE_BEARING_SUFFIXES) or is_app_file(path):
        return None
    return path


def model_item(spec: str, base_dir: Optional[str], data: Optional[bytes] = None) -> Optional[CodeItem]:
    """The model as code to consent to, else ``None``: a ``.py`` model file outside ``resources/``, and a
    ``.pt2`` archive holding a pickle that could run code when loaded (:mod:`pipeline_model.scriptlib.pickles`; a
    plain ``torch.export.save`` archive is data). ``data``: the file's bytes, read once by the caller, which
    are then what is scanned and hashed (the engine loads those same bytes); else the file is read here."""
    path = model_path(spec, base_dir)
    if path is None:
        return None
    label = f"model file {path}"
    if path.lower().endswith(".py"):
        reason = "is Python code (TVMScript, an nn.Module or a PyTorch model file runs when loaded)"
        return _content_item(label, path, data, reason) if data is not None else _file_item(
            KIND_MODEL, label, path, None, reason)
    from pipeline_model.scriptlib import pickles as pickle_scan

    if data is None:
        try:
            with safe_files.open_regular(path, label) as handle:
                found = pickle_scan.scan_archive(path, handle=handle)
        except OSError as exc:
            return CodeItem(KIND_MODEL, label, path, "", None, str(exc))
    else:
        found = pickle_scan.scan_archive(path, data=data)
    if not found:
        return None
    first = found[0]
    more = f" (and {len(found) - 1} more)" if len(found) > 1 else ""
    reason = (f"holds a pickle that can run code when loaded ({first.entry}: {first.reason}{more}); a plain "
              "torch.export.save archive holds none")
    return _content_item(label, path, data, reason) if data is not None else _file_item(
        KIND_MODEL, label, path, None, reason)


def archive_listing(item: CodeItem) -> Optional[str]:
    """What a consent dialog shows for a model archive (a ``.pt2``): there is no source to read, so the pickles
    that would run code and what each imports; ``None`` for items that are not archives."""
    if item.kind != KIND_MODEL or not item.path or not item.path.lower().endswith(".pt2"):
        return None
    from pipeline_model.scriptlib import pickles as pickle_scan

    try:
        with safe_files.open_regular(item.path, item.label) as handle:
            found = pickle_scan.scan_archive(item.path, handle=handle)
    except OSError as exc:
        return f"# {exc}"
    lines = [f"# {item.path} is a model archive (torch.export.save). Loading it unpickles the entries below;",
             "# each one imports functions that are not plain tensor data, and they would run:", "#"]
    lines += [f"#   {entry.entry}: {entry.reason}" for entry in found]
    lines += ["#", "# A plain torch.export.save archive holds no such pickle. Consent only if you trust its author."]
    return "\n".join(lines)


def tuning_listing(item: CodeItem) -> Optional[str]:
    """What a consent dialog shows for a tuning database (:data:`KIND_TUNING`): each record's time and schedule
    instructions, and which the allow-list refuses; ``None`` for other items."""
    if item.kind != KIND_TUNING or not item.path:
        return None
    from pipeline_model.passkinds.metaschedule.records import records_listing

    return records_listing(os.path.dirname(item.path))


def reproducer_item(folder: str) -> CodeItem:
    """The ``repro.py`` of a reproducer folder as code to consent to (reduce runs it on each candidate)."""
    path = os.path.join(folder, "repro.py")
    return _file_item(KIND_REPRO, f"reproducer {path}", path, None, "is Python code (reduce runs it on each candidate)")


def _content_item(label: str, path: str, data: bytes, reason: str) -> CodeItem:
    return CodeItem(KIND_MODEL, label, path, hashlib.sha256(data).hexdigest(), None, reason)


def step_items(steps: Iterable[dict[str, Any]], base_dir: Optional[str]) -> list[CodeItem]:
    """The code the enabled steps would execute (``steps``: run-request step dicts with ``pass``,
    ``params``, ``enabled``, ``placeholder``), as each step's pass kind declares it (``user_code``):
    code held in the step is hashed as text, a referenced file by its content (files shipped in
    ``resources/`` are the app's own and need no consent)."""
    from pipeline_model.document import Step
    from pipeline_model.passkinds import kind_for

    items = []
    for i, raw in enumerate(steps):
        if not isinstance(raw, dict) or not raw.get("enabled", True) or raw.get("placeholder"):
            continue
        pass_id = str(raw.get("pass") or "")
        params = raw.get("params") if isinstance(raw.get("params"), dict) else {}
        kind = kind_for(pass_id)
        if kind is None:
            continue
        for ref in kind.user_code(Step(pass_id, dict(params or {})), base_dir, i + 1):
            if ref.path is None:
                items.append(CodeItem(KIND_CUSTOM, f"step {i + 1} ({pass_id})", None, sha256_text(ref.read()), i,
                                      "is custom Python code"))
            elif not is_app_file(ref.path):
                items.append(_file_item(KIND_PATTERN, f"{ref.label} of step {i + 1}", ref.path, i,
                                        "is Python code (it runs when the step is built)"))
    return items


def tuning_items(steps: Iterable[dict[str, Any]], work_dir: Optional[str], base_dir: Optional[str]) -> list[CodeItem]:
    """The tuning databases the MetaSchedule steps would read that hold records the user's own tuning did not
    write (a pipeline folder's ``NAME.tuning/``, a folder a step points at;
    :func:`pipeline_model.passkinds.metaschedule.records.foreign_databases`), hashed by content: a tuning record
    is a schedule compiled into the model."""
    from pipeline_model.passkinds.metaschedule.records import DATABASE_FILES, foreign_databases

    items = []
    for index, folder, digest, problem in foreign_databases(list(steps), work_dir, base_dir):
        items.append(CodeItem(KIND_TUNING, f"tuning database {folder}", os.path.join(folder, DATABASE_FILES[1]),
                              digest, index, problem or "holds tuning records your own tuning did not measure "
                              "(their schedules are compiled into the model)"))
    return items


def code_items(model: str, base_dir: Optional[str], steps: Iterable[dict[str, Any]],
               work_dir: Optional[str] = None) -> list[CodeItem]:
    """Everything a run of ``model`` with ``steps`` would execute that did not ship with the app; with the run's
    tuning ``work_dir``, also the tuning databases of :func:`tuning_items`."""
    steps = list(steps)
    item = model_item(model, base_dir)
    records = tuning_items(steps, work_dir, base_dir) if work_dir else []
    return ([item] if item is not None else []) + step_items(steps, base_dir) + records


def request_trusts_all(args: dict[str, Any]) -> bool:
    """True when a request consents to everything (``trust_all`` or the older ``trust_custom_code``)."""
    return bool(args.get("trust_all")) or bool(args.get("trust_custom_code"))


def missing_consent(items: Iterable[CodeItem], trusted_hashes: Iterable[str] = (), trust_all: bool = False) -> list[CodeItem]:
    """The items not covered by the consent given (an unreadable file is never covered)."""
    if trust_all:
        return []
    trusted = {str(h) for h in trusted_hashes}
    return [item for item in items if not item.sha256 or item.sha256 not in trusted]


def describe(item: CodeItem) -> str:
    """One line: what the item is and why it needs consent."""
    if not item.sha256 and item.reason and item.kind != KIND_CUSTOM:
        return f"{item.label} cannot be checked: {item.reason}"
    return f"{item.label} {item.reason} and is not trusted"


#: How the error of a step (or run) refused for lack of consent starts: nothing of it ran.
REFUSAL_PREFIX = "nothing ran: "


def refusal_message(missing: list[CodeItem]) -> str:
    """The message of a refused run: each item and how to consent."""
    lines = [describe(item) for item in missing]
    if len(lines) == 1:
        return f"{lines[0]}; {HOW_TO_CONSENT}"
    return "this run would execute code without consent (" + HOW_TO_CONSENT + "):\n" + "\n".join(
        f"  - {line}" for line in lines)


class Consent:
    """What the user consented to: everything (``trust_all``, the CLI's ``--trust``) or the content
    hashes in :meth:`hashes`. Thread-safe: the GUI grants from its thread while the engine client's
    thread reads :meth:`fields` for each request."""

    def __init__(self, trust_all: bool = False, hashes: Iterable[str] = ()) -> None:
        self._lock = threading.Lock()
        self._trust_all = bool(trust_all)
        self._hashes: set[str] = {str(h) for h in hashes if h}

    @classmethod
    def everything(cls) -> "Consent":
        """Consent to all code (the CLI's ``--trust``)."""
        return cls(trust_all=True)

    @property
    def trust_all(self) -> bool:
        """True when everything is consented to."""
        return self._trust_all

    def hashes(self) -> list[str]:
        """The consented content hashes, sorted."""
        with self._lock:
            return sorted(self._hashes)

    def grant(self, hashes: Iterable[str]) -> None:
        """Consent to the content ``hashes`` as well."""
        with self._lock:
            self._hashes.update(str(h) for h in hashes if h)

    def replace(self, hashes: Iterable[str]) -> None:
        """Consent to exactly the content ``hashes`` (``trust_all`` unchanged)."""
        fresh = {str(h) for h in hashes if h}
        with self._lock:
            self._hashes = fresh

    def fields(self) -> dict[str, Any]:
        """The consent fields of a request: ``trust_all`` and, when any, ``trusted_hashes``."""
        with self._lock:
            out: dict[str, Any] = {"trust_all": self._trust_all}
            if self._hashes:
                out["trusted_hashes"] = sorted(self._hashes)
            return out

    def __repr__(self) -> str:
        return "Consent(trust_all=True)" if self._trust_all else f"Consent(hashes={self.hashes()!r})"


# --------------------------------------------------------------------------------------------- store


def user_config_dir() -> str:
    """Per-user config folder of the app (``$XDG_CONFIG_HOME/relax-pipeline-studio``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "relax-pipeline-studio")


class ConsentStore:
    """Consents remembered per content hash in a JSON file (default ``user_config_dir()/consent.json``).

    File format: ``{"format": "relax-pipeline-studio.consent", "version": 1, "hashes": {sha256:
    {"kind", "label", "path", "granted"}}}``; written atomically. A damaged file counts as empty (and
    is replaced on the next grant).
    """

    FORMAT = "relax-pipeline-studio.consent"
    VERSION = 1

    def __init__(self, path: Optional[str] = None) -> None:
        self.path = path or os.path.join(user_config_dir(), "consent.json")
        self._hashes: dict[str, dict[str, Any]] = self._load()

    def _load(self) -> dict[str, dict[str, Any]]:
        try:
            data = json.loads(safe_files.read_text(self.path, "consent file", 16 * 1024 * 1024))
        except (OSError, ValueError, RecursionError):
            return {}
        hashes = data.get("hashes") if isinstance(data, dict) and data.get("format") == self.FORMAT else None
        if not isinstance(hashes, dict):
            return {}
        return {str(k): dict(v) if isinstance(v, dict) else {} for k, v in hashes.items()}

    def is_trusted(self, sha256: str) -> bool:
        """True when the content ``sha256`` was consented to."""
        return bool(sha256) and sha256 in self._hashes

    def trusted_hashes(self) -> list[str]:
        """All consented content hashes (for a request's ``trusted_hashes``)."""
        return sorted(self._hashes)

    def missing(self, items: Iterable[CodeItem]) -> list[CodeItem]:
        """The items not consented to yet (what the GUI asks about)."""
        return missing_consent(items, self._hashes)

    def grant(self, items: Iterable[CodeItem]) -> None:
        """Remember consent for ``items`` (readable ones) and save."""
        now = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")
        for item in items:
            if item.sha256:
                self._hashes[item.sha256] = {"kind": item.kind, "label": item.label, "path": item.path, "granted": now}
        self.save()

    def revoke(self, sha256: str) -> None:
        """Forget one consent and save."""
        if self._hashes.pop(sha256, None) is not None:
            self.save()

    def save(self) -> None:
        """Write the file atomically (temp file in the same folder, then rename)."""
        folder = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(folder, exist_ok=True)
        data = {"format": self.FORMAT, "version": self.VERSION, "hashes": self._hashes}
        safe_files.write_json_atomic(self.path, data, prefix=".consent.", indent=1, sort_keys=True)
