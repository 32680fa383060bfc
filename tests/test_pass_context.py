"""PassContext settings per pipeline: file format v2 (+ v1 migration), engine runs and cache keys,
config-key validation naming the key, exported scripts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pipeline_model.document import PipelineDocument, Step
from pipeline_model.export import ExportError, export_script
from pipeline_model.fileformat import FORMAT_VERSION, PipelineFileError, dumps_pipeline, load_pipeline, loads_pipeline
from pipeline_model.pass_context import PassContextError, PassContextSettings

DATA = Path(__file__).parent / "data" / "pipelines"
FUSE = [Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern"), Step("relax.FuseOps")]


def test_v2_fixture_loads_and_round_trips():
    doc = load_pipeline(DATA / "v2_pass_context.json")
    settings = doc.pass_context_settings()
    assert settings == PassContextSettings(2, {"relax.FuseOps.max_depth": 1}, ["FoldConstant"])
    text = dumps_pipeline(doc)
    data = json.loads(text)
    assert data["version"] == FORMAT_VERSION == 3 and data["pass_context"] == settings.to_json()
    assert loads_pipeline(text).pass_context_settings() == settings


def test_v1_migrates_to_v2_with_default_context():
    raw = json.loads((DATA / "v1_walkthrough.json").read_text(encoding="utf-8"))
    assert raw["version"] == 1 and "pass_context" not in raw  # it really is an old file
    doc = load_pipeline(DATA / "v1_walkthrough.json")
    assert doc.pass_context_settings().is_default
    data = json.loads(dumps_pipeline(doc))
    assert data["version"] == 3 and "pass_context" not in data  # defaults are not written


def test_v1_file_with_pass_context_is_refused(tmp_path):
    raw = json.loads((DATA / "v1_walkthrough.json").read_text(encoding="utf-8"))
    raw["pass_context"] = {"opt_level": 2}
    p = tmp_path / "odd.json"
    p.write_text(json.dumps(raw, indent=1))
    with pytest.raises(PipelineFileError) as info:
        load_pipeline(p)
    assert str(p) in str(info.value) and info.value.json_path == "pass_context" and "version 2" in str(info.value)


@pytest.mark.parametrize("bad, where", [
    ({"opt_level": 7}, "pass_context.opt_level"),
    ({"config": {"relax.FuseOps.max_depth": None}}, "pass_context.config"),
    ({"disabled_pass": "FuseOps"}, "pass_context.disabled_pass"),
    ({"opt": 1}, "pass_context"),
])
def test_bad_pass_context_names_file_and_place(tmp_path, bad, where):
    raw = json.loads((DATA / "v2_pass_context.json").read_text(encoding="utf-8"))
    raw["pass_context"] = bad
    p = tmp_path / "bad.json"
    p.write_text(json.dumps(raw, indent=1))
    with pytest.raises(PipelineFileError) as info:
        load_pipeline(p)
    assert str(p) in str(info.value) and info.value.json_path.startswith(where) and info.value.line is not None


def test_settings_validation_messages():
    with pytest.raises(PassContextError, match=r"pass_context.opt_level: must be an integer 0..4"):
        PassContextSettings.from_json({"opt_level": True})
    with pytest.raises(PassContextError, match=r"config\['k'\]: value is not plain JSON"):
        PassContextSettings.from_json({"config": {"k": float("nan")}})
    assert PassContextSettings().fingerprint() == ""
    assert "max_depth" in PassContextSettings(config={"relax.FuseOps.max_depth": 1}).fingerprint()


def _functions(script: str) -> int:
    return script.count("@T.prim_func") + script.count("@R.function")


def test_engine_uses_pass_context_and_cache_key(engine):
    engine.request("cache_clear", {})  # the session engine may hold these steps from an earlier test (GUI e2e)
    plain = PipelineDocument(steps=[s.clone() for s in FUSE])
    deep = plain.clone()
    deep.pass_context = {"config": {"relax.FuseOps.max_depth": 1}}
    r1 = engine.run(plain)
    r2 = engine.run(deep)
    assert r1.ok and r2.ok, (r1.error, r2.error)
    # Same steps, different PassContext: a different cache entry, and FuseOps' output differs.
    assert r1.steps[2].snapshot_key != r2.steps[2].snapshot_key and not r2.steps[2].cached
    assert _functions(r2.final_script) != _functions(r1.final_script)  # max_depth 1 limits fusion
    assert r1.steps[0].snapshot_key != r2.steps[0].snapshot_key  # the whole chain is keyed
    again = engine.run(deep)
    assert again.steps[2].cached and again.final_script == r2.final_script


def test_unknown_config_key_is_named_before_any_step(engine, tmp_path):
    doc = PipelineDocument(steps=[s.clone() for s in FUSE], pass_context={"config": {"relax.FuseOps.maxdepth": 1}})
    doc.path = str(tmp_path / "typo.json")
    result = engine.run(doc)
    assert not result.ok and all(s.state == "not_run" for s in result.steps)
    assert "'relax.FuseOps.maxdepth'" in result.error and "did you mean 'relax.FuseOps.max_depth'" in result.error
    assert result.error.startswith(str(tmp_path / "typo.json") + ": pass_context.config")
    doc.pass_context = {"config": {"relax.FuseOps.max_depth": "one"}}
    result = engine.run(doc)
    assert "config['relax.FuseOps.max_depth']: must be an integer" in result.error


def test_cli_run_bad_config_exit_2(engine, tmp_path, capsys):
    import argparse

    from pipeline_model.cli import run_cmd
    from pipeline_model.fileformat import save_pipeline

    path = str(tmp_path / "p.json")
    save_pipeline(PipelineDocument(steps=[s.clone() for s in FUSE], pass_context={"config": {"no.such.key": 1}}), path)
    parser = argparse.ArgumentParser()
    run_cmd.add_parser(parser.add_subparsers(dest="command"))
    assert run_cmd.main(parser.parse_args(["run", path]), client=engine) == 2
    assert "unknown PassContext config key 'no.such.key'" in capsys.readouterr().err


def test_export_writes_pass_context_as_literal(engine, tmp_path):
    import subprocess
    import sys

    doc = load_pipeline(DATA / "v2_pass_context.json")
    source = export_script(doc)
    assert "PASS_CONTEXT = {'opt_level': 2, 'config': {'relax.FuseOps.max_depth': 1}, 'disabled_pass': ['FoldConstant']}" in source
    assert "tvm.transform.PassContext(**PASS_CONTEXT)" in source
    script = tmp_path / "x.py"
    script.write_text(source)
    out = tmp_path / "final.py"
    proc = subprocess.run([sys.executable, str(script), "--quiet", "--save-script", str(out)], capture_output=True,
                          text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert out.read_text().strip() == engine.run(doc).final_script.strip()
    # A hostile key stays a string literal.
    doc.pass_context = {"config": {"x'); import os; os.system('echo pwned'); ('": 1}}
    hostile = export_script(doc)
    assert "os.system('echo pwned')" not in hostile.replace("\"x'); import os; os.system('echo pwned'); ('\"", "")
    doc.pass_context = {"opt_level": 9}
    with pytest.raises(ExportError, match="pass_context.opt_level"):
        export_script(doc)
