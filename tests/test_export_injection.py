"""Exported scripts are injection-proof: no document field (names, paths, targets, parameters, file
names with newlines and quotes) reaches the code or a comment line unescaped."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.export import ExportError, export_script
from pipeline_model.models import MODELS_DIR

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PIECES = list("\n\r\t\x0b\x0c\x1c\u2028\u0085#'\"\\;(){}: aZ_0é") + ["'''", '"""', "\nimport os\n", "\\\n"]
HOSTILE = st.lists(st.sampled_from(PIECES), max_size=20).map("".join)


class _Blank(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.Constant:  # noqa: N802 - ast API
        return ast.copy_location(ast.Constant(value=None), node)


def _shape(source: str) -> str:
    """The script's syntax tree with every literal blanked: what is code, not data."""
    return ast.dump(_Blank().visit(ast.parse(source)))


def _model_file(folder: str, name: str) -> str:
    """A copy of the bundled MLP (an nn.Module file) under a hostile file name."""
    safe = name.replace("/", "_").replace("\0", "_")[:60] or "m"
    path = os.path.join(folder, safe + ".py")
    shutil.copy(os.path.join(MODELS_DIR, "mlp.py"), path)
    return path


def _doc(folder: str, text: str) -> PipelineDocument:
    return PipelineDocument(
        model=_model_file(folder, text),
        name=text,
        description=text,
        target={"kind": "llvm", "mcpu": text, "tag": [text, {"k": text}]},
        build={"work_dir": text},
        steps=[
            Step("relax.LegalizeOps"),
            Step("relax.MetaScheduleTuneTIR", {"work_dir": text, "max_trials_global": 1}),
            Step("relax.FuseOpsByPattern", {"pattern_source": "file", "pattern_file": text}),
            Step("relax.FuseOps", {"fuse_opt_level": 2}),
        ],
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=HOSTILE)
def test_every_field_stays_data(tmp_path_factory, text):
    folder = str(tmp_path_factory.mktemp("exp"))
    try:
        source = export_script(_doc(folder, text))
    except ExportError:
        return  # a clean refusal is fine
    # The code is the same as for a plain name: every field ended up inside a literal (or a comment
    # that stayed one line), never as code.
    name = "plain" if text.strip() else text
    if name not in _PLAIN_SHAPES:  # the same for every example: the shape blanks the folder's literal paths
        _PLAIN_SHAPES[name] = _shape(export_script(_doc(str(tmp_path_factory.mktemp("plain")), name)))
    assert _shape(source) == _PLAIN_SHAPES[name]


#: The shape of the script of a document whose fields are all the key (made once per name).
_PLAIN_SHAPES: dict[str, str] = {}


PAYLOADS = [
    "x\nopen({marker!r}, 'w').write('pwned')\n#",
    "x'); open({marker!r}, 'w').write('pwned'); ('",
    'x"""\nopen({marker!r}, "w").write("pwned")\n"""',
]


@pytest.mark.parametrize("payload", PAYLOADS)
def test_hostile_exported_script_does_not_run_the_payload(tmp_path, payload):
    marker = str(tmp_path / "MARKER")
    text = payload.format(marker=marker)
    doc = _doc(str(tmp_path), text)
    doc.steps = [Step("relax.LegalizeOps")]
    doc.target = {"kind": "llvm"}  # TVM itself must accept it for the script to run to the end
    source = export_script(doc)
    script = tmp_path / "script.py"
    script.write_text(source, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, str(script), "--quiet"], cwd=str(tmp_path), env=env,
                          capture_output=True, text=True, timeout=300)
    assert not os.path.exists(marker), "the payload in a field ran"
    assert proc.returncode == 0, proc.stderr[-2000:]
