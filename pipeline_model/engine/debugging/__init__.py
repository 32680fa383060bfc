"""Engine-side helpers of the debugging commands (:mod:`pipeline_model.engine.handlers_debug`)."""
