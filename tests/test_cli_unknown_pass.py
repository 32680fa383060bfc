"""An enabled step with an unknown pass id is an error in ``run`` and ``export`` (exit 2, naming the step and
the id); disabled, it is skipped; either way it stays in the file when re-saved."""

from __future__ import annotations

import argparse

from pipeline_model.catalogue import Catalogue
from pipeline_model.cli import export_cmd, run_cmd
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import load_pipeline, save_pipeline


def _file(tmp_path, enabled: bool = True) -> str:
    path = str(tmp_path / "typo.json")
    steps = [Step("relax.LegalizeOps"), Step("relax.FuseOp", enabled=enabled), Step("relax.FuseTIR")]
    save_pipeline(PipelineDocument(steps=steps, name="typo"), path)
    return path


def _run(argv, engine) -> int:
    parser = argparse.ArgumentParser()
    run_cmd.add_parser(parser.add_subparsers(dest="command"))
    return run_cmd.main(parser.parse_args(["run", *argv]), client=engine)


def _export(argv, monkeypatch, engine) -> int:
    from pipeline_model.cli import passes_cmd

    monkeypatch.setattr(passes_cmd, "fetch_catalogue", lambda: Catalogue.from_json(engine.catalogue()))
    parser = argparse.ArgumentParser()
    export_cmd.add_parser(parser.add_subparsers(dest="command"))
    return export_cmd.main(parser.parse_args(["export", *argv]))


def test_run_enabled_unknown_id_exit_2(engine, tmp_path, capsys):
    path = _file(tmp_path)
    assert _run([path], engine) == 2
    captured = capsys.readouterr()
    assert "step 2: unknown pass id 'relax.FuseOp'" in captured.err and path in captured.err
    assert "changed" not in captured.out  # nothing ran


def test_run_unknown_id_json(engine, tmp_path, capsys):
    import json

    assert _run([_file(tmp_path), "--json"], engine) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] is False and data["exit_code"] == 2 and "'relax.FuseOp'" in data["error"]


def test_run_until_before_unknown_step_is_fine(engine, tmp_path, capsys):
    assert _run([_file(tmp_path), "--until", "1"], engine) == 0


def test_run_disabled_unknown_id_runs_the_rest(engine, tmp_path, capsys):
    assert _run([_file(tmp_path, enabled=False)], engine) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln[:3].strip().isdigit()]
    assert "skipped" in lines[1] and "relax.FuseOp" in lines[1] and "changed" in lines[0]


def test_export_enabled_unknown_id_exit_2(engine, tmp_path, capsys, monkeypatch):
    path = _file(tmp_path)
    out = tmp_path / "x.py"
    assert _export([path, "-o", str(out)], monkeypatch, engine) == 2
    assert "step 2: unknown pass id 'relax.FuseOp'" in capsys.readouterr().err and not out.exists()


def test_export_disabled_unknown_id_is_left_out(engine, tmp_path, capsys, monkeypatch):
    out = tmp_path / "x.py"
    assert _export([_file(tmp_path, enabled=False), "-o", str(out)], monkeypatch, engine) == 0
    source = out.read_text()
    assert "relax.FuseOp(" not in source and "relax.transform.FuseTIR" in source


def test_placeholder_survives_resaving(engine, tmp_path):
    known = set(Catalogue.from_json(engine.catalogue()).ids())
    doc = load_pipeline(_file(tmp_path), known_pass_ids=known)
    assert doc.steps[1].placeholder and doc.steps[1].enabled
    save_pipeline(doc, tmp_path / "again.json")
    again = load_pipeline(tmp_path / "again.json")
    assert [s.pass_id for s in again.steps] == ["relax.LegalizeOps", "relax.FuseOp", "relax.FuseTIR"]
    assert again.steps[1].enabled and again.steps[1].uid == doc.steps[1].uid


def test_omitted_params_have_reasons_and_are_listed(engine):
    from pipeline_model.cli.passes_cmd import format_table

    cat = Catalogue.from_json(engine.catalogue())
    omitted = {spec.id: spec.omitted_params for spec in (cat.get(i) for i in cat.ids()) if spec.omitted_params}
    assert "customize_legalize_map" in omitted["relax.LegalizeOps"]
    assert all(reason.strip() for params in omitted.values() for reason in params.values())
    text = format_table(cat)
    assert "not settable: customize_legalize_map (needs a Python object" in text
