"""The framework reference: the original ONNX / PyTorch file run in its own runtime, and the two numerical
checks of ``build_run`` (against the model as loaded built by ``tvm.compile``'s default pipeline on the CPU,
and against the framework)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from pipeline_model.engine.build.errors import error_text
from pipeline_model.engine.build.inputs import reference_entry
from pipeline_model.engine.build.measure import build_and_measure
from pipeline_model.engine.build.requests import progress
from pipeline_model.scriptlib.functions import BuildError
from pipeline_model.scriptlib.outputs import compare_outputs
from pipeline_model.scriptlib.quant_reference import check_reference

if TYPE_CHECKING:  # the worker imports the handlers; only type checkers import it here
    from pipeline_model.engine.context import WorkerContext

#: What the TVM check compares with.
TVM_REFERENCE = "model as loaded, tvm.compile default pipeline, llvm"
#: Progress label of the reference build.
REFERENCE_LABEL = "the reference (model as loaded, default pipeline, CPU)"


def framework_kind(loaded: Any) -> Optional[str]:
    """``"onnx"``, ``"pt2"`` or ``"torch_py"`` when the model was imported from such a file, else None."""
    source = str(getattr(loaded, "source", "") or "")
    lower = source.lower()
    if not os.path.isfile(source):
        return None
    if lower.endswith(".onnx"):
        return "onnx"
    if lower.endswith(".pt2"):
        return "pt2"
    if lower.endswith(".py"):
        with open(source, encoding="utf-8", errors="replace") as fh:
            return "torch_py" if "torch" in fh.read() else None
    return None


def _torch_outputs(value: Any) -> list[np.ndarray]:
    import torch

    leaves = torch.utils._pytree.tree_leaves(value)
    return [np.asarray(t.detach().cpu().numpy()) if isinstance(t, torch.Tensor) else np.asarray(t) for t in leaves]


def _framework_module(loaded: Any, kind: str, path: str) -> Any:
    """The PyTorch module of a ``.pt2`` archive or a torch ``.py`` file, from the same content the model was
    loaded (and consent checked) from: the file is read once here and must hash to ``loaded.content_sha256``,
    else the check stops with "the file changed since it was loaded"."""
    import io

    import torch

    from pipeline_model import safe_files
    from pipeline_model.importers import content

    data = safe_files.read_bytes(path, "model file", content.MAX_MODEL_BYTES)
    expected = str(getattr(loaded, "content_sha256", "") or "")
    if expected and content.sha256(data) != expected:
        raise BuildError(f"{path}: the file changed since the model was loaded (its content was checked then); "
                         "run again to load and check the new content")
    if kind == "pt2":
        return torch.export.load(io.BytesIO(data)).module()
    return content.exec_python(path, data.decode("utf-8"))["model"]


def framework_outputs(loaded: Any, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], str]:
    """Run the original model file in its own framework on ``inputs``; ``(outputs, reference label)``.

    ONNX files run in ONNX Runtime (CPU provider), ``.pt2`` archives through ``torch.export.load(...).module()``,
    torch ``.py`` files (already run once to import them) through their ``model``. ``BuildError`` says what is
    missing (the runtime, the model's own weights) when it cannot be done.
    """
    kind = framework_kind(loaded)
    path = str(getattr(loaded, "source", ""))
    if kind is None:
        raise BuildError("the model did not come from an ONNX or PyTorch file: there is no framework to check against")
    if not loaded.params:
        raise BuildError(f"{path}: the model carries no weights of its own, so its framework output would use "
                         "other weights than the build")
    if kind == "onnx":
        try:
            import onnxruntime as ort
        except ImportError:
            raise BuildError("checking against ONNX needs onnxruntime (pip install onnxruntime)") from None
        try:
            options = ort.SessionOptions()
            options.log_severity_level = 3
            sess = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
            names = [i.name for i in sess.get_inputs()]
            if len(names) != len(inputs):
                raise BuildError(f"{path}: ONNX Runtime sees {len(names)} inputs, the build feeds {len(inputs)}")
            outs = sess.run(None, dict(zip(names, inputs)))
        except BuildError:
            raise
        except Exception as exc:  # noqa: BLE001 - onnxruntime raises its own exception types
            raise BuildError(f"{path}: ONNX Runtime failed: {error_text(exc)}") from None
        return [np.asarray(o) for o in outs], f"onnxruntime {ort.__version__} on {os.path.basename(path)}"
    try:
        import torch
    except ImportError:
        raise BuildError("checking against PyTorch needs torch (pip install -r requirements-torch.txt)") from None
    try:
        module = _framework_module(loaded, kind, path)
        tensors = [torch.from_numpy(np.array(x)) for x in inputs]
        with torch.no_grad():
            value = module(*tensors)
    except Exception as exc:  # noqa: BLE001 - anything the user's model raises
        raise BuildError(f"{path}: running the model in PyTorch failed: {error_text(exc)}") from None
    return _torch_outputs(value), f"PyTorch {torch.__version__} eager on {os.path.basename(path)}"


def reference_outputs(loaded: Any, func_name: str, ref_arrays: list[np.ndarray],
                      ctx: WorkerContext) -> tuple[list[np.ndarray], str]:
    """``(outputs, label)``: the outputs of the model as loaded (the function ``func_name`` stands for; a quantized
    model with each op in float64, :func:`~pipeline_model.scriptlib.quant_reference.check_reference`), built with
    the stock pipeline on the CPU and run on ``ref_arrays``; ``label`` names that reference."""
    mod, label = check_reference(loaded.mod)
    ref = build_and_measure(mod, {"kind": "llvm"}, reference_entry(loaded, func_name), ref_arrays, None, ctx,
                            REFERENCE_LABEL, baseline=True)
    return list(ref["outputs"]), label or TVM_REFERENCE


def reference_check(loaded: Any, func_name: str, ref_arrays: list[np.ndarray], outputs: list[np.ndarray],
                    chk: dict[str, Any], ctx: WorkerContext, failed: Optional[str] = None,
                    fallback: Optional[Any] = None) -> dict[str, Any]:
    """The check of ``outputs`` against the model as loaded, built with the stock pipeline on the CPU.

    The reference is built under the progress phase ``"reference"`` (the client tells a crash there from the
    module's own: ``pipeline_model.build_api.build_run`` sends the request again with ``failed``, the crash).
    When it fails — ``failed``, or a build or run error here — the module's result stands and the check falls
    back to ``fallback()`` (the framework check, when the model came from ONNX / PyTorch) or says it could not be
    done; either names the reference's failure (``reference_failure``)."""
    if failed is None:
        progress(ctx, "reference", f"building and running {REFERENCE_LABEL}")
        try:
            ref, label = reference_outputs(loaded, func_name, ref_arrays, ctx)
        except BuildError as exc:
            failed = f"{TVM_REFERENCE}: {str(exc).splitlines()[0] if str(exc) else 'failed'}"
        else:
            progress(ctx, "checking", "comparing outputs")
            return tvm_check(outputs, ref, chk, label)
    if fallback is not None:
        return {**fallback(), "reference_failure": failed}
    return {"passed": False, "rtol": chk["rtol"], "atol": chk["atol"], "scale": chk["scale"], "max_abs": None,
            "max_rel": None, "max_ref": None, "max_abs_over_ref": None, "warnings": [], "outputs": [],
            "error": "the reference failed, so the check could not be done", "reference": TVM_REFERENCE,
            "reference_failure": failed}


def tvm_check(outputs: list[np.ndarray], ref: list[np.ndarray], chk: dict[str, Any],
              label: str = TVM_REFERENCE) -> dict[str, Any]:
    """:func:`~pipeline_model.scriptlib.outputs.compare_outputs` with the request's settings, naming the reference
    (``label``: :data:`TVM_REFERENCE`, or :data:`~pipeline_model.scriptlib.quant_reference.QUANT_REFERENCE`)."""
    return {**compare_outputs(outputs, ref, chk["rtol"], chk["atol"], chk["scale"]), "reference": label}


def framework_check(loaded: Any, arrays: list[np.ndarray], described: list[dict[str, Any]],
                    outputs: list[np.ndarray], chk: dict[str, Any], ctx: WorkerContext) -> dict[str, Any]:
    """The check of ``outputs`` against the original model file run in its framework (its error as a failed check)."""
    n_in = len([d for d in described if not d.get("weight")])
    progress(ctx, "checking", "running the original model in its framework")
    try:
        ref, label = framework_outputs(loaded, arrays[:n_in])
    except BuildError as exc:
        return {"passed": False, "rtol": chk["rtol"], "atol": chk["atol"], "scale": chk["scale"], "max_abs": None,
                "max_rel": None, "max_ref": None, "max_abs_over_ref": None, "warnings": [], "outputs": [],
                "error": str(exc), "reference": "framework"}
    return {**compare_outputs(outputs, ref, chk["rtol"], chk["atol"], chk["scale"]), "reference": label}
