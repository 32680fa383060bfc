"""Code of the ``fuse_by_pattern`` kind that exported scripts contain, called by the engine too.

:func:`load_pattern_file` runs a user pattern file and returns its patterns. A step with
``pattern_source = "file"`` evaluates it in the engine and calls it in an exported script (its source copied
with ``inspect.getsource``), so both load the same patterns. TVM is imported inside the function.
"""


def load_pattern_file(path, base_dir):
    """Run a user pattern file and return its ``patterns`` list for ``FuseOpsByPattern``.

    ``patterns`` items are ``tvm.relax.transform.FusionPattern`` objects or ``(name, pattern)`` /
    ``(name, pattern, check)`` tuples built with ``tvm.relax.dpl``. Relative paths are relative to
    ``base_dir`` (the pipeline file's folder).
    """
    import os
    import runpy

    import tvm.relax.transform

    full = path if os.path.isabs(path) or not base_dir else os.path.join(base_dir, path)
    if not os.path.isfile(full):
        raise FileNotFoundError(f"pattern file not found: {full}")
    namespace = runpy.run_path(full, run_name="relax_patterns")
    patterns = namespace.get("patterns")
    if not isinstance(patterns, (list, tuple)) or not patterns:
        raise ValueError(f"{full}: define a non-empty list named 'patterns'")
    out = []
    for i, item in enumerate(patterns):
        if isinstance(item, tvm.relax.transform.FusionPattern):
            out.append(item)
        elif isinstance(item, tuple) and len(item) == 3 and callable(item[2]):
            out.append(tvm.relax.transform.FusionPattern(item[0], item[1], check=item[2]))
        elif isinstance(item, tuple) and 2 <= len(item) <= 5:
            out.append(tvm.relax.transform.FusionPattern(*item))
        else:
            raise ValueError(f"{full}: patterns[{i}] is not a FusionPattern or a (name, pattern[, check]) tuple")
    return out
