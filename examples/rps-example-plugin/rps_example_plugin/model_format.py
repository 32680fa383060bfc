"""Model format ``example_mlp``: a ``.rpsmlp`` file, the JSON description of an MLP with seeded random weights.

``{"example_mlp": {"layers": [32, 64, 10], "seed": 0}}``: the input width, hidden widths, output width; the
weights are constants drawn from ``seed``. The file is data (read, never executed); the engine builds the model
with :func:`.model_script.build_mlp`, which exported scripts contain too. TVM-free at import.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from pipeline_model import emit
from pipeline_model.importers import ModelFormat, ModelLoadError
from pipeline_model.importers.base import read_text

SCRIPT_MODULE = "rps_example_plugin.model_script"


def read_spec(path: str) -> tuple[list[int], int]:
    """``(layers, seed)`` of the file at ``path``; :class:`ModelLoadError` naming the file and what is wrong."""
    text = read_text(path)
    try:
        data = json.loads(text or "")["example_mlp"]
        layers, seed = [int(n) for n in data["layers"]], int(data.get("seed", 0))
    except (ValueError, KeyError, TypeError) as exc:
        raise ModelLoadError(f"{path}: not an example MLP file ({type(exc).__name__}: {exc})") from None
    if len(layers) < 2 or not all(0 < n <= 4096 for n in layers):
        raise ModelLoadError(f"{path}: layers must be 2 or more widths between 1 and 4096")
    return layers, seed


class ExampleMLPFormat(ModelFormat):
    """``.rpsmlp``: an MLP described in JSON."""

    name = "example_mlp"
    title = "Example MLP (JSON)"
    suffixes = (".rpsmlp",)
    priority = 40

    def identify(self, path: str) -> bool:
        text = read_text(path)
        return text is not None and '"example_mlp"' in text

    def load(self, path: str) -> tuple[Any, Optional[dict[str, Any]]]:
        from rps_example_plugin.model_script import build_mlp

        layers, seed = read_spec(path)
        return build_mlp(layers, seed), None

    def loader_source(self, source: Any) -> str:
        layers, seed = read_spec(source.path)
        return (f"# ---- model: example MLP {emit.comment_safe(source.path)} (rps-example-plugin) ----\n"
                + emit.script_source(SCRIPT_MODULE, "build_mlp")
                + f"mod = build_mlp({layers!r}, {seed!r})\nparams = None\n")


FORMAT = ExampleMLPFormat()
