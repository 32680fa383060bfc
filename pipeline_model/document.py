"""The pipeline document: a model reference, a target and an ordered list of steps.

This module is the Qt-free, TVM-free data model that every other part of the application shares.
A :class:`PipelineDocument` is what a pipeline file holds (see :mod:`pipeline_model.fileformat` for
the on-disk format, its versions and migrations) and what the engine runs.
"""

from __future__ import annotations

import copy
import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional

if TYPE_CHECKING:
    from pipeline_model.pass_context import PassContextSettings

#: Target aliases accepted wherever a target is given (CLI ``--target``, documents).
TARGET_ALIASES: dict[str, dict[str, Any]] = {
    "cpu": {"kind": "llvm"},
    "llvm": {"kind": "llvm"},
    "cuda": {"kind": "cuda", "arch": "sm_80"},
}


def new_uid() -> str:
    """Return a new stable step uid (12 hex digits)."""
    return uuid.uuid4().hex[:12]


def resolve_target(spec: Any) -> dict[str, Any]:
    """Turn a target given as an alias (``cpu``, ``cuda``), a JSON string or a dict into a dict.

    Raises ``ValueError`` with a plain message for anything else.
    """
    if isinstance(spec, dict):
        if "kind" not in spec:
            raise ValueError(f"target {spec!r} has no 'kind'")
        return dict(spec)
    if isinstance(spec, str):
        text = spec.strip()
        if text.lower() in TARGET_ALIASES:
            return dict(TARGET_ALIASES[text.lower()])
        if text.startswith("{"):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"target is not valid JSON: {exc}") from None
            return resolve_target(value)
        raise ValueError(
            f"unknown target {spec!r}: use one of {sorted(TARGET_ALIASES)} or a JSON object "
            'such as \'{"kind": "llvm", "num-cores": 2}\''
        )
    raise ValueError(f"target must be a string or an object, not {type(spec).__name__}")


def target_label(target: dict[str, Any]) -> str:
    """A short human label for a target dict, e.g. ``llvm`` or ``cuda sm_80``."""
    kind = str(target.get("kind", "?"))
    extra = target.get("arch") or target.get("mcpu") or ""
    return f"{kind} {extra}".strip()


@dataclass
class Step:
    """One pipeline step: a pass id from the catalogue with its parameter values.

    ``placeholder`` is set (in memory only) when the pass id is not in the catalogue: such a step
    is shown disabled and never run, but is written back unchanged (``enabled`` included) on save.
    """

    pass_id: str
    params: dict[str, Any] = field(default_factory=dict)
    enabled: bool = True
    uid: str = field(default_factory=new_uid)
    note: str = ""
    placeholder: Optional[str] = None

    @property
    def runnable(self) -> bool:
        """True when the step is enabled and its pass is known."""
        return self.enabled and self.placeholder is None

    def to_dict(self) -> dict[str, Any]:
        """The step as it is written to a pipeline file (current format)."""
        data: dict[str, Any] = {
            "uid": self.uid,
            "pass": self.pass_id,
            "params": copy.deepcopy(self.params),
            "enabled": self.enabled,
        }
        if self.note:
            data["note"] = self.note
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "Step":
        """Build a step from its current-format dict (validated by the file reader)."""
        return cls(
            pass_id=str(data["pass"]),
            params=copy.deepcopy(dict(data.get("params") or {})),
            enabled=bool(data.get("enabled", True)),
            uid=str(data.get("uid") or new_uid()),
            note=str(data.get("note") or ""),
        )

    def clone(self, new_id: bool = False) -> "Step":
        """A deep copy; with ``new_id`` the copy gets a fresh uid (used by "duplicate")."""
        other = copy.deepcopy(self)
        if new_id:
            other.uid = new_uid()
        return other


