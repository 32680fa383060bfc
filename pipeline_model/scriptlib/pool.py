"""The app's thread pool for the parallel loops of compiled modules: a pool that never waits for a late worker.

TVM's runtime pool splits each parallel loop into one part per thread, hands part ``i`` to worker ``i`` and
waits for every part. A worker that sleeps between loops costs a wake-up per loop (30-50 µs on a VM whose
idle vCPU halts at once: MobileNetV3-small runs 35 parallel loops a run); one that spins by yielding its core
waits out another process's whole time slice on a busy machine (issue 35, docs/PERFORMANCE.md). This pool's
parts are *claimed*: the calling thread claims and runs every part no worker has taken yet, so a late or
descheduled worker costs nothing but its own part's work; idle workers spin on ``pause`` for
``RPS_POOL_SPIN_US`` (default :data:`DEFAULT_SPIN_US`) microseconds, then sleep on a futex (at once when there
are more threads than usable cores).

It replaces TVM's ``TVMBackendParallelLaunch`` for the whole process by symbol interposition: the library is
compiled from :data:`POOL_C` with the system C compiler into a private temporary folder, loaded with
``RTLD_GLOBAL`` *before* TVM's runtime library, and TVM's runtime then hands every module it loads or JIT-compiles
this pool's launcher. ``RPS_THREAD_POOL=tvm`` keeps TVM's own pool; Linux only (futexes); without a C compiler,
or once TVM is loaded, TVM's pool stays and :func:`use_app_pool` says why.

The engine (:func:`pipeline_model.runtime_threads.ensure_runtime_threads`), the bench and exported scripts
(this module's code, before ``import tvm``) share these functions. Standard library only; its code needs
``import os`` and :mod:`pipeline_model.scriptlib.threads`'s code above it (exported scripts hold both, in that
order).
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

from pipeline_model.scriptlib.threads import explicit_thread_count, usable_cores

#: ``tvm``: keep TVM's own thread pool; anything else (or unset): the app's.
POOL_ENV_VAR = "RPS_THREAD_POOL"
#: How long an idle worker of the app's pool spins before it sleeps, in microseconds (default 200).
POOL_SPIN_ENV_VAR = "RPS_POOL_SPIN_US"
#: :func:`use_app_pool`'s answer when the app's pool is in effect.
APP_POOL = "app"
#: How long an idle worker spins before it sleeps unless ``RPS_POOL_SPIN_US`` says otherwise: long enough to
#: bridge the gap between two kernels of a run, short enough to give the core back soon after a run.
DEFAULT_SPIN_US = 200

#: The pool's C source (see the module docstring). A job is published as one 64-bit word,
#: ``[job serial: 32][tasks: 16][next task: 16]``; a task is claimed by a compare-and-swap on that word, so a
#: claim made on a finished job fails, and the job's other fields cannot change while a claimed task runs.
POOL_C = r"""
#define _GNU_SOURCE
#include <dlfcn.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef struct { void* sync_handle; int32_t num_task; } TVMParallelGroupEnv;
typedef int (*FTVMParallelLambda)(int task_id, TVMParallelGroupEnv* penv, void* cdata);

#if defined(__x86_64__) || defined(__i386__)
#define CPU_RELAX() __builtin_ia32_pause()
#elif defined(__aarch64__)
#define CPU_RELAX() __asm__ __volatile__("yield")
#else
#define CPU_RELAX() do {} while (0)
#endif

static int g_threads = 1;
static long g_spin_ns;
static pthread_mutex_t g_start = PTHREAD_MUTEX_INITIALIZER;
static int g_started;
static FTVMParallelLambda g_fn;
static void* g_cdata;
static _Atomic uint64_t g_claim;
static _Atomic uint32_t g_seq;
static _Atomic int g_done;
static _Atomic int g_failed_elsewhere;
static _Atomic int g_sleepers;
static _Atomic int g_busy;
static _Atomic long g_launches;
static _Atomic long g_parallel_jobs;
static __thread int t_inside;
static __thread int t_worker;

static long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void after_fork_in_child(void) {
  g_started = 0;
  atomic_store(&g_busy, 0);
  atomic_store(&g_sleepers, 0);
  pthread_mutex_init(&g_start, NULL);
}

/* Set once, right after loading and before the first loop, by the Python side (use_app_pool). */
void rps_pool_configure(int threads, int spin_us) {
  g_threads = threads < 1 ? 1 : threads > 1024 ? 1024 : threads;
  g_spin_ns = (spin_us < 0 ? 0 : spin_us) * 1000L;
  pthread_atfork(NULL, NULL, after_fork_in_child);
}

static int available(void) {
  uint64_t w = atomic_load(&g_claim);
  return (w & 0xffff) < ((w >> 16) & 0xffff);
}

