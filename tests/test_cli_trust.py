"""Consent travels with the engine client (issue 17): every CLI command that takes a model, and every build
request of ``build_api``, runs a Python model file with ``--trust`` (the client's consent) and refuses it
without, naming the file. ``main.py run --model model.py --trust --build`` once failed: the flag reached the
run but not the build requests. One shared engine for the whole module (in process, as ``main.py`` runs them).
"""

from __future__ import annotations

import argparse
import os
import shutil

import pytest

from pipeline_model import build_api
from pipeline_model.cli import compare_cmd, run_cmd
from pipeline_model.consent import HOW_TO_CONSENT, Consent, model_item
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.engine.client import ConsentRequired
from pipeline_model.fileformat import save_pipeline
from pipeline_model.models import MODELS_DIR

FAST = ["--number", "1", "--repeat", "1"]


@pytest.fixture(scope="module")
def model_file(tmp_path_factory) -> str:
    """``builtin:mlp``'s nn.Module file copied out of ``resources/``: code that needs consent."""
    folder = tmp_path_factory.mktemp("trust")
    path = str(folder / "my_mlp.py")
    shutil.copyfile(os.path.join(MODELS_DIR, "mlp.py"), path)
    return path


@pytest.fixture(scope="module")
def pipelines(model_file) -> tuple[str, str]:
    folder = os.path.dirname(model_file)
    one, two = os.path.join(folder, "legalize.json"), os.path.join(folder, "fold.json")
    save_pipeline(PipelineDocument(name="legalize", model=model_file, steps=[Step("relax.LegalizeOps")]), one)
    save_pipeline(PipelineDocument(name="fold", model=model_file,
                                   steps=[Step("relax.LegalizeOps"), Step("relax.FoldConstant")]), two)
    return one, two


def _parse(module, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    module.add_parser(parser.add_subparsers(dest="cmd"))
    return parser.parse_args(argv)


def _run(engine, argv: list[str]) -> int:
    return run_cmd.main(_parse(run_cmd, ["run", *argv]), client=engine)


def _compare(engine, argv: list[str]) -> int:
    return compare_cmd.main(_parse(compare_cmd, ["compare", *argv]), client=engine)


def test_every_cli_command_runs_a_python_model_with_trust(engine, model_file, pipelines, tmp_path, capsys):
    one, two = pipelines
    model = ["--model", model_file]
    libs = [str(tmp_path / "lib")]  # the refusals get a folder of their own (an existing model.so is refused first)
    commands = [
        ("run", lambda trust: _run(engine, [one, *model, *trust])),
        ("run --build", lambda trust: _run(engine, [one, *model, "--build", *trust])),
        ("run --profile", lambda trust: _run(engine, [one, *model, "--profile", *trust])),
        ("run --export-lib", lambda trust: _run(engine, [one, *model, "--export-lib", libs[-1], *trust])),
        ("compare", lambda trust: _compare(engine, [one, two, *model, *FAST, *trust])),
    ]
    for name, command in commands:
        capsys.readouterr()
        code = command(["--trust"])
        captured = capsys.readouterr()
        assert code == 0, f"{name} --trust: exit {code}\n{captured.err}\n{captured.out[-2000:]}"
        assert HOW_TO_CONSENT not in captured.err + captured.out, f"{name} --trust: {captured.err}"
    assert os.path.isfile(os.path.join(libs[0], "model.so")) and os.path.isfile(os.path.join(libs[0], "deploy.py"))
    assert engine.consent.trust_all is False, "a command's --trust outlived the command"
    libs.append(str(tmp_path / "lib2"))

    # Without --trust each refuses and says why (the model file, --trust): nothing ran.
    for name, command in commands:
        capsys.readouterr()
        code = command([])
        captured = capsys.readouterr()
        said = captured.err + captured.out
        assert code == (1 if name == "compare" else 2), f"{name}: exit {code}\n{said}"
        assert "my_mlp.py" in said and HOW_TO_CONSENT in said, f"{name}: {said}"


def test_build_requests_carry_the_clients_consent(engine, model_file, tmp_path):
    doc = PipelineDocument(model=model_file, steps=[Step("relax.LegalizeOps")])
    fast = build_api.BenchSettings(number=1, repeat=1)
    requests = {
        "build_run": lambda: build_api.build_run(engine, doc, check=None),
        "compare": lambda: build_api.compare(engine, build_api.module_request(doc, baseline=True),
                                             build_api.module_request(doc), bench=fast),
        "profile": lambda: build_api.profile(engine, doc, settings=build_api.ProfileSettings(warmup=0, repeat=1)),
        "export_library": lambda: build_api.export_library(engine, doc, str(tmp_path / "lib")),
    }
    for name, request in requests.items():
        with pytest.raises(ConsentRequired) as refused:
            request()
        assert [f["path"] for f in refused.value.files] == [model_file], name
    with engine.consented(Consent.everything()):
        assert requests["build_run"]().ok
        assert requests["compare"]().b.latency.median_us > 0
        assert requests["profile"]().entries
        assert os.path.isfile(requests["export_library"]().library)
    # Consent to that content (as the GUI gives it) is enough too.
    item = model_item(model_file, None)
    assert item is not None
    with engine.consented(Consent(hashes=[item.sha256])):
        assert requests["build_run"]().ok
