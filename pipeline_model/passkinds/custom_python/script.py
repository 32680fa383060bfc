"""Code of the ``custom_python`` kind that exported scripts contain, called by the engine too.

:func:`pick_custom_pass` picks the pass a custom step's source defines. The engine calls it
(:mod:`.compile_tvm`) and exported scripts hold its source (copied verbatim), so the two pick
the same pass. TVM is imported inside the function.
"""

import inspect


def pick_custom_pass(namespace, filename, label):
    """Pick the pass a custom step's source defines and return it as a ``tvm.transform.Pass``.

    Candidates, in order of preference: the last ``tvm.transform.Pass`` instance defined by the
    source, else the last pass class (decorated with ``@tvm.transform.module_pass`` or
    ``@relax.transform.function_pass``; instantiated without arguments), else the last plain
    function defined in the source (``IRModule -> IRModule``), wrapped with
    ``tvm.transform.module_pass(opt_level=0)``. Names starting with ``_`` are ignored.
    """
    import tvm

    instances, classes, functions = [], [], []
    for name, value in namespace.items():
        if name.startswith("_"):
            continue
        if isinstance(value, tvm.transform.Pass):
            instances.append(value)
        elif isinstance(value, type) and issubclass(value, tvm.transform.Pass):
            classes.append(value)
        elif inspect.isfunction(value) and value.__code__.co_filename == filename:
            functions.append(value)
    if instances:
        return instances[-1]
    if classes:
        return classes[-1]()
    if functions:
        func = functions[-1]
        nargs = len(inspect.signature(func).parameters)

        def _custom(mod, _ctx):
            result = func(mod) if nargs == 1 else func(mod, _ctx)
            if not isinstance(result, tvm.ir.IRModule):
                raise TypeError(f"{label}: {func.__name__}() returned {type(result).__name__}, not an IRModule")
            return result

        return tvm.transform.module_pass(_custom, opt_level=0, name=func.__name__)
    raise ValueError(
        f"{label} defines no pass: define a tvm.transform.Pass, a class decorated with "
        "@tvm.transform.module_pass, or a function taking an IRModule and returning one"
    )
