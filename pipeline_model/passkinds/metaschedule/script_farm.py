"""Measuring on a device farm: every device an RPC tracker has for a key at once — the code exported scripts
contain and the engine calls (TVM-free at import; copied verbatim like :mod:`.script_measure`'s helpers, see
:data:`FARM_HELPERS`, which also carries :mod:`pipeline_model.scriptlib.rpc`'s tracker client).

* :func:`farm_measure_fn`: what a measuring worker process runs for one candidate: ask the tracker for a device
  of the key, upload the built candidate, time it there (MetaSchedule's own ``rpc_runner`` steps), and say which
  device (``host:port``) served and whether a failure was the device's (connection, upload) or the candidate's;
* :func:`farm_runner`: a MetaSchedule runner measuring a round's candidates on as many devices as the tracker
  has free for the key (re-queried every round); a candidate whose device dropped out is measured again on
  another one (at most twice) instead of being recorded as a failure. ``device_stats`` counts
  per device what was measured, failed and re-queued; ``report`` (scripts: ``print``) gets a line per round.
"""

from pipeline_model.scriptlib.rpc import tracker_call, tracker_devices, tracker_request_fn  # scripts: FARM_HELPERS


def farm_measure_fn():
    """The function a measuring worker process runs for one candidate (a closure: shipped to the workers by
    value). It returns ``(kind, device, payload)``: ``("ok", "host:port", [seconds, ...])``, or a failure
    ``("device", ...)`` (the tracker, the connection or the upload failed: measure it elsewhere) or
    ``("candidate", ...)`` (it failed on a working device) with the message as payload."""
    request = tracker_request_fn()

    def rps_farm_measure(host, port, key, session_timeout, evaluator_config, artifact_path, device_type, args_info):
        import os.path

        from tvm.s_tir.meta_schedule.runner import rpc_runner

        device, stage = "", "request"
        try:
            session, device = request(host, port, key, session_timeout)
            stage = "upload"
            remote_path = os.path.basename(artifact_path)
            module = rpc_runner.default_upload_module(session, artifact_path, remote_path)
            stage = "run"
            dev = session.device(device_type, 0)
            args = rpc_runner.default_alloc_argument(session, dev, args_info, 1)
            costs = rpc_runner.default_run_evaluator(session, module, dev, evaluator_config, args)
            try:
                rpc_runner.default_cleanup(session, remote_path)
            except Exception:  # noqa: BLE001 - measured; a failed clean-up is the server's business
                pass
            return "ok", device, [float(c) for c in costs]
        except Exception as exc:  # noqa: BLE001 - classified below
            device = device or getattr(exc, "device", "")
            text = f"{type(exc).__name__}: {exc}"
            lost = any(word in text.lower() for word in ("connection", "socket", "broken pipe", "closed", "eof"))
            kind = "device" if stage != "run" or lost else "candidate"
            return kind, device, f"RPC {stage} on {device or host + ':' + str(port)}: {text}"

    return rps_farm_measure


