"""``main.py run``: step lines, --emit-ir files, --json, exit codes 0 / 1 / 2."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys


from pipeline_model.cli import run_cmd
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import save_pipeline
from tests.tuning_fixtures import QUICK_SEARCH

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FUSION = os.path.join(ROOT, "resources", "pipelines", "fusion_walkthrough.json")


def _run(argv: list[str], engine=None) -> int:
    parser = argparse.ArgumentParser()
    run_cmd.add_parser(parser.add_subparsers(dest="command"))
    return run_cmd.main(parser.parse_args(["run", *argv]), client=engine)


def test_run_ok_prints_steps_and_emits_ir(engine, tmp_path, capsys):
    out_dir = tmp_path / "ir"
    assert _run([FUSION, "--emit-ir", str(out_dir)], engine) == 0
    text = capsys.readouterr().out
    lines = [line for line in text.splitlines() if line[:3].strip().isdigit()]
    assert len(lines) == 4
    assert "changed" in lines[0] and "relax.LegalizeOps" in lines[0] and " ms" in lines[0]
    names = sorted(os.listdir(out_dir))
    assert names == [".rps-files.json", "00_input.py", "01_relax.LegalizeOps.py",  # the list of its own files
                     "02_relax.AnnotateTIROpPattern.py", "03_relax.FuseOps.py", "04_relax.FuseTIR.py", "final.py"]
    assert (out_dir / "final.py").read_text() == (out_dir / "04_relax.FuseTIR.py").read_text()
    assert "R.matmul" in (out_dir / "00_input.py").read_text()
    assert _run([FUSION, "--emit-ir", str(out_dir)], engine) == 0  # a re-run replaces the files it wrote itself
    assert sorted(os.listdir(out_dir)) == names


def test_run_until_model_and_target_overrides_json(engine, capsys):
    code = _run([FUSION, "--until", "2", "--model", "builtin:transformer", "--target", "cuda", "--json"], engine)
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["model"] == "builtin:transformer" and data["target"]["kind"] == "cuda"
    assert [s["state"] for s in data["steps"]] == ["changed", "changed", "not_run", "not_run"]


def _pipeline(tmp_path, steps, model="builtin:mlp") -> str:
    path = str(tmp_path / "p.json")
    save_pipeline(PipelineDocument(model=model, steps=steps, name="t"), path)
    return path


def test_failing_step_exit_1_names_the_step(engine, tmp_path, capsys):
    source = "import tvm\n\ndef transform(mod):\n    raise RuntimeError('boom from custom')\n"
    path = _pipeline(tmp_path, [Step("relax.LegalizeOps"), Step("custom.python", {"source": source})])
    assert _run([path, "--trust"], engine) == 1
    err = capsys.readouterr().err
    assert "step 2 (custom.python)" in err and "boom from custom" in err
    # Without --trust the custom step does not run, and the message says why (bad input: exit 2, as the README says).
    assert _run([path], engine) == 2
    assert "trust" in capsys.readouterr().err


def test_bad_input_exit_2(engine, tmp_path, capsys):
    assert _run([str(tmp_path / "missing.json")], engine) == 2
    assert "missing.json" in capsys.readouterr().err
    broken = tmp_path / "broken.json"
    broken.write_text('{"format": "relax-pipeline-studio.pipeline",\n "version": 1,\n "steps": [1, }\n')
    assert _run([str(broken)], engine) == 2
    assert "broken.json:3" in capsys.readouterr().err
    assert _run([FUSION, "--target", "tpu"], engine) == 2
    assert "unknown target" in capsys.readouterr().err
    assert _run([FUSION, "--model", "builtin:resnet"], engine) == 2
    assert "builtin:resnet" in capsys.readouterr().err
    assert _run([FUSION, "--model", str(tmp_path / "nope.onnx")], engine) == 2
    assert _run([FUSION, "--until", "9"], engine) == 2
    assert _run([FUSION, "--until", "0"], engine) == 2
    bad_model = tmp_path / "bad_model.py"
    bad_model.write_text("# from tvm.script import ir as I\n\n@I.ir_module\nclass Module:\n    pass(\n")
    assert _run([FUSION, "--model", str(bad_model)], engine) == 2  # a model .py file needs --trust
    assert "--trust" in capsys.readouterr().err
    assert _run([FUSION, "--model", str(bad_model), "--trust"], engine) == 2
    assert "bad_model.py:5" in capsys.readouterr().err


def test_main_py_run_subprocess(tmp_path):
    """End to end through main.py in a fresh interpreter (its own engine)."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "run", FUSION, "--emit-ir", str(tmp_path)],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("changed") == 4 and (tmp_path / "final.py").exists()


def test_a_budgeted_steps_look_up_is_one_line_per_step():
    """The look-up phase of a time-budgeted step (an event per PrimFunc, total 0) prints one line per step that
    says what it does; the rounds' events print a line each, with their trial counts."""
    lines = run_cmd.ProgressLines()
    lookup = {"index": 4, "phase": "lookup", "done": 0, "total": 0, "tasks": []}
    first = lines.line(lookup)
    assert first == "     step 5: tuning: looking the PrimFuncs up in the work folder and the user tuning database (no trials yet)"
    assert lines.line(dict(lookup, tasks=[{"name": "matmul", "trials": 0}])) is None
    assert lines.line(dict(lookup, index=6)) is not None  # another step looks its own functions up
    assert lines.line({"index": 4, "phase": "", "done": 0, "total": 12, "tasks": []}) == "     step 5: tuning 0/12 trials"
    assert lines.line({"index": 4, "phase": "", "done": 0, "total": 12, "tasks": []}) is not None
    assert "[stopped]" in lines.line(dict(lookup, index=7, stopped=True))  # a stop ends the look-up's wording


def test_run_prints_tuning_progress_lines(engine, tmp_path, capsys):
    """MetaSchedule progress comes out as ``step N: tuning d/t trials; <task> ...`` lines (not with --json)."""
    steps = [Step("relax.LegalizeOps"), Step("relax.AnnotateTIROpPattern"), Step("relax.FuseOps"), Step("relax.FuseTIR"),
             Step("relax.MetaScheduleTuneIRMod", {"max_trials_global": 2, "num_trials_per_iter": 2, "search_population": 64,
                                                  "op_names": ["fused_matmul_add_relu"], **QUICK_SEARCH}),
             Step("relax.MetaScheduleApplyDatabase")]
    path = _pipeline(tmp_path, steps)
    assert _run([path], engine) == 0
    out = capsys.readouterr().out
    progress = [line.strip() for line in out.splitlines() if "tuning " in line and " trials" in line]
    assert progress, out
    assert all(line.startswith("step 5: tuning ") for line in progress), progress
    assert "fused_matmul_add_relu" in progress[-1] and progress[-1].split()[3].split("/")[0] != "0", progress
    assert "[done]" in progress[-1]
    assert os.path.isfile(tmp_path / "p.tuning" / "database_tuning_record.json")  # default work dir
    # --json: one JSON document, no progress lines (fresh cache, so the tuning step runs again and sends its
    # progress events; it reuses the database just made instead of measuring again)
    engine.request("cache_clear", {})
    assert _run([path, "--json"], engine) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and [s["state"] for s in data["steps"]][-1] == "changed"
    assert data["steps"][4]["state"] == "unchanged"  # the tuning step ran (and sent its progress events)
