"""Adding an engine command is one file: a module with ``@handler`` functions, found at engine start.

This test module is itself such a file: the engine imports it by name (``RPS_ENGINE_HANDLER_MODULES``, the
way a plug-in outside ``pipeline_model/engine/handlers_*.py`` is loaded) and answers its command.
"""

from __future__ import annotations

import os

from pipeline_model.engine.handler_registry import handler


@handler("test_echo_upper")
def handle_echo_upper(args: dict, ctx: object) -> dict:
    """Echo ``text`` upper-cased, with the engine's pid (proves it ran in the engine process)."""
    return {"text": str(args.get("text", "")).upper(), "pid": os.getpid()}


def test_builtin_handler_modules_are_discovered():
    from pipeline_model.engine import handler_registry

    names = handler_registry.discover_handler_modules()
    assert {"pipeline_model.engine.handlers_build", "pipeline_model.engine.handlers_graph",
            "pipeline_model.engine.handlers_env",
            "pipeline_model.engine.handlers_compare", "pipeline_model.engine.handlers_profile",
            "pipeline_model.engine.handlers_devices"} <= set(names)


def test_command_from_a_new_module_answers_in_the_engine():
    from pipeline_model.engine.client import EngineClient, EngineError

    client = EngineClient(env={"RPS_ENGINE_HANDLER_MODULES": "tests.test_engine_commands"})
    try:
        reply = client.request("test_echo_upper", {"text": "relax"})
        assert reply["text"] == "RELAX"
        assert reply["pid"] == client.pid and reply["pid"] != os.getpid()
        try:
            client.request("test_no_such_command", {})
        except EngineError as exc:
            assert "test_no_such_command" in str(exc)
        else:  # pragma: no cover - the assertion below explains
            raise AssertionError("an unknown command must fail naming it")
    finally:
        client.close()


def test_handler_plug_ins_follow_the_registry_rule(monkeypatch):
    """Plug-in handler modules are read like every registry's (commas; ``;`` for older files), after the
    built-in ones, and one that cannot be imported is recorded by name and left out (the engine starts)."""
    from pipeline_model import plugins
    from pipeline_model.engine import handler_registry

    monkeypatch.setenv(handler_registry.ENV_HANDLER_MODULES, "tests.test_engine_commands, tests.no_such_handlers;x.y")
    names = handler_registry.handler_modules()
    assert names[:len(handler_registry.discover_handler_modules())] == handler_registry.discover_handler_modules()
    assert names[-3:] == ["tests.test_engine_commands", "tests.no_such_handlers", "x.y"]
    monkeypatch.setattr(handler_registry.COMMANDS, "_loaded", False)
    try:
        handler_registry.load_handlers()
        failed = {f.name: f for f in plugins.failures([plugins.GROUP_ENGINE_COMMANDS])}
        assert set(failed) == {"tests.no_such_handlers", "x.y"}
        assert failed["x.y"].dist == "RPS_ENGINE_HANDLER_MODULES" and "ModuleNotFoundError" in failed["x.y"].error
        assert "env" in handler_registry.HANDLERS  # the built-in commands are there
    finally:
        plugins.forget_failures()
    monkeypatch.setattr(handler_registry.COMMANDS, "_loaded", False)
    monkeypatch.setenv(handler_registry.ENV_HANDLER_MODULES, "tests.test_engine_commands")
    assert handler_registry.load_handlers()[-1] == "tests.test_engine_commands"
    assert handler_registry.HANDLERS["test_echo_upper"].__name__ == "handle_echo_upper"
    assert "env" in handler_registry.HANDLERS and "test_echo_upper" in list(handler_registry.HANDLERS)
