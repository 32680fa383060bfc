"""``main.py diverge`` (issue 21): the first diverging node is the binding a wrong step rewrote (or the fused
call holding it)."""

from __future__ import annotations

import argparse
import json
import os

import pytest

from pipeline_model.cli import diverge_cmd
from tests.debug_fixtures import ROOT, injected_pipeline

CNN = os.path.join(ROOT, "resources", "models", "cnn_bn.onnx")


def _diverge(argv: list[str], engine) -> int:
    parser = argparse.ArgumentParser()
    diverge_cmd.add_parser(parser.add_subparsers(dest="command"))
    return diverge_cmd.main(parser.parse_args(["diverge", *argv]), client=engine)


def test_table_marks_the_first_node():
    reply = {"step": 3, "pass_id": "custom.python", "function": "main", "first_divergent": "add", "only_before": ["x"],
             "nodes": [{"name": "mm", "callee": "relax.matmul", "shape": [1, 4], "status": "ok", "max_abs_over_ref": 0.0},
                       {"name": "add", "callee": "relax.subtract", "shape": [1, 4], "status": "diverges",
                        "max_abs_over_ref": 0.5, "first": True},
                       {"name": "lv", "shape": [2], "status": "no counterpart"}]}
    lines = diverge_cmd.table(reply)
    assert lines[2].startswith("> add") and "DIVERGES" in lines[2] and "relax.subtract" in lines[2]
    assert "no counterpart" in lines[3] and lines[-1] == "first diverging node: add"


@pytest.mark.e2e
@pytest.mark.parametrize("seed,level,model", [(51, "relax", "builtin:mlp"), (52, "tir", "builtin:mlp"),
                                              (53, "tir", "builtin:mlp"), (54, "tir", CNN)])
def test_first_diverging_node_is_the_rewritten_binding(engine, tmp_path, capsys, seed, level, model):
    path, wrong = injected_pipeline(str(tmp_path), 10, seed, level, model=model)
    assert _diverge([path, "--trust", "--json", "--step", str(wrong)], engine) == 1
    out = json.loads(capsys.readouterr().out)
    first = next(n for n in out["nodes"] if n.get("first"))
    assert first["name"] == out["first_divergent"]
    if level == "relax":
        assert first["callee"] == "relax.subtract", out
    else:
        assert "relu" in first["callee"] or "relu" in first["name"], out
    before = out["nodes"][: out["nodes"].index(first)]
    assert all(n["status"] in ("ok", "no counterpart") for n in before)


@pytest.mark.e2e
def test_diverge_defaults_to_the_bisect_culprit_and_a_correct_step_is_quiet(engine, tmp_path, capsys):
    path, wrong = injected_pipeline(str(tmp_path), 9, 55, "relax")
    assert _diverge([path, "--trust"], engine) == 1
    text = capsys.readouterr().out
    assert f"step {wrong} (custom.python)" in text and "first diverging node: add" in text
    assert _diverge([path, "--trust", "--step", str(wrong + 1 if wrong < 9 else wrong - 1)], engine) == 0
    assert "no node diverges" in capsys.readouterr().out
