"""The code the ``example.CanonicalizeAndDCE`` step runs, and exported scripts contain (TVM imported inside)."""


def canonicalize_and_dce():  # type: ignore[no-untyped-def]
    """CanonicalizeBindings, then DeadCodeElimination, as one pass."""
    import tvm
    from tvm import relax

    return tvm.transform.Sequential([relax.transform.CanonicalizeBindings(), relax.transform.DeadCodeElimination()],
                                    name="example.CanonicalizeAndDCE")