@dataclass
class PipelineDocument:
    """A pipeline: model reference, target, ordered steps and build options.

    ``model`` is a model spec: ``builtin:<name>`` or a path (relative paths are relative to the
    pipeline file's folder, see :meth:`model_path_base`). ``path`` is where the document was loaded
    from or saved to; it is not written to the file.
    """

    model: str = "builtin:mlp"
    target: dict[str, Any] = field(default_factory=lambda: {"kind": "llvm"})
    steps: list[Step] = field(default_factory=list)
    name: str = "Untitled pipeline"
    description: str = ""
    build: dict[str, Any] = field(default_factory=dict)
    path: Optional[str] = None
    #: ``tvm.transform.PassContext`` settings (:class:`pipeline_model.pass_context.PassContextSettings`
    #: JSON: ``opt_level``, ``config``, ``disabled_pass``); empty means the defaults (opt level 3).
    pass_context: dict[str, Any] = field(default_factory=dict)

    def index_of(self, uid: str) -> int:
        """Index of the step with ``uid``; ``ValueError`` if absent."""
        for i, step in enumerate(self.steps):
            if step.uid == uid:
                return i
        raise ValueError(f"no step with uid {uid!r}")

    def step(self, uid: str) -> Step:
        """The step with ``uid``."""
        return self.steps[self.index_of(uid)]

    def model_path_base(self) -> Optional[str]:
        """Folder that relative model paths are resolved against (the file's folder), if saved."""
        import os

        return os.path.dirname(os.path.abspath(self.path)) if self.path else None

    def to_dict(self) -> dict[str, Any]:
        """The body of a pipeline file (without the format header)."""
        from pipeline_model.importers.dims import DimsError, split_spec

        try:
            model, dims = split_spec(self.model)
        except DimsError:
            model, dims = self.model, {}  # saved as is; the run names the problem
        data: dict[str, Any] = {
            "name": self.name,
            "model": model,
            "target": copy.deepcopy(self.target),
            "steps": [s.to_dict() for s in self.steps],
        }
        if dims:
            data["model_dims"] = dims
        if self.description:
            data["description"] = self.description
        if self.build:
            data["build"] = copy.deepcopy(self.build)
        if self.pass_context:
            from pipeline_model.pass_context import PassContextError

            try:
                settings = self.pass_context_settings()
                if not settings.is_default:
                    data["pass_context"] = settings.to_json()
            except PassContextError:
                data["pass_context"] = copy.deepcopy(self.pass_context)  # saved as is; the run names the problem
        return data

    def pass_context_settings(self) -> "PassContextSettings":
        """The PassContext settings (defaults when none are set); ``PassContextError`` for bad ones."""
        from pipeline_model.pass_context import PassContextSettings

        return PassContextSettings.from_json(self.pass_context or None)

    @classmethod
    def from_dict(cls, data: dict[str, Any], path: Optional[str] = None) -> "PipelineDocument":
        """Build a document from a current-format body (validated by the file reader)."""
        return cls(
            model=_with_dims(str(data.get("model") or "builtin:mlp"), data.get("model_dims")),
            target=resolve_target(data.get("target") or {"kind": "llvm"}),
            steps=[Step.from_dict(s) for s in data.get("steps") or []],
            name=str(data.get("name") or "Untitled pipeline"),
            description=str(data.get("description") or ""),
            build=copy.deepcopy(dict(data.get("build") or {})),
            path=path,
            pass_context=copy.deepcopy(dict(data.get("pass_context") or {})),
        )

    def clone(self) -> "PipelineDocument":
        """A deep copy (the engine gets copies, never the live document)."""
        return copy.deepcopy(self)


def _with_dims(model: str, dims: Any) -> str:
    """The in-memory model spec of a file's ``model`` and ``model_dims`` (pins carried in the spec, see
    :mod:`pipeline_model.importers.dims`)."""
    from pipeline_model.importers.dims import join_spec

    return join_spec(model, {str(k): int(v) for k, v in dict(dims).items()}) if dims else model