static void work(void) {
  for (;;) {
    uint64_t w = atomic_load(&g_claim);
    uint32_t tasks = (uint32_t)((w >> 16) & 0xffff), next = (uint32_t)(w & 0xffff);
    if (next >= tasks) return;
    if (!atomic_compare_exchange_weak(&g_claim, &w, w + 1)) continue;
    FTVMParallelLambda fn = g_fn;
    void* cdata = g_cdata;
    TVMParallelGroupEnv env = {NULL, (int32_t)tasks};
    t_inside = 1;
    int rc = fn((int)next, &env, cdata);
    t_inside = 0;
    if (rc != 0 && t_worker) atomic_store(&g_failed_elsewhere, 1);
    if (rc != 0 && !t_worker) atomic_store(&g_failed_elsewhere, 2);
    atomic_fetch_add(&g_done, 1);
  }
}

static void* worker(void* arg) {
  (void)arg;
  t_worker = 1;
  for (;;) {
    long start = now_ns();
    int turns = 0;
    while (!available()) {
      CPU_RELAX();
      if (++turns < 64) continue;
      turns = 0;
      if (now_ns() - start < g_spin_ns) continue;
      uint32_t seen = atomic_load(&g_seq);
      atomic_fetch_add(&g_sleepers, 1);
      if (!available()) syscall(SYS_futex, &g_seq, FUTEX_WAIT_PRIVATE, seen, NULL, NULL, 0);
      atomic_fetch_sub(&g_sleepers, 1);
      start = now_ns();
    }
    work();
  }
  return NULL;
}

static void start_workers(void) {
  pthread_mutex_lock(&g_start);
  if (!g_started) {
    for (int i = 1; i < g_threads; ++i) {
      pthread_t t;
      pthread_attr_t attr;
      pthread_attr_init(&attr);
      pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
      if (pthread_create(&t, &attr, worker, NULL) != 0) i = g_threads;
      pthread_attr_destroy(&attr);
    }
    g_started = 1;
  }
  pthread_mutex_unlock(&g_start);
}

static void raise_error(const char* message) {
  void (*set_raised)(const char*, const char*) =
      (void (*)(const char*, const char*))dlsym(RTLD_DEFAULT, "TVMFFIErrorSetRaisedFromCStr");
  if (set_raised == NULL) {
    void* ffi = dlopen("libtvm_ffi.so", RTLD_LAZY | RTLD_NOLOAD);
    if (ffi != NULL) set_raised = (void (*)(const char*, const char*))dlsym(ffi, "TVMFFIErrorSetRaisedFromCStr");
  }
  if (set_raised != NULL) set_raised("RuntimeError", message);
}

static int serial(FTVMParallelLambda fn, void* cdata) {
  TVMParallelGroupEnv env = {NULL, 1};
  return fn(0, &env, cdata);
}

int TVMBackendParallelLaunch(FTVMParallelLambda fn, void* cdata, int num_task) {
  atomic_fetch_add(&g_launches, 1);
  int tasks = num_task > 0 ? num_task : g_threads;
  if (tasks > 0xffff) tasks = 0xffff;
  int expect = 0;
  if (tasks <= 1 || t_inside || !atomic_compare_exchange_strong(&g_busy, &expect, 1)) {
    if (num_task > 1) {  /* an explicit part count: keep it, one part after the other */
      TVMParallelGroupEnv env = {NULL, num_task};
      for (int i = 0; i < num_task; ++i)
        if (fn(i, &env, cdata) != 0) return -1;
      return 0;
    }
    return serial(fn, cdata);
  }
  atomic_fetch_add(&g_parallel_jobs, 1);
  if (!g_started) start_workers();
  g_fn = fn;
  g_cdata = cdata;
  atomic_store(&g_done, 0);
  atomic_store(&g_failed_elsewhere, 0);
  uint64_t serial_no = (atomic_load(&g_claim) >> 32) + 1;
  atomic_store(&g_claim, (serial_no << 32) | ((uint64_t)tasks << 16));
  atomic_fetch_add(&g_seq, 1);
  if (atomic_load(&g_sleepers) > 0)
    syscall(SYS_futex, &g_seq, FUTEX_WAKE_PRIVATE, tasks - 1, NULL, NULL, 0);
  work();
  int turns = 0;
  while (atomic_load(&g_done) < tasks) {
    CPU_RELAX();
    if (++turns > 4096) { sched_yield(); turns = 0; }
  }
  int failed = atomic_load(&g_failed_elsewhere);
  atomic_store(&g_busy, 0);
  if (failed == 1)
    raise_error("a part of a parallel loop failed on a worker of the app's thread pool "
                "(RPS_THREAD_POOL=tvm runs TVM's pool, which reports the worker's error)");
  return failed ? -1 : 0;
}

int TVMBackendParallelBarrier(int task_id, TVMParallelGroupEnv* penv) {
  (void)task_id; (void)penv;
  fprintf(stderr, "Relax Pipeline Studio: a compiled kernel synchronizes the parts of a parallel loop "
                  "(TVMBackendParallelBarrier), which the app's thread pool cannot run; "
                  "set RPS_THREAD_POOL=tvm to use TVM's pool\n");
  abort();
}

