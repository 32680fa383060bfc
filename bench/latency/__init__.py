"""``bench/bench_latency.py`` in parts: models (:mod:`.models`, :mod:`.archs`), model files (:mod:`.exporting`),
the app's columns through the engine (:mod:`.appside`, :mod:`.docs`, :mod:`.tuned`), the systems timed in the
bench process (:mod:`.systems`), interleaved timing (:mod:`.timing`), the phases (:mod:`.runner`), the table
(:mod:`.report`) and the command line (:mod:`.cli`)."""
