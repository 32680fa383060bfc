"""The app's thread pool (issue 35): it replaces TVM's for every module a process loads or JIT-compiles, gives
right answers under concurrent callers, failing parts, forks and exported libraries, and steps aside (with the
reason) when the user asks for TVM's pool, when TVM is loaded first or when there is no C compiler."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

from pipeline_model import env_report, runtime_threads

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the app's pool runs on Linux only")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Run as an exported script runs: the setup lines before ``import tvm``, then parallel kernels.
_PROGRAM = textwrap.dedent('''
    import os, sys, threading
    {setup}
    import numpy as np
    import tvm
    from tvm.script import tirx as T
    if "--tvm-first" in sys.argv:
        THREAD_POOL = use_app_pool(os.environ)

    @T.prim_func
    def add_one(a: T.Buffer((4096,), "float32"), b: T.Buffer((4096,), "float32")):
        for i in T.parallel(4096):
            b[i] = a[i] + T.float32(1)

    @T.prim_func
    def checked(a: T.Buffer((64,), "float32"), b: T.Buffer((64,), "float32")):
        for i in T.parallel(64):
            assert a[i] >= T.float32(0), "a part of the loop saw a negative value"
            b[i] = a[i] * T.float32(2)

    dev = tvm.cpu()
    add = tvm.compile(add_one, target="llvm")
    which = sys.argv[1]
    if which == "exported":  # a library written to disk and loaded back, as deploy.py runs it
        path = os.path.join(os.getcwd(), "add_one.so")
        add.export_library(path)
        add = tvm.runtime.load_module(path)

    def run_add(times, errors):
        rng = np.random.default_rng(len(errors))
        for _ in range(times):
            x = rng.standard_normal(4096).astype("float32")
            a, b = tvm.runtime.tensor(x, dev), tvm.runtime.tensor(np.zeros(4096, "float32"), dev)
            add(a, b)
            if not np.array_equal(b.numpy(), x + 1):
                errors.append("wrong")

    errors = []
    if which == "threads":  # two Python threads launch parallel loops at once
        runners = [threading.Thread(target=run_add, args=(300, errors)) for _ in range(2)]
        [t.start() for t in runners]
        [t.join() for t in runners]
    elif which == "fails":  # a part fails: an error, then the pool still runs the next loop
        check = tvm.compile(checked, target="llvm")
        x = np.ones(64, "float32")
        x[40] = -1.0
        try:
            check(tvm.runtime.tensor(x, dev), tvm.runtime.tensor(np.zeros(64, "float32"), dev))
            errors.append("no error")
        except Exception as exc:  # noqa: BLE001
            print("raised", type(exc).__name__, str(exc).splitlines()[0] if str(exc) else "")
        run_add(20, errors)
    elif which == "fork":  # a child forked after the pool started still runs its loops
        run_add(5, errors)
        pid = os.fork()
        if pid == 0:
            child = []
            run_add(20, child)
            os._exit(3 if child else 0)
        _, status = os.waitpid(pid, 0)
        if os.waitstatus_to_exitcode(status) != 0:
            errors.append(f"child exit {{os.waitstatus_to_exitcode(status)}}")
    else:
        run_add(50, errors)
    print("pool", THREAD_POOL)
    print("counters", pool_counters())
    print("errors", errors)
''')


def _env(tmp_path, **extra):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TVM_", "OMP_", "RPS_"))}
    env.update({"TVM_NUM_THREADS": "2", "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": ROOT, **extra})
    os.makedirs(env["TMPDIR"], exist_ok=True)
    return env


def _run(tmp_path, which, *flags, env=None):
    lines = "\n".join(runtime_threads.script_lines())
    if "--tvm-first" in flags:
        lines = lines.replace("THREAD_POOL = use_app_pool(os.environ)", "")
    script = tmp_path / "program.py"  # TVMScript reads the kernels' source from a file
    script.write_text(_PROGRAM.format(setup=lines))
    done = subprocess.run([sys.executable, str(script), which, *flags], cwd=tmp_path, capture_output=True,
                          text=True, timeout=600, env=env or _env(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    out = {line.split(" ", 1)[0]: line.split(" ", 1)[1] for line in done.stdout.splitlines() if " " in line}
    assert out["errors"] == "[]", done.stdout
    return out


@pytest.mark.parametrize("which", ["jit", "exported"])
def test_every_parallel_loop_runs_on_the_app_pool(tmp_path, which):
    """A module compiled in memory and one loaded from a file both launch their loops on the app's pool, on
    two threads, with the right answer; the library's source and build folder are gone afterwards."""
    out = _run(tmp_path, which)
    assert out["pool"] == "app"
    counters = eval(out["counters"])  # noqa: S307 - our own program's dict
    assert counters["threads"] == 2 and counters["launches"] >= 50 and counters["parallel_jobs"] >= 50
    assert counters["spin_us"] == (200 if len(os.sched_getaffinity(0)) >= 2 else 0)
    assert os.listdir(tmp_path / "tmp") == []


