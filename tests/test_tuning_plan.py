"""Time-budgeted tuning's planning (pipeline_model.passkinds.metaschedule.plan), TVM-free: the floor per task,
FLOPs x calls, continuation of calibrated tasks, and spending the whole budget (a fake clock, no real time)."""

from __future__ import annotations

import pytest

from pipeline_model.passkinds.metaschedule.focus import FocusError, focus_settings, is_budgeted
from pipeline_model.passkinds.metaschedule.plan import (
    MIN_ROUND_S,
    allocate_by_weight,
    round_increments,
    run_budgeted_tuning,
    task_weights,
    trials_that_fit,
)

#: A ResNet-like module: a big 3x3 convolution, two 1x1 downsample convolutions (0.3 % of the FLOPs each),
#: a GELU and an attention matmul, and a transpose without FLOPs.
FLOPS = {"conv3x3": 1.0e9, "conv1x1_a": 3.0e6, "conv1x1_b": 3.0e6, "gelu": 2.0e5, "attn_matmul": 4.0e7,
         "transpose": 0.0}
CALLS = {"conv3x3": 8, "conv1x1_a": 1, "conv1x1_b": 1, "gelu": 12, "attn_matmul": 12, "transpose": 2}


def test_weights_are_flops_times_calls_and_no_task_is_left_out():
    w = task_weights(FLOPS, CALLS)
    assert w["conv3x3"] == 8.0e9 and w["attn_matmul"] == 4.8e8 and w["gelu"] == 2.4e6
    assert w["transpose"] == 2.0  # no FLOPs: weight 1 per call, still a task
    assert set(w) == set(FLOPS)
    assert task_weights({"f": 10.0}, {}) == {"f": 10.0}  # never called (or not counted): once


def test_allocation_has_a_floor_for_every_task_and_sums_to_the_total():
    w = task_weights(FLOPS, CALLS)
    alloc = allocate_by_weight(w, 400, 8)
    assert set(alloc) == set(FLOPS)
    assert all(v >= 8 for v in alloc.values()), alloc  # the 1x1 convolutions, GELU, transpose included
    assert sum(alloc.values()) == 400
    assert alloc["conv3x3"] > alloc["attn_matmul"] > alloc["conv1x1_a"] == alloc["conv1x1_b"] == 8
    # a total below the floors: every task still gets its floor (the sum grows, nothing is dropped)
    small = allocate_by_weight(w, 10, 8)
    assert small == {n: 8 for n in FLOPS}
    # all weights zero: an equal split
    assert allocate_by_weight({"a": 0, "b": 0}, 10, 1) == {"a": 5, "b": 5}


def test_a_task_touched_in_calibration_continues():
    """The bug of issue 19: calibration gave four convolutions 13-16 trials, then the final round (minimum 8)
    skipped them as already tuned. Here each task gets what it lacks to reach its share of the new total."""
    w = {"c1": 4.0, "c2": 3.0, "c3": 2.0, "c4": 1.0}
    done = {"c1": 16, "c2": 15, "c3": 14, "c4": 13}
    more = round_increments(w, done, 158, 8)
    target = allocate_by_weight(w, 158, 8)
    assert more == {n: target[n] - done[n] for n in w}
    assert all(v > 0 for v in more.values()), more  # every calibrated task is tuned further
    assert sum(more.values()) == 158 - sum(done.values())
    # a task already above its share gets nothing more this round (never a negative count)
    assert round_increments({"a": 1.0, "b": 1.0}, {"a": 30, "b": 0}, 40, 1) == {"a": 0, "b": 20}


def test_trials_that_fit():
    assert trials_that_fit(2.0, 100.0, 0.5) == 100
    assert trials_that_fit(0.0, 100.0) == 0 and trials_that_fit(1.0, -1.0) == 0


class FakeTuner:
    """A tuner on a fake clock: every trial costs ``per_trial`` seconds, every task touched in a round
    ``per_task`` more; a task's search space holds ``space`` trials at most (then it measures nothing)."""

    def __init__(self, per_trial=1.0, per_task=0.0, space=None):
        self.t = 0.0
        self.per_trial, self.per_task = per_trial, per_task
        self.space = space or {}
        self.total: dict[str, int] = {}
        self.calls: list[dict[str, int]] = []
        self.populations: list[int] = []

    def now(self):
        return self.t

    def tune_round(self, alloc, population=512):
        self.calls.append(dict(alloc))
        self.populations.append(population)
        measured = {}
        for name, trials in alloc.items():
            room = self.space.get(name, 10**9) - self.total.get(name, 0)
            k = max(0, min(trials, room))
            self.t += self.per_task + k * self.per_trial
            self.total[name] = self.total.get(name, 0) + k
            measured[name] = k
        return measured


