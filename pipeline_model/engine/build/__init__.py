"""What the engine's build commands are made of (engine side, imports TVM inside functions).

:mod:`.devices` (targets, local devices), :mod:`.inputs` (the arguments of a request, prepared once),
:mod:`.measure` (build, run, time, profile every call), :mod:`.reference` (the numerical checks, the
original framework), :mod:`.profile` (profiles kept per snapshot, :func:`.profile.profile_module`),
:mod:`.requests` (progress, cancellation, the module a request builds), :mod:`.errors`, :mod:`.deploy`
(the ``deploy.py`` of ``export_library``). The shared rules
(which function runs, the arguments, the check) live in :mod:`pipeline_model.scriptlib`, whose code
exported scripts contain. The commands themselves are in ``engine/handlers_*.py``.
"""
