"""Debugging a pipeline that breaks the model (issue 21), TVM-free half (``docs/DEBUGGING.md``).

* :mod:`pipeline_model.debugging.bisect`: planning a bisection over step positions (with skips, as
  ``git bisect skip``), the leave-one-out fallback order, the report (:class:`~.bisect.BisectReport`) and
  :func:`~.bisect.request_bisect` (the request that survives modules crashing the engine).
* :mod:`pipeline_model.debugging.reproducer`: the reproducer folder (``repro.py``, ``README.md``,
  ``repro.json``, data files) written from texts.
* :mod:`pipeline_model.debugging.reduce`: the greedy delta-debugging loop of ``main.py reduce``.

The engine half is :mod:`pipeline_model.engine.handlers_debug` with :mod:`pipeline_model.engine.debugging`.
"""
