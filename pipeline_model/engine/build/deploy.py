"""The ``deploy.py`` that ``export_library`` writes beside ``model.so``, ``weights.npz`` and ``model.json``: it
loads the library and runs the entry function on an ``.npz`` of inputs or seeded random ones (first its
``<function>_transform_params`` on the weights, when ``relax.LiftTransformParams`` made one)."""

from __future__ import annotations

from pipeline_model import runtime_threads, scriptlib

#: ``deploy.py`` (``str.format`` with ``library``, ``target_label``, ``sys_path``, ``runtime_threads`` and
#: ``files_helpers``; see :func:`deploy_script`).
DEPLOY_SCRIPT = '''\
"""Run the exported model: {library} (built by Relax Pipeline Studio for target {target_label}).

Usage: python deploy.py [inputs.npz]      (needs apache-tvm; arrays in the .npz named like the inputs)
Without an inputs file it runs on seeded random inputs.
"""
import os
import sys

{sys_path}


if __name__ == "__main__":
    drop_script_folders(__file__)  # a numpy.py or secrets.py planted next to this script is not imported

import io
import json

{runtime_threads}

import numpy as np
import tvm
from tvm import relax

{files_helpers}

HERE = os.path.dirname(os.path.abspath(__file__))
META = json.load(open(os.path.join(HERE, "model.json")))


def main() -> None:
    lib = tvm.runtime.load_module(os.path.join(HERE, META["library"]))
    dev = getattr(tvm, META["device"])(0)
    vm = relax.VirtualMachine(lib, dev)
    rng = np.random.default_rng(0)
    if len(sys.argv) > 1:
        data = np.load(sys.argv[1])
        inputs = [data[a["name"]] for a in META["inputs"]]
    else:
        inputs = [rng.standard_normal(a["shape"]).astype(a["dtype"]) for a in META["inputs"]]
    weights = np.load(os.path.join(HERE, "weights.npz"))
    args = [tvm.runtime.tensor(np.asarray(x), dev) for x in inputs]
    weight_args = [tvm.runtime.tensor(weights[f"w{{i}}"], dev) for i in range(len(META["weights"]))]
    try:  # weights pre-packed by relax.LiftTransformParams: transform them once
        transform = vm[META["function"] + "_transform_params"]
    except Exception:  # noqa: BLE001 - no such function: the weights go in as they are
        transform = None
    if transform is not None:
        packed = transform(weight_args)
        weight_args = [packed] if hasattr(packed, "numpy") else list(packed)
    out = vm[META["function"]](*args, *weight_args)
    outs = [out] if hasattr(out, "numpy") else list(out)
    for i, o in enumerate(outs):
        arr = o.numpy()
        print(f"output {{i}}: shape={{list(arr.shape)}} dtype={{arr.dtype}} mean={{float(arr.mean()):.6g}}")
    buf = io.BytesIO()
    np.savez(buf, *[o.numpy() for o in outs])
    try:  # never through a symlink or into a device: a temporary file of its own, renamed over the name
        write_output(os.path.join(HERE, "outputs.npz"), buf.getvalue())
    except ValueError as exc:
        sys.exit(str(exc))


if __name__ == "__main__":
    main()
'''


def deploy_script(library: str, target_label: str) -> str:
    """The ``deploy.py`` for ``library`` (a file name beside it) built for ``target_label``; it writes its
    ``outputs.npz`` with :mod:`pipeline_model.scriptlib.files` (whose code it holds) and runs TVM's thread pool
    as the engine does (:func:`pipeline_model.runtime_threads.script_lines`, before ``import tvm``)."""
    return DEPLOY_SCRIPT.format(library=library, target_label=target_label,
                                sys_path=scriptlib.module_source("sys_path", imports=False).rstrip("\n"),
                                runtime_threads="\n".join(runtime_threads.script_lines()),
                                files_helpers=scriptlib.script_source(("files",)).rstrip("\n"))