def test_more_threads_than_cores_run_right_and_sleep_at_once(tmp_path):
    """``TVM_NUM_THREADS`` over the usable cores: every worker still runs its parts right, and idle ones do not
    spin (they would take a core from the thread that has work)."""
    cores = len(os.sched_getaffinity(0))
    counters = eval(_run(tmp_path, "threads", env=_env(tmp_path, TVM_NUM_THREADS=str(cores + 3)))["counters"])  # noqa: S307
    assert counters["threads"] == cores + 3 and counters["spin_us"] == 0 and counters["launches"] == 600


def test_loops_launched_from_two_threads_at_once_stay_right(tmp_path):
    """One loop at a time runs on the workers; another thread's loop meanwhile runs on its own thread."""
    counters = eval(_run(tmp_path, "threads")["counters"])  # noqa: S307
    assert counters["launches"] == 600 and 0 < counters["parallel_jobs"] <= 600


def test_a_failing_part_raises_and_the_pool_goes_on(tmp_path):
    out = _run(tmp_path, "fails")
    assert out["raised"].split()[0] in ("RuntimeError", "TVMError", "InternalError", "ValueError")


def test_a_forked_child_runs_its_loops(tmp_path):
    assert _run(tmp_path, "fork")["pool"] == "app"


def test_the_user_can_keep_tvms_pool(tmp_path):
    out = _run(tmp_path, "jit", env=_env(tmp_path, RPS_THREAD_POOL="tvm"))
    assert out["pool"] == "RPS_THREAD_POOL=tvm" and out["counters"] == "{}"


def test_too_late_once_tvm_is_loaded(tmp_path):
    out = _run(tmp_path, "jit", "--tvm-first")
    assert out["pool"] == "TVM was loaded before the app's pool could be" and out["counters"] == "{}"


def test_without_a_c_compiler_tvms_pool_runs(tmp_path):
    empty = tmp_path / "bin"
    empty.mkdir()
    out = _run(tmp_path, "jit", env=_env(tmp_path, PATH=str(empty)))
    assert out["pool"] == "the app's pool could not be built (no C compiler (cc, gcc or clang) on PATH)"
    assert os.listdir(tmp_path / "tmp") == []


def test_a_compiler_planted_in_the_working_folder_is_not_run(tmp_path):
    """PATH with ``.`` or an empty entry: the ``cc`` in the folder the program runs from is never executed."""
    marker = tmp_path / "planted_ran"
    planted = tmp_path / "cc"
    planted.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    planted.chmod(0o755)
    path = os.pathsep.join([".", "", os.environ.get("PATH", "/usr/bin:/bin")])
    out = _run(tmp_path, "jit", env=_env(tmp_path, PATH=path))
    assert not marker.exists()
    assert out["pool"] == "app" or out["pool"].startswith("the app's pool could not be built (no C compiler")


def test_the_report_names_the_pool_in_use():
    assert env_report._pool_line({}, {"pool": "app", "why": "", "spin_us": 200}) == (
        "thread pool: the app's (idle workers spin 200 µs, then sleep; the caller runs the parts no worker took)")
    assert env_report._pool_line({"TVM_THREAD_POOL_SPIN_COUNT": "0", "TVM_BIND_THREADS": "0"},
                                 {"pool": "tvm", "why": "RPS_THREAD_POOL=tvm"}) == (
        "thread pool: idle workers sleep (TVM_THREAD_POOL_SPIN_COUNT=0); pinned to cores: no (TVM_BIND_THREADS=0)"
        "; the app's pool is not in use: RPS_THREAD_POOL=tvm")
