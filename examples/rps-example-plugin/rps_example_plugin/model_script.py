"""The model builder the engine runs for a ``.rpsmlp`` file and exported scripts contain (TVM imported inside)."""


def build_mlp(layers, seed):  # type: ignore[no-untyped-def]
    """A Relax ``main(x)``: dense layers of the widths ``layers`` (ReLU between them), weights drawn from ``seed``."""
    import numpy as np
    from tvm import relax

    rng = np.random.default_rng(seed)
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, layers[0]), "float32"))
    with bb.function("main", [x]):
        with bb.dataflow():
            h = x
            for i, (width_in, width_out) in enumerate(zip(layers, layers[1:])):
                weight = (rng.standard_normal((width_in, width_out)) / np.sqrt(width_in)).astype("float32")
                bias = (rng.standard_normal((width_out,)) * 0.1).astype("float32")
                h = bb.emit(relax.op.add(relax.op.matmul(h, relax.const(weight)), relax.const(bias)))
                if i < len(layers) - 2:
                    h = bb.emit(relax.op.nn.relu(h))
            out = bb.emit_output(h)
        bb.emit_func_output(out)
    return bb.get()
