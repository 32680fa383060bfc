"""TVM's CPU runtime thread count: the engine (and exported scripts) use every usable core unless told otherwise."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from pipeline_model import env_report, runtime_threads
from pipeline_model.scriptlib import threads
from pipeline_model.runtime_threads import RuntimeThreads

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_sets_usable_cores_when_nothing_is_set():
    env: dict[str, str] = {"PATH": "/bin"}
    assert runtime_threads.ensure_runtime_threads(env, cores=6) == RuntimeThreads(6, "usable cores")
    assert env["TVM_NUM_THREADS"] == "6"


@pytest.mark.parametrize("name", ["TVM_NUM_THREADS", "OMP_NUM_THREADS"])
def test_an_explicit_choice_wins(name):
    env = {name: "3"}
    assert runtime_threads.ensure_runtime_threads(env, cores=6) == RuntimeThreads(3, name)
    assert env == {name: "3", **dict(threads.POOL_DEFAULTS)}  # the count neither added nor changed


def test_idle_workers_sleep_and_are_not_pinned_unless_the_user_chose():
    """TVM's pool workers spin (sched_yield) 300000 times between parallel loops and are pinned to cores by
    default: on a core another process keeps busy every yield gives that process a time slice, and a pinned
    worker cannot leave it (issue 35). The engine, the bench and exported scripts set the spin count to 0 and
    TVM_BIND_THREADS to 0; a value the user set wins."""
    env: dict[str, str] = {}
    runtime_threads.ensure_runtime_threads(env, cores=2)
    assert env["TVM_THREAD_POOL_SPIN_COUNT"] == "0" and env["TVM_BIND_THREADS"] == "0"
    env = {"TVM_THREAD_POOL_SPIN_COUNT": "300000", "TVM_BIND_THREADS": "1"}
    runtime_threads.ensure_runtime_threads(env, cores=2)
    assert env == {"TVM_THREAD_POOL_SPIN_COUNT": "300000", "TVM_BIND_THREADS": "1", "TVM_NUM_THREADS": "2"}


def test_tvm_variable_is_read_before_omp():
    env = {"OMP_NUM_THREADS": "5", "TVM_NUM_THREADS": "2"}
    assert runtime_threads.explicit_setting(env) == RuntimeThreads(2, "TVM_NUM_THREADS")


@pytest.mark.parametrize("value", ["0", "-1", "abc", ""])
def test_a_meaningless_value_is_ignored_like_tvm_does(value):
    env = {"TVM_NUM_THREADS": value}
    assert runtime_threads.ensure_runtime_threads(env, cores=4) == RuntimeThreads(4, "usable cores")
    assert env["TVM_NUM_THREADS"] == "4"


def test_usable_cores_follows_the_affinity_mask(monkeypatch):
    """The CPUs this process may run on (a container or taskset limits them), not the machine's count."""
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert threads.usable_cores() == 3

    def refused(pid):
        raise OSError("not allowed")

    monkeypatch.setattr(os, "sched_getaffinity", refused, raising=False)
    assert threads.usable_cores() == 16
    monkeypatch.delattr(os, "sched_getaffinity", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert threads.usable_cores() == 1


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (*threads.THREAD_ENV_VARS, *dict(threads.POOL_DEFAULTS))}
    env["PYTHONPATH"] = ROOT
    return env


def test_script_lines_follow_the_same_rule():
    code = ("import os\n" + "\n".join(runtime_threads.script_lines())
            + "\nprint(os.environ['TVM_NUM_THREADS'], os.environ['TVM_THREAD_POOL_SPIN_COUNT'], os.environ['TVM_BIND_THREADS'])\n")
    out = subprocess.run([sys.executable, "-c", code], env=_clean_env(), capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(threads.usable_cores()), "0", "0"]
    env = dict(_clean_env(), OMP_NUM_THREADS="1")
    code = "import os\n" + "\n".join(runtime_threads.script_lines()) + "\nprint(os.environ.get('TVM_NUM_THREADS'))\n"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "None"


_PARALLEL_RUN = textwrap.dedent('''
    import os, sys
    if sys.argv[1] == "app":
        from pipeline_model.runtime_threads import ensure_runtime_threads
        ensure_runtime_threads()
    import numpy as np
    import tvm
    from tvm.script import tirx as T

    @T.prim_func
    def add_one(a: T.Buffer((4096,), "float32"), b: T.Buffer((4096,), "float32")):
        for i in T.parallel(4096):
            b[i] = a[i] + T.float32(1)

    lib = tvm.compile(add_one, target="llvm")
    dev = tvm.cpu()
    a = tvm.runtime.tensor(np.zeros(4096, "float32"), dev)
    b = tvm.runtime.tensor(np.zeros(4096, "float32"), dev)
    before = set(os.listdir("/proc/self/task"))
    for _ in range(5):
        lib(a, b)
    assert float(b.numpy()[0]) == 1.0
    workers = set(os.listdir("/proc/self/task")) - before
    print(len(workers), min(len(os.sched_getaffinity(int(t))) for t in workers))
''')


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads through /proc")
def test_a_parallel_loop_really_runs_on_every_usable_core(tmp_path):
    """The runtime's thread pool starts one worker per extra core (the calling thread is the first):
    with the app's setting a parallel loop adds ``usable_cores() - 1`` threads to the process, none of them
    pinned to one core (TVM pins them unless ``TVM_BIND_THREADS=0``; issue 35)."""
    cores = threads.usable_cores()
    if cores < 2:
        pytest.skip("one usable core: nothing to check")
    script = tmp_path / "parallel_run.py"  # TVMScript reads the function's source from a file
    script.write_text(_PARALLEL_RUN)
    run = [sys.executable, str(script)]
    app = subprocess.run([*run, "app"], env=_clean_env(), capture_output=True, text=True, timeout=300)
    assert app.returncode == 0, app.stderr[-2000:]
    assert app.stdout.strip().splitlines()[-1].split() == [str(cores - 1), str(cores)]


def test_report_warns_when_fewer_threads_than_cores():
    local = {"cpu_count": 4, "usable_cores": 4, "packages": {}}
    engine = {"runtime_threads": {"count": 1, "source": "TVM_NUM_THREADS"}, "libinfo": {}}
    problems = env_report.find_problems(local, engine)
    (warning,) = [p for p in problems if "usable cores" in p.message]
    assert "1 of the 4" in warning.message and "unset TVM_NUM_THREADS" in warning.fix
    engine["runtime_threads"] = {"count": 4, "source": "usable cores"}
    assert not [p for p in env_report.find_problems(local, engine) if "usable cores" in p.message]


def test_deploy_script_runs_the_pool_as_the_engine_does():
    """``export_library``'s ``deploy.py`` holds the same thread-pool code as exported pipeline scripts, before
    ``import tvm`` (TVM reads the variables when its pool starts)."""
    from pipeline_model.engine.build.deploy import deploy_script

    text = deploy_script("model.so", "llvm")
    assert "\n".join(runtime_threads.script_lines()) in text
    assert text.index("pool_settings(os.environ)") < text.index("\nimport tvm\n")
    assert text.index("THREAD_POOL = use_app_pool(os.environ)") < text.index("\nimport tvm\n")