int rps_pool_threads(void) { return g_threads; }
int rps_pool_spin_us(void) { return (int)(g_spin_ns / 1000L); }
long rps_pool_launches(void) { return atomic_load(&g_launches); }
long rps_pool_parallel_jobs(void) { return atomic_load(&g_parallel_jobs); }
"""

_loaded: list = []  # the loaded pool library (never unloaded: TVM's modules hold its launcher)


def _tvm_loaded() -> bool:
    """True when TVM's runtime library is mapped into this process already (too late to interpose)."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            return any("libtvm_runtime" in line for line in fh)
    except OSError:
        import sys

        return "tvm" in sys.modules


def _pool_shape(environ: "MutableMapping[str, str]") -> "tuple[int, int]":
    """``(threads, spin_us)`` of the pool: the thread count TVM's runtime would read (the user's
    ``TVM_NUM_THREADS`` / ``OMP_NUM_THREADS``, else every usable core: the threads helpers above) and
    ``RPS_POOL_SPIN_US`` (default :data:`DEFAULT_SPIN_US`) — 0 with more threads than usable cores, where a
    spinning worker would take a core from the thread that has work."""
    chosen = explicit_thread_count(environ)
    cores = usable_cores()
    threads = chosen[0] if chosen is not None else cores
    try:
        spin_us = int(str(environ.get(POOL_SPIN_ENV_VAR, "")).strip() or DEFAULT_SPIN_US)
    except ValueError:
        spin_us = DEFAULT_SPIN_US
    return threads, (max(0, spin_us) if threads <= cores else 0)


def _find_compiler() -> "str | None":
    """The first ``cc``, ``gcc`` or ``clang`` on ``PATH``, looking in absolute entries only: a ``.`` or empty
    entry would run a ``cc`` planted in the folder the program runs from."""
    folders = [p for p in os.environ.get("PATH", "").split(os.pathsep) if os.path.isabs(p)]
    for name in ("cc", "gcc", "clang"):
        for folder in folders:
            path = os.path.join(folder, name)
            if os.path.isfile(path) and os.access(path, os.X_OK):
                return path
    return None


def _compile_pool(folder: str) -> str:
    """Compile :data:`POOL_C` into ``folder`` (which this process made); return the library's path."""
    import subprocess

    compiler = _find_compiler()
    if compiler is None:
        raise RuntimeError("no C compiler (cc, gcc or clang) on PATH")
    source, library = os.path.join(folder, "rps_pool.c"), os.path.join(folder, "librps_pool.so")
    fd = os.open(source, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(POOL_C)
    done = subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-pthread", "-o", library, source, "-ldl"],
                          capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        lines = (done.stderr or done.stdout or "").strip().splitlines()
        raise RuntimeError(f"{os.path.basename(compiler)} failed: {lines[-1] if lines else done.returncode}")
    return library


def use_app_pool(environ: "MutableMapping[str, str]") -> str:
    """Make this process run TVM's parallel loops on the app's pool; call it before ``import tvm``.

    Returns :data:`APP_POOL` when the pool is in effect (also when an earlier call put it there), else why
    TVM's own pool runs: ``RPS_THREAD_POOL=tvm``, not Linux, TVM already loaded, no C compiler. The library is
    compiled into a private temporary folder and both files are removed once it is loaded.
    """
    import sys

    if _loaded:
        return APP_POOL
    if str(environ.get(POOL_ENV_VAR, "")).strip().lower() == "tvm":
        return f"{POOL_ENV_VAR}=tvm"
    if not sys.platform.startswith("linux"):
        return f"the app's pool runs on Linux only (this is {sys.platform})"
    if _tvm_loaded():
        return "TVM was loaded before the app's pool could be"
    import ctypes
    import tempfile

    folder = tempfile.mkdtemp(prefix="rps-pool-")
    library = ""
    try:
        library = _compile_pool(folder)
        loaded = ctypes.CDLL(library, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        threads, spin_us = _pool_shape(environ)
        loaded.rps_pool_configure(threads, spin_us)
        _loaded.append(loaded)
    except (OSError, RuntimeError, ValueError) as exc:
        return f"the app's pool could not be built ({exc})"
    except Exception as exc:  # noqa: BLE001 - subprocess.TimeoutExpired and the like: TVM's pool runs
        return f"the app's pool could not be built ({type(exc).__name__})"
    finally:
        for name in (library, os.path.join(folder, "rps_pool.c")):
            if name and os.path.isfile(name) and not os.path.islink(name):
                os.unlink(name)
        try:
            os.rmdir(folder)
        except OSError:
            pass
    return APP_POOL


def pool_counters() -> "dict[str, int]":
    """The app's pool in this process (``{}`` when it is not in effect): ``threads``, ``spin_us`` (how long an
    idle worker spins: 0 when there are more threads than usable cores), ``launches`` (every parallel loop),
    ``parallel_jobs`` (those run on more than one thread)."""
    if not _loaded:
        return {}
    import ctypes

    library = _loaded[0]
    for name in ("rps_pool_launches", "rps_pool_parallel_jobs"):
        getattr(library, name).restype = ctypes.c_long
    return {"threads": int(library.rps_pool_threads()), "spin_us": int(library.rps_pool_spin_us()),
            "launches": int(library.rps_pool_launches()),
            "parallel_jobs": int(library.rps_pool_parallel_jobs())}
