"""The pattern tables ``relax.FuseOpsByPattern`` knows (TVM-free data of the ``fuse_by_pattern`` kind, shared
by its recipe in ``__init__.py`` and its engine half :mod:`.patterns_tvm`)."""

#: Pattern-table prefix -> module whose import registers the table.
PATTERN_TABLE_MODULES: dict[str, str] = {
    "cublas": "tvm.relax.backend.cuda.cublas",
    "cudnn": "tvm.relax.backend.cuda.cudnn",
    "cutlass": "tvm.relax.backend.cuda.cutlass",
    "hipblas": "tvm.relax.backend.rocm.hipblas",
    "coreml": "tvm.relax.backend.metal.coreml",
    "tensorrt": "tvm.relax.backend.contrib.tensorrt",
    "nnapi": "tvm.relax.backend.contrib.nnapi",
    "openclml": "tvm.relax.backend.adreno.clml",
}