def farm_runner(options, should_stop=None, report=None, retries=2):
    """A MetaSchedule runner (a ``PyRunner``) measuring on the device farm of ``options`` (the tracker
    ``rpc_host``:``rpc_port``, device key ``rpc_key``, ``rpc_session_timeout_s`` per candidate, the
    ``EvaluatorConfig`` of ``number``/``repeat``/``min_repeat_ms``). Every round asks the tracker how many
    devices of the key are free and keeps that many candidates in flight (one worker process each, kept
    across rounds); a candidate whose device failed is re-queued for another device (at most ``retries``
    times).
    ``device_stats``: ``{"host:port": {"measured", "failed", "requeued"}}``; ``report(line)`` gets one line
    per round; once ``should_stop()`` turns true, the round's unmeasured candidates end as stopped.
    ``close()`` ends the worker processes."""
    import concurrent.futures
    import threading

    from tvm.ir.utils import derived_object
    from tvm.s_tir import meta_schedule as ms
    from tvm.s_tir.meta_schedule.runner import PyRunner, PyRunnerFuture, RunnerResult
    from tvm.support.popen_pool import PopenPoolExecutor

    host, port, key = str(options["rpc_host"]), int(options["rpc_port"]), str(options["rpc_key"])
    timeout = float(options["rpc_session_timeout_s"])
    evaluator = ms.runner.EvaluatorConfig(number=int(options["number"]), repeat=int(options["repeat"]),
                                          min_repeat_ms=int(options["min_repeat_ms"]), enable_cpu_cache_flush=False)

    @derived_object
    class FarmFuture(PyRunnerFuture):
        def __init__(self, future):
            super().__init__()
            self.future = future

        def done(self):
            return self.future.done()

        def result(self):
            kind, payload = self.future.result()
            return RunnerResult(payload, None) if kind == "ok" else RunnerResult(None, payload)

    @derived_object
    class FarmRunner(PyRunner):
        def __init__(self):
            super().__init__()
            self.measure = farm_measure_fn()
            self.should_stop = should_stop or (lambda: False)
            self.retries, self.timeout = int(retries), timeout
            self.device_stats = {}
            self.lock = threading.Lock()
            self.pool, self.pool_size, self.rounds = None, 0, 0

        def close(self):
            if self.pool is not None:
                self.pool.shutdown(wait=False)
                self.pool = None

        def workers(self):
            """Free devices of the key now (at least 1: a busy farm still serves the round, in turn)."""
            try:
                return max(1, int(tracker_devices(host, port).get(key, {}).get("free", 0)))
            except OSError:
                return 1  # the tracker is gone for now: the candidates say so one by one

        def count(self, device, what):
            with self.lock:
                stats = self.device_stats.setdefault(device or f"{host}:{port}",
                                                     {"measured": 0, "failed": 0, "requeued": 0})
                stats[what] += 1

        def run(self, runner_inputs):
            jobs = [(str(inp.artifact_path), str(inp.device_type), tuple(a.as_json() for a in inp.args_info))
                    for inp in runner_inputs]
            if not jobs:
                return []
            futures = [concurrent.futures.Future() for _ in jobs]
            workers = self.workers()
            if self.pool is None or self.pool_size < workers:
                self.close()
                self.pool, self.pool_size = PopenPoolExecutor(max_workers=workers, timeout=timeout), workers
            threading.Thread(target=farm_round, args=(self, jobs, futures, workers), daemon=True).start()
            return [FarmFuture(f) for f in futures]

        def submit(self, job):
            """Measure one job (artifact, device type, argument info) in a worker process."""
            return self.pool.submit(self.measure, host, port, key, timeout, evaluator, *job)

        def end_round(self, count, workers):
            self.rounds += 1
            if report is not None:
                per = ", ".join(f"{d} {s['measured']} ok/{s['failed']} failed/{s['requeued']} re-queued"
                                for d, s in sorted(self.device_stats.items()))
                report(f"RPC farm round {self.rounds}: {count} candidates on {workers} device(s) "
                       f"({key} at {host}:{port}); so far {per}")

    return FarmRunner()


def farm_round(farm, jobs, futures, workers):
    """One round of a :func:`farm_runner` runner ``farm`` (on a thread of its own): the ``jobs`` measured with at
    most ``workers`` in flight, each one's ``(kind, payload)`` set on its future in ``futures``; a job whose
    device failed is re-queued (``farm.retries`` times); once ``farm.should_stop()``, the jobs left end as
    stopped."""
    import collections
    import concurrent.futures

    pending, running = collections.deque((i, 0) for i in range(len(jobs))), {}
    try:
        while pending or running:
            while pending and len(running) < workers and not farm.should_stop():
                i, tries = pending.popleft()
                running[farm.submit(jobs[i])] = (i, tries)
            if not running:
                break  # stopped: what is left ends below
            done, _ = concurrent.futures.wait(list(running), return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                i, tries = running.pop(fut)
                try:
                    kind, device, payload = fut.result()
                except TimeoutError:
                    kind, device, payload = "candidate", "", f"RPCRunner: Timeout, killed after {farm.timeout} seconds"
                except Exception as exc:  # noqa: BLE001 - the worker process died
                    kind, device, payload = "device", "", f"RPC measuring worker: {exc}"
                if kind == "device" and tries < farm.retries:
                    farm.count(device, "requeued")
                    pending.append((i, tries + 1))
                    continue
                farm.count(device, "measured" if kind == "ok" else "failed")
                futures[i].set_result((kind, payload))
    except Exception as exc:  # noqa: BLE001 - never leave MetaSchedule waiting on a future
        pending.extend((i, 0) for i, _ in running.values())
        for i, _ in pending:
            futures[i].set_result(("candidate", f"RPC farm: {exc}"))
        return
    for i, _ in pending:
        futures[i].set_result(("candidate", "RPC farm: stopped before measuring"))
    farm.end_round(len(jobs), workers)


#: The helpers above, in the order an exported script defines them (after :mod:`.script_measure`'s).
FARM_HELPERS = (tracker_call, tracker_devices, tracker_request_fn, farm_measure_fn, farm_runner, farm_round)
