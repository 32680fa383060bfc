"""Qt-free core of Relax Pipeline Studio: pass catalogue, pipeline documents, engine, graphs, diffs, export.

Nothing in this package imports PySide6, ``app`` or ``widgets``; modules whose names end in ``_tvm``
(and the engine worker) import TVM and run only inside the engine process.
"""
