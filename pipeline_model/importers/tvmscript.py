"""Format ``tvmscript``: a ``.py`` file holding an ``@I.ir_module`` class, or the text of ``mod.script()``."""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.importers.base import KIND_TVMSCRIPT, ModelFormat, classify_python_file, read_text


class TVMScriptFormat(ModelFormat):
    """TVMScript source (parsed, or run when it has imports)."""

    name = "tvmscript"
    title = "TVMScript"
    suffixes = (".py",)
    source_kind = KIND_TVMSCRIPT
    priority = 20

    def identify(self, path: str) -> bool:
        text = read_text(path)
        return text is not None and classify_python_file(text) == KIND_TVMSCRIPT

    def load(self, path: str) -> tuple[Any, Optional[dict[str, Any]]]:
        from pipeline_model.importers.tvmscript_tvm import load_tvmscript

        return load_tvmscript(path), None

    def loader_source(self, source: Any) -> str:
        return (
            f"# ---- model: TVMScript file {emit.comment_safe(source.path)} ----\n"
            "import runpy as _runpy\n"
            "import tvm as _tvm\n"
            f"_model_path = {source.path!r}\n"
            "with open(_model_path, encoding='utf-8') as _fh:\n"
            "    _model_text = _fh.read()\n"
            "if any(line.startswith(('import ', 'from ')) for line in _model_text.splitlines()):\n"
            "    _ns = _runpy.run_path(_model_path)\n"
            "    _mods = [v for k, v in _ns.items() if isinstance(v, _tvm.IRModule)]\n"
            "    mod = _ns['mod'] if isinstance(_ns.get('mod'), _tvm.IRModule) else _mods[-1]\n"
            "else:\n"
            "    mod = _tvm.script.from_source(_model_text)\n"
            "params = None\n"
        )


FORMAT = TVMScriptFormat()
