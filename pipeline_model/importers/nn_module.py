"""Format ``nn_module``: a ``.py`` file defining ``model`` (a ``tvm.relax.frontend.nn.Module``) and ``spec``
(the ``export_tvm`` spec)."""

from __future__ import annotations

from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.importers.base import KIND_NN_MODULE, ModelFormat, classify_python_file, read_text


class NNModuleFormat(ModelFormat):
    """A Relax nn.Module model file."""

    name = "nn_module"
    title = "Relax nn.Module"
    suffixes = (".py",)
    source_kind = KIND_NN_MODULE
    priority = 30

    def identify(self, path: str) -> bool:
        text = read_text(path)
        return text is not None and classify_python_file(text) == KIND_NN_MODULE

    def load(self, path: str) -> tuple[Any, Optional[dict[str, Any]]]:
        from pipeline_model.importers.nn_module_tvm import load_nn_module

        return load_nn_module(path), None

    def loader_source(self, source: Any) -> str:
        return (
            f"# ---- model: nn.Module file {emit.comment_safe(source.path)} ----\n"
            "import runpy as _runpy\n"
            f"_ns = _runpy.run_path({source.path!r})\n"
            "mod, _param_spec = _ns['model'].export_tvm(spec=_ns['spec'])\n"
            "params = None\n"
        )


FORMAT = NNModuleFormat()
