"""Builds the ``tvm.transform.PassContext`` of a pipeline's settings (engine side, imports TVM).

:func:`check_settings` names a config key TVM does not know (``PassContext.list_configs()``) before any
step runs; :func:`make_pass_context` builds the context the runner applies each step in.
"""

from __future__ import annotations

import difflib
from typing import Any, Optional, Sequence

import tvm

from pipeline_model.pass_context import PassContextError, PassContextSettings


def known_configs() -> dict[str, str]:
    """``{config key: type}`` that this TVM build registered."""
    import json

    out = {}
    for key, value in tvm.transform.PassContext.list_configs().items():
        try:
            out[str(key)] = str(json.loads(str(value)).get("type", ""))
        except (ValueError, AttributeError):
            out[str(key)] = str(value)
    return out


def check_settings(settings: PassContextSettings, where: str = "pass_context") -> Optional[str]:
    """A plain message naming the first bad setting (unknown config key, wrong value type), else ``None``."""
    known = known_configs()
    for key, value in settings.config.items():
        if key not in known:
            close = difflib.get_close_matches(key, list(known), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            return f"{where}.config: unknown PassContext config key {key!r}{hint} (see `main.py env --json`, pass_configs)"
        kind = known[key]
        if kind == "bool" and not isinstance(value, bool):
            return f"{where}.config[{key!r}]: must be true or false, not {value!r}"
        if kind in ("int", "ir.IntImm") and (isinstance(value, bool) or not isinstance(value, int)):
            return f"{where}.config[{key!r}]: must be an integer, not {value!r}"
    return None


def make_pass_context(data: Any, instruments: Sequence[Any] = ()) -> "tvm.transform.PassContext":
    """The PassContext for a ``pass_context`` JSON object (``None``: the defaults) with ``instruments``.

    Raises :class:`~pipeline_model.pass_context.PassContextError` naming the bad setting.
    """
    settings = PassContextSettings.from_json(data)
    problem = check_settings(settings)
    if problem:
        raise PassContextError(problem)
    return tvm.transform.PassContext(opt_level=settings.opt_level, config=dict(settings.config) or None,
                                     disabled_pass=list(settings.disabled_pass) or None,
                                     instruments=list(instruments))


def prepare(data: Any, pipeline_path: Optional[str] = None) -> tuple[str, Optional[str]]:
    """``(cache key fingerprint, None)`` for good settings, ``("", message)`` for bad ones; the message
    names the pipeline file (when known) and the setting."""
    where = f"{pipeline_path}: pass_context" if pipeline_path else "pass_context"
    try:
        settings = PassContextSettings.from_json(data, where=where)
    except PassContextError as exc:
        return "", str(exc)
    problem = check_settings(settings, where=where)
    if problem:
        return "", problem
    return settings.fingerprint(), None
