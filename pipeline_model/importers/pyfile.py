"""Running a model's ``.py`` file (TVMScript with imports, nn.Module files) with errors that name the file
and the line. TVM-free: shared by the engine halves :mod:`.tvmscript_tvm` and :mod:`.nn_module_tvm`."""

from __future__ import annotations

import re
import traceback
from typing import Any, Optional

from pipeline_model.importers.base import ModelLoadError


def has_real_imports(text: str) -> bool:
    """True when the file has import statements at top level (it is Python, not bare script text)."""
    return any(line.startswith(("import ", "from ")) for line in text.splitlines())


def user_frame_line(path: str, exc: BaseException) -> str:
    """`` (line N)`` of the deepest traceback frame inside ``path``, or empty."""
    line = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == path:
            line = f" (line {frame.lineno})"
    return line


def describe(exc: BaseException) -> str:
    """One readable cause from an exception (TVM diagnostics keep their rendered text)."""
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def run_python_file(path: str, what: str, text: Optional[str] = None) -> dict[str, Any]:
    """Execute a model ``.py`` file (or ``text`` in its name: a bundled file made another size) and return its
    globals; errors name the file and line."""
    from pipeline_model.importers import content

    try:
        if text is None:
            text = content.read_text(path, what)  # the bytes consent was checked on, when the engine pinned them
        compile(text, path, "exec")
    except SyntaxError as exc:
        raise ModelLoadError(f"{path}:{exc.lineno}: syntax error in {what}: {exc.msg}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ModelLoadError(f"cannot read {what} {path}: {exc}") from None
    try:
        return content.exec_python(path, text)
    except SystemExit as exc:
        raise ModelLoadError(f"{path}: {what} called exit({exc.code})") from None
    except Exception as exc:  # noqa: BLE001 - user code: report any failure plainly
        cause = describe(exc)
        match = re.search(re.escape(path) + r":(\d+):", cause)
        where = f"{path}:{match.group(1)}" if match else f"{path}{user_frame_line(path, exc)}"
        raise ModelLoadError(f"{where}: {what} failed: {cause}") from None
