"""User pattern file example: fuse matmul + add + relu into one composite function.

Convention (see docs/TUNING.md, "Pattern files"): the file defines ``patterns``, a non-empty list of
``tvm.relax.transform.FusionPattern`` objects or ``(name, pattern)`` / ``(name, pattern, check)``
tuples whose patterns are built with ``tvm.relax.dpl``. Use it in a ``relax.FuseOpsByPattern`` step
with ``pattern_source = "file"``; keep ``annotate_codegen = false`` (no external codegen for these
names), so the result is a composite function the default build compiles as usual.
"""

from tvm.relax.dpl import is_op, wildcard

_data = wildcard()
_weight = wildcard()
_bias = wildcard()
_matmul = is_op("relax.matmul")(_data, _weight)
_add = is_op("relax.add")(_matmul, _bias)
_relu = is_op("relax.nn.relu")(_add)

patterns = [
    ("user.matmul_add_relu", _relu),
]
