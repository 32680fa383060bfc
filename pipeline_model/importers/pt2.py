"""Format ``pt2``: a ``torch.export.save`` archive (``from_exported_program``, weights kept as parameters)."""

from __future__ import annotations

from typing import Any

from pipeline_model.importers._frontend_format import FrontendFormat


class PT2Format(FrontendFormat):
    """torch.export archive."""

    name = "pt2"
    title = "torch.export"
    suffixes = (".pt2",)
    priority = 40

    def load_file(self, path: str) -> Any:
        from pipeline_model.importers import pt2_tvm

        return pt2_tvm.load_file(path)


FORMAT = PT2Format()