def test_the_budget_is_spent_and_calibrated_tasks_continue():
    w = task_weights(FLOPS, CALLS)
    tuner = FakeTuner(per_trial=1.0, per_task=2.0)
    plan = run_budgeted_tuning(w, 600.0, 4, tuner.tune_round, tuner.now)
    kinds = [r["kind"] for r in plan["rounds"]]
    assert kinds[0] == "calibration" and kinds[1] == "main", kinds
    assert plan["rounds"][0]["allocation"] == {n: 4 for n in FLOPS}  # the floor, every task
    # the calibration's order: heaviest first (a deadline cuts the light ones, not the convolution)
    assert list(tuner.calls[0]) == sorted(w, key=lambda n: -w[n])
    # the main round continues the tasks calibration touched (the heavy ones), it never skips them
    assert tuner.calls[1].get("conv3x3", 0) > 0
    assert plan["trials"]["conv3x3"] > plan["trials"]["attn_matmul"] > plan["trials"]["conv1x1_a"] >= 4
    assert plan["not_reached"] == []
    # the whole budget is spent: it ends at the deadline with less than one round's minimum left
    assert plan["end"] == "deadline", plan
    assert 600.0 - MIN_ROUND_S <= tuner.t <= 600.0 * 1.05, tuner.t


def test_the_calibration_round_searches_a_small_population_the_others_the_steps():
    """The calibration round's few trials per PrimFunc come from at most CALIBRATION_POPULATION candidates (its
    search set-up is paid per PrimFunc: the first trial comes sooner); later rounds use search_population."""
    from pipeline_model.passkinds.metaschedule.plan import CALIBRATION_POPULATION

    tuner = FakeTuner(per_trial=1.0)
    plan = run_budgeted_tuning({"a": 2.0, "b": 1.0}, 300.0, 2, tuner.tune_round, tuner.now, search_population=512)
    assert [r["kind"] for r in plan["rounds"]][:2] == ["calibration", "main"]
    assert tuner.populations[0] == CALIBRATION_POPULATION < 512 and set(tuner.populations[1:]) == {512}
    small = FakeTuner(per_trial=1.0)
    run_budgeted_tuning({"a": 1.0}, 300.0, 2, small.tune_round, small.now, search_population=32)
    assert set(small.populations) == {32}  # never more than the step asked for


def test_rounds_use_the_tuned_profile_when_time_remains():
    w = {"big": 100.0, "small": 1.0}
    tuner = FakeTuner(per_trial=1.0, per_task=1.0)
    profiles = []

    def reprofile():
        profiles.append(tuner.t)
        return {"big": 10.0, "small": 90.0}  # after tuning, the small one holds the time

    plan = run_budgeted_tuning(w, 300.0, 2, tuner.tune_round, tuner.now, reprofile=reprofile)
    assert profiles, plan["rounds"]
    later = [r for r in plan["rounds"] if r["weights_from"] == "tuned profile"]
    assert later and later[0]["allocation"]["small"] > later[0]["allocation"]["big"], plan["rounds"]
    # the main round already goes by the measured time (where it goes after calibration), not by FLOPs
    assert [r["kind"] for r in plan["rounds"][:2]] == ["calibration", "main"]
    assert plan["rounds"][1]["weights_from"] == "tuned profile", plan["rounds"]


def test_exhausted_search_spaces_end_the_rounds_and_a_stop_is_honoured():
    tuner = FakeTuner(space={"a": 3, "b": 3})
    plan = run_budgeted_tuning({"a": 1.0, "b": 1.0}, 1000.0, 2, tuner.tune_round, tuner.now)
    assert plan["end"] == "exhausted" and plan["trials"] == {"a": 3, "b": 3}
    stopped = run_budgeted_tuning({"a": 1.0}, 1000.0, 2, FakeTuner().tune_round, FakeTuner().now,
                                  should_stop=lambda: True)
    assert stopped["end"] == "stopped" and stopped["rounds"] == [] and stopped["not_reached"] == ["a"]


def test_a_budget_too_small_for_every_floor_names_the_tasks_not_reached():
    tuner = FakeTuner(per_trial=10.0)

    def tune_round(alloc, population=512):  # the deadline cuts the round after the first task (as the engine's session does)
        first = next(iter(alloc))
        return tuner.tune_round({first: alloc[first]})

    plan = run_budgeted_tuning({"heavy": 9.0, "light": 1.0}, 30.0, 2, tune_round, tuner.now)
    assert plan["trials"] == {"heavy": 2, "light": 0}
    assert plan["not_reached"] == ["light"] and plan["end"] == "deadline"


def test_time_budget_parameter():
    assert is_budgeted({"time_budget_s": 120}) and not is_budgeted({}) and not is_budgeted({"time_budget_s": 0})
    assert focus_settings({"time_budget_s": 90})["time_budget_s"] == 90.0
    with pytest.raises(FocusError, match="time_budget_s"):
        focus_settings({"time_budget_s": -1})
    with pytest.raises(FocusError, match="every PrimFunc"):
        focus_settings({"time_budget_s": 60, "focus": "share"})
