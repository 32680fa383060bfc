"""Debugging a pipeline that breaks the model (issue 21), TVM-free half.

* :mod:`pipeline_model.debugging.bisect`: planning a bisection over step positions (with skips, as
  ``git bisect skip``), the leave-one-out fallback order, and the report (:class:`BisectReport`).
* :mod:`pipeline_model.debugging.reproducer`: the reproducer folder (``repro.py``, ``README.md``,
  ``module.py``, ``.npz`` files) written from texts.

The engine half is :mod:`pipeline_model.engine.handlers_debug` (commands ``bisect`` ...).
"""
