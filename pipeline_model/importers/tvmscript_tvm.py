"""Format ``tvmscript``, engine side: parse a TVMScript file (imports TVM)."""

from __future__ import annotations

import re
from typing import Any

from pipeline_model.importers.base import ModelLoadError
from pipeline_model.importers.pyfile import has_real_imports, run_python_file


def load_tvmscript(path: str) -> Any:
    """Parse a TVMScript file: ``mod.script()`` text or a Python file with an ``@I.ir_module`` class."""
    import tvm

    from pipeline_model.importers import content

    try:
        text = content.read_text(path, "TVMScript file")
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelLoadError(f"cannot read TVMScript file {path}: {exc}") from None
    if has_real_imports(text):
        namespace = run_python_file(path, "TVMScript file")
        mods = [v for v in namespace.values() if isinstance(v, tvm.IRModule)]
        mod = namespace.get("mod")
        if isinstance(mod, tvm.IRModule):
            return mod
        if not mods:
            raise ModelLoadError(f"{path}: no IRModule found (expected an @I.ir_module class)")
        return mods[-1]
    try:
        mod = tvm.script.from_source(text)
    except SyntaxError as exc:
        raise ModelLoadError(f"{path}:{exc.lineno}: TVMScript syntax error: {exc.msg}") from None
    except Exception as exc:  # noqa: BLE001 - parser diagnostics come in several types
        message = str(exc).replace("<str>", path)
        match = re.search(re.escape(path) + r":(\d+):", message)
        where = f"{path}:{match.group(1)}" if match else path
        raise ModelLoadError(f"{where}: TVMScript error: {message.strip()}") from None
    if not isinstance(mod, tvm.IRModule):
        mod = tvm.IRModule({"main": mod})
    return mod
