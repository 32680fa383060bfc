"""The pipeline's PassContext settings (TVM-free): ``opt_level``, ``config`` entries and ``disabled_pass``.

Every step of a pipeline runs inside ``tvm.transform.PassContext(opt_level=..., config=...,
disabled_pass=...)``; these settings are the ``pass_context`` field of a pipeline file (format version
2, see :mod:`pipeline_model.fileformat`), are part of the engine's step cache key (changing them re-runs
the steps) and are written into exported scripts. ``config`` keys must be ones TVM registered
(``tvm.transform.PassContext.list_configs()``, checked by the engine: :mod:`pipeline_model.engine.pass_context_tvm`),
e.g. ``{"relax.FuseOps.max_depth": 1}``, which changes FuseOps' output. Values are JSON-plain.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

#: Default opt level (what the engine always used before PassContext settings existed).
DEFAULT_OPT_LEVEL = 3
#: Valid opt levels.
OPT_LEVELS = range(0, 5)


class PassContextError(ValueError):
    """Bad PassContext settings; the message names the setting (``config['x.y']``, ``opt_level``)."""


@dataclass
class PassContextSettings:
    """``opt_level`` (0..4), ``config`` (TVM config key -> JSON value), ``disabled_pass`` (pass names)."""

    opt_level: int = DEFAULT_OPT_LEVEL
    config: dict[str, Any] = field(default_factory=dict)
    disabled_pass: list[str] = field(default_factory=list)

    @property
    def is_default(self) -> bool:
        """True for the engine's historical default (opt level 3, no config, nothing disabled)."""
        return self.opt_level == DEFAULT_OPT_LEVEL and not self.config and not self.disabled_pass

    def to_json(self) -> dict[str, Any]:
        """The ``pass_context`` object of a pipeline file (all three keys)."""
        return {"opt_level": self.opt_level, "config": copy.deepcopy(self.config),
                "disabled_pass": list(self.disabled_pass)}

    @classmethod
    def from_json(cls, data: Any, where: str = "pass_context") -> "PassContextSettings":
        """Settings from a ``pass_context`` object (missing keys get defaults); :class:`PassContextError`
        naming ``where`` and the key for a bad value."""
        if data is None:
            return cls()
        if not isinstance(data, dict):
            raise PassContextError(f"{where}: must be an object, not {type(data).__name__}")
        unknown = sorted(set(data) - {"opt_level", "config", "disabled_pass"})
        if unknown:
            raise PassContextError(f"{where}: unknown key {unknown[0]!r} (known: opt_level, config, disabled_pass)")
        opt = data.get("opt_level", DEFAULT_OPT_LEVEL)
        if isinstance(opt, bool) or not isinstance(opt, int) or opt not in OPT_LEVELS:
            raise PassContextError(f"{where}.opt_level: must be an integer 0..4, not {opt!r}")
        config = data.get("config", {})
        if not isinstance(config, dict):
            raise PassContextError(f"{where}.config: must be an object of TVM config keys")
        for key, value in config.items():
            if not key or not isinstance(key, str):
                raise PassContextError(f"{where}.config: keys must be non-empty strings")
            try:
                json.dumps(value, allow_nan=False)
            except (TypeError, ValueError):
                raise PassContextError(f"{where}.config[{key!r}]: value is not plain JSON") from None
            if value is None:
                raise PassContextError(f"{where}.config[{key!r}]: value must not be null")
        disabled = data.get("disabled_pass", [])
        if not isinstance(disabled, list) or not all(isinstance(p, str) and p for p in disabled):
            raise PassContextError(f"{where}.disabled_pass: must be a list of pass names")
        return cls(opt_level=opt, config=copy.deepcopy(config), disabled_pass=list(disabled))

    def fingerprint(self) -> str:
        """A canonical text of the settings (empty for the default), for the engine's step cache key."""
        if self.is_default:
            return ""
        return "pass_context=" + json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"))

    def describe(self) -> str:
        """One human line, e.g. ``opt_level 3, relax.FuseOps.max_depth=1, disabled: FoldConstant``."""
        parts = [f"opt_level {self.opt_level}"]
        parts += [f"{k}={json.dumps(v)}" for k, v in sorted(self.config.items())]
        if self.disabled_pass:
            parts.append("disabled: " + ", ".join(self.disabled_pass))
        return ", ".join(parts)
