"""Tuning budget in minutes -> trials, and the choice of the "app best" column (pipeline_model.passkinds.metaschedule.budget)."""

from __future__ import annotations

import pytest

from pipeline_model.passkinds.metaschedule.budget import (
    MAX_TUNE_MINUTES,
    BudgetError,
    parse_tune_minutes,
    pick_best,
    trials_for_budget,
    trials_per_second,
)

MODELS = ["mlp", "cnn", "gpt2"]


def test_one_number_is_every_models_budget():
    assert parse_tune_minutes("4.5", MODELS) == {"mlp": 4.5, "cnn": 4.5, "gpt2": 4.5}


def test_per_model_pairs_default_to_the_ceiling_or_a_bare_number():
    assert parse_tune_minutes("mlp=3, gpt2=11", MODELS) == {"mlp": 3.0, "cnn": MAX_TUNE_MINUTES, "gpt2": 11.0}
    assert parse_tune_minutes("mlp=3,6", MODELS) == {"mlp": 3.0, "cnn": 6.0, "gpt2": 6.0}


@pytest.mark.parametrize("text, words", [
    ("16", "above the ceiling of 15"),
    ("gpt2=20", "gpt2: 20 min is above the ceiling"),
    ("0", "more than 0"),
    ("mlp=-1", "mlp: must be more than 0"),
    ("ten", "'ten' is not a number"),
    ("bert=3", "unknown model 'bert'"),
    ("", "empty"),
    ("nan", "more than 0"),
])
def test_bad_budgets_say_what_is_wrong(text, words):
    with pytest.raises(BudgetError, match=words):
        parse_tune_minutes(text, MODELS)


def test_pace_and_trials_that_fit():
    assert trials_per_second(32, 16.0) == 2.0
    assert trials_per_second(0, 16.0) == 0.0 and trials_per_second(5, 0.0) == 0.0
    # 2 trials/s, 100 s left, 80 % of it: 160 trials
    assert trials_for_budget(2.0, 100.0, safety=0.8) == 160
    assert trials_for_budget(2.0, 100.0, safety=0.8, maximum=50) == 50
    assert trials_for_budget(0.01, 100.0, safety=0.8, minimum=32) == 32  # slow pace: still the minimum
    assert trials_for_budget(2.0, -5.0, minimum=32) == 0  # no time left: nothing more
    assert trials_for_budget(0.0, 100.0, minimum=32) == 0  # nothing measured: no basis for a budget


def test_pick_best_takes_the_fastest_that_passed_its_check():
    cols = {
        "cpu_tuned_focus": {"median": 30.0, "ok": True},
        "cpu_build": {"median": 180.0, "ok": True},
        "cpu_build_dlight": {"median": 25.0, "ok": False},  # faster but wrong: not chosen
        "broken": {"error": "step 3 failed"},
    }
    assert pick_best(cols) == "cpu_tuned_focus"
    cols["cpu_build_dlight"]["ok"] = True
    assert pick_best(cols) == "cpu_build_dlight"
    assert pick_best({"a": {"median": 5.0, "ok": True}, "b": {"median": 5.0, "ok": True}}) == "a"  # tie: first
    assert pick_best({"x": {"error": "boom"}, "y": {"median": 1.0, "ok": False}}) is None
