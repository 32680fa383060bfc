"""An example plug-in for Relax Pipeline Studio: a pass kind (:mod:`.passkind`), a DLight rule (:mod:`.rules_tvm`)
and a model format (:mod:`.model_format`), declared as entry points in ``pyproject.toml``.

Like the app's own, the modules the app imports in its GUI process (the pass kind, the model format) import no
TVM at their top; the DLight rule, whose class needs TVM, is imported in the engine only.
"""

__version__ = "0.1.0"
