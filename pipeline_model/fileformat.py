"""Pipeline files: reading, writing, validation and migration of older versions.

Current format (version 3) is a flat JSON object::

    {"format": "relax-pipeline-studio.pipeline", "version": 3,
     "name": "...", "description": "...", "model": "builtin:mlp" | "path/to/model", "model_dims": {"seq": 8},
     "target": {"kind": "llvm", ...},
     "steps": [{"uid": "3f2a...", "pass": "relax.LegalizeOps", "params": {...}, "enabled": true,
                "note": "optional"}],
     "build": {...},
     "pass_context": {"opt_level": 3, "config": {"relax.FuseOps.max_depth": 1}, "disabled_pass": []}}

``pass_context`` (optional, new in version 2) holds the ``tvm.transform.PassContext`` settings every step
runs under (:mod:`pipeline_model.pass_context`). Version 1 is the same without ``pass_context``; it is
migrated by :func:`migrate_1_to_2` (steps run under the defaults, opt level 3, as version-1 builds did).
``model_dims`` (optional, new in version 3) pins symbolic dimensions of the model at load time
(:mod:`pipeline_model.importers.dims`); a version-2 file is migrated by :func:`migrate_2_to_3` unchanged.

It is described by the JSON Schema ``pipeline_model/schemas/pipeline.schema.json`` (draft 2020-12) and
validated with :mod:`jsonschema` on load.

Version 0 is what earlier builds wrote (no format name, no step uids, a target given as a string)::

    {"pipeline_version": 0, "title": "...", "model": "builtin:mlp", "target": "llvm",
     "passes": [{"name": "LegalizeOps", "args": {...}, "disabled": false}]}

A pass ``name`` without a dot is a ``tvm.relax.transform`` constructor and becomes ``relax.<name>``; a
name with a dot (``pipeline.zero``) is kept as the pass id. ``target`` is an alias (``llvm``, ``cpu``,
``cuda``) or a JSON object string. Files are brought to the current version by :data:`MIGRATIONS`
(``MIGRATIONS[n]`` turns version ``n`` into ``n + 1``) before validation.

Errors are :class:`PipelineFileError`; the message names the file, the JSON path of the bad value
(``steps[2].params``) and, where it can be found in the text, its line. Saving is atomic: the file is
written to a temporary file in the same folder, flushed to disk and renamed over the old one, so a
failure at any point leaves the previous file intact.
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import stat
import tempfile
import time
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Optional, Union

from pipeline_model.document import PipelineDocument, Step, new_uid, resolve_target
from pipeline_model.scriptlib import files

#: Format name written in every pipeline file.
FORMAT_NAME = "relax-pipeline-studio.pipeline"
#: Current (newest) format version; files are migrated up to it on load.
FORMAT_VERSION = 3
#: Where the JSON Schema of the current version lives.
SCHEMA_PATH = Path(__file__).resolve().parent / "schemas" / "pipeline.schema.json"

JsonPath = tuple[Union[str, int], ...]
PathLike = Union[str, "os.PathLike[str]"]


class PipelineFileError(Exception):
    """A pipeline file could not be read, parsed, validated or migrated.

    Attributes: ``source`` (file name or ``<string>``), ``json_path`` (e.g. ``steps[2].params``,
    empty for the whole document), ``line``/``column`` (1-based, ``None`` when unknown) and
    ``reason`` (the message without the place).
    """

    def __init__(
        self,
        source: str,
        reason: str,
        json_path: str = "",
        line: Optional[int] = None,
        column: Optional[int] = None,
    ) -> None:
        self.source = source
        self.reason = reason
        self.json_path = json_path
        self.line = line
        self.column = column
        place = source
        if line is not None:
            place += f":{line}"
            if column is not None:
                place += f":{column}"
        where = f"{json_path}: " if json_path else ""
        super().__init__(f"{place}: {where}{reason}")


class _MigrationError(Exception):
    """Raised by a migration step; carries the JSON path (in the old version's terms)."""

    def __init__(self, path: JsonPath, reason: str) -> None:
        super().__init__(reason)
        self.path = path
        self.reason = reason


# ----------------------------------------------------------------------------------------------
# JSON paths and their lines in the text


def format_json_path(path: Iterable[Union[str, int]]) -> str:
    """Format a JSON path as ``steps[2].params`` (keys that are not identifiers are quoted)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif part.isidentifier():
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part, ensure_ascii=False)}]"
    return out


_WS = " \t\n\r"


def _skip_ws(text: str, idx: int) -> int:
    while idx < len(text) and text[idx] in _WS:
        idx += 1
    return idx


def json_path_positions(text: str) -> dict[JsonPath, int]:
    """Map every JSON path in ``text`` (valid JSON) to the character offset where it starts.

    For an object member that is the offset of its key, for an array element the start of the
    value; the root is at its first character. Used to turn a JSON path into a line number.
    """
    from json.decoder import scanstring  # type: ignore[attr-defined]  # public in CPython, absent from typeshed

    decoder = json.JSONDecoder()
    positions: dict[JsonPath, int] = {}

    def scan(idx: int, path: JsonPath) -> int:
        idx = _skip_ws(text, idx)
        ch = text[idx]
        if ch == "{":
            idx = _skip_ws(text, idx + 1)
            if text[idx] == "}":
                return idx + 1
            while True:
                key_start = idx
                key, idx = scanstring(text, idx + 1)
                positions.setdefault(path + (key,), key_start)
                idx = _skip_ws(text, idx)
                idx = scan(idx + 1, path + (key,))  # skip ':'
                idx = _skip_ws(text, idx)
                if text[idx] == "}":
                    return idx + 1
                idx = _skip_ws(text, idx + 1)  # skip ','
        if ch == "[":
            idx = _skip_ws(text, idx + 1)
            if text[idx] == "]":
                return idx + 1
            i = 0
            while True:
                idx = _skip_ws(text, idx)
                positions[path + (i,)] = idx
                idx = scan(idx, path + (i,))
                idx = _skip_ws(text, idx)
                if text[idx] == "]":
                    return idx + 1
                idx += 1
                i += 1
        _, end = decoder.raw_decode(text, idx)
        return end

    start = _skip_ws(text, 0)
    positions[()] = start
    scan(start, ())
    return positions


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


def line_of_path(text: str, path: JsonPath, positions: Optional[dict[JsonPath, int]] = None) -> Optional[int]:
    """The 1-based line of the JSON path (or of its nearest existing ancestor) in ``text``."""
    try:
        positions = positions if positions is not None else json_path_positions(text)
    except Exception:  # noqa: BLE001 - text is not parseable: no line
        return None
    path = tuple(path)
    while path not in positions and path:
        path = path[:-1]
    if path not in positions:
        return None
    return _line_col(text, positions[path])[0]


# ----------------------------------------------------------------------------------------------
# Migrations


def migrate_0_to_1(data: dict[str, Any]) -> dict[str, Any]:
    """Turn a version-0 document (earlier builds) into a version-1 document.

    Version 0: ``{"pipeline_version": 0, "title"?, "description"?, "model", "target": str,
    "passes": [{"name", "args"?, "disabled"?}]}``. Steps get new uids; pass names without a dot
    become ``relax.<name>``; a string target is resolved through the target aliases.
    """
    allowed = {"pipeline_version", "title", "description", "model", "target", "passes"}
    for key in data:
        if key not in allowed:
            raise _MigrationError((key,), f"unknown key {key!r} in a version-0 pipeline file")
    model = data.get("model", "builtin:mlp")
    if not isinstance(model, str) or not model:
        raise _MigrationError(("model",), "model must be a non-empty string")
    target_spec = data.get("target", "llvm")
    try:
        target = resolve_target(target_spec)
    except ValueError as exc:
        raise _MigrationError(("target",), str(exc)) from None
    passes = data.get("passes", [])
    if not isinstance(passes, list):
        raise _MigrationError(("passes",), "passes must be a list")
    steps = []
    for i, entry in enumerate(passes):
        if not isinstance(entry, dict):
            raise _MigrationError(("passes", i), "each pass must be an object with a 'name'")
        for key in entry:
            if key not in ("name", "args", "disabled"):
                raise _MigrationError(("passes", i, key), f"unknown key {key!r} in a version-0 pass")
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            raise _MigrationError(("passes", i, "name"), "pass name must be a non-empty string")
        args = entry.get("args", {})
        if not isinstance(args, dict):
            raise _MigrationError(("passes", i, "args"), "args must be an object")
        disabled = entry.get("disabled", False)
        if not isinstance(disabled, bool):
            raise _MigrationError(("passes", i, "disabled"), "disabled must be true or false")
        steps.append(
            {
                "uid": new_uid(),
                "pass": name if "." in name else f"relax.{name}",
                "params": copy.deepcopy(args),
                "enabled": not disabled,
            }
        )
    title = data.get("title", "Untitled pipeline")
    if not isinstance(title, str):
        raise _MigrationError(("title",), "title must be a string")
    out: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": 1,
        "name": title,
        "model": model,
        "target": target,
        "steps": steps,
    }
    description = data.get("description", "")
    if not isinstance(description, str):
        raise _MigrationError(("description",), "description must be a string")
    if description:
        out["description"] = description
    return out


def migrate_1_to_2(data: dict[str, Any]) -> dict[str, Any]:
    """Turn a version-1 document into a version-2 document.

    Version 2 adds the optional ``pass_context`` object; a version-1 file has none, and its steps ran
    under ``PassContext(opt_level=3)``, which is what an absent ``pass_context`` means. A version-1 file
    that already has a ``pass_context`` key is refused (it is not a version-1 file).
    """
    if "pass_context" in data:
        raise _MigrationError(("pass_context",), "pass_context needs file format version 2")
    out = dict(data)
    out["version"] = 2
    return out


def migrate_2_to_3(data: dict[str, Any]) -> dict[str, Any]:
    """Turn a version-2 document into a version-3 document.

    Version 3 adds the optional ``model_dims`` object (the model's pinned symbolic dimensions, name -> value,
    see :mod:`pipeline_model.importers.dims`); a version-2 file has none: its model loads with the dimensions
    it declares. A version-2 file that already has ``model_dims`` is refused (it is not a version-2 file).
    """
    if "model_dims" in data:
        raise _MigrationError(("model_dims",), "model_dims needs file format version 3")
    out = dict(data)
    out["version"] = 3
    return out


#: ``MIGRATIONS[n]`` turns a version-``n`` document into a version-``n + 1`` document.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    0: migrate_0_to_1, 1: migrate_1_to_2, 2: migrate_2_to_3}


def detect_version(data: Any) -> int:
    """The format version of a parsed pipeline file; ``_MigrationError`` when it is not one."""
    if not isinstance(data, dict):
        raise _MigrationError((), f"a pipeline file must hold a JSON object, not {_json_type(data)}")
    if "format" in data:
        if data["format"] != FORMAT_NAME:
            raise _MigrationError(
                ("format",),
                f"not a Relax Pipeline Studio pipeline file (format is {data['format']!r}, "
                f"expected {FORMAT_NAME!r})",
            )
        version = data.get("version")
        if "version" not in data:
            raise _MigrationError((), "the file has no 'version'")
        if isinstance(version, bool) or not isinstance(version, int) or version < 1:
            raise _MigrationError(("version",), f"version must be a positive integer, not {version!r}")
        return version
    if "pipeline_version" in data:
        version = data["pipeline_version"]
        if version != 0 or isinstance(version, bool):
            raise _MigrationError(("pipeline_version",), f"unknown pipeline_version {version!r}")
        return 0
    raise _MigrationError((), f"not a Relax Pipeline Studio pipeline file (no 'format' key naming {FORMAT_NAME!r})")


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


# ----------------------------------------------------------------------------------------------
# Schema


@lru_cache(maxsize=1)
def _validator() -> Any:
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    return cls(schema)


def load_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the current format version."""
    return copy.deepcopy(_validator().schema)


def _schema_error(data: dict[str, Any]) -> Optional[tuple[JsonPath, str]]:
    """The first (shallowest-first by document order) schema violation of ``data``, or ``None``."""
    errors = list(_validator().iter_errors(data))
    if not errors:
        return None
    import jsonschema

    error = jsonschema.exceptions.best_match(errors)
    # best_match prefers shallow errors; a nested 'oneOf'-style context is not used in our schema.
    path = tuple(error.absolute_path)
    message = error.message
    if error.validator == "additionalProperties":
        extra = [k for k in error.instance if k not in error.schema.get("properties", {})]
        if extra:
            path = path + (extra[0],)
            message = f"unknown key {extra[0]!r}"
    elif error.validator == "required":
        message = "required key " + error.message.replace("is a required property", "is missing")
    return path, message


# ----------------------------------------------------------------------------------------------
# Loading: limits and values that cannot be saved again

#: Largest pipeline file read (bytes).
MAX_FILE_BYTES = 16 * 1024 * 1024
#: Deepest nesting of arrays/objects accepted.
MAX_DEPTH = 64
#: Most digits of an integer literal.
MAX_INT_DIGITS = 100
#: Integers must fit a signed 64-bit value (TVM and the GUI's spin boxes take no more).
INT_MIN, INT_MAX = -(2**63), 2**63 - 1

_STRING_RE = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)


class _BadValue(ValueError):
    def __init__(self, reason: str, needle: Optional[re.Pattern[str]] = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.needle = needle


def _line_of(text: str, needle: Optional[re.Pattern[str]], nth: int = 1) -> Optional[int]:
    """Line of the ``nth`` match of ``needle`` outside strings (approximate place of a bad literal)."""
    if needle is None:
        return None
    count = 0
    for match in needle.finditer(text):
        count += 1
        if count >= nth:
            return text.count("\n", 0, match.start()) + 1
    return None


def _nesting_problem(text: str) -> Optional[int]:
    """The line where nesting first goes deeper than :data:`MAX_DEPTH` (strings ignored), or ``None``."""
    depth = 0
    blanked = _STRING_RE.sub(lambda m: " " * len(m.group(0)), text)
    for match in re.finditer(r"[\[\]{}]", blanked):
        if match.group(0) in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return blanked.count("\n", 0, match.start()) + 1
        else:
            depth -= 1
    return None


def _parse_int(literal: str) -> int:
    digits = len(literal.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise _BadValue(f"an integer with {digits} digits (at most {MAX_INT_DIGITS})",
                        re.compile(r"-?\d{%d,}" % (MAX_INT_DIGITS + 1)))
    return int(literal)


def _parse_constant(name: str) -> Any:
    raise _BadValue(f"{name} is not a number JSON allows (NaN and Infinity cannot be saved)",
                    re.compile(r"(?<![\w\"])" + re.escape(name) + r"(?![\w\"])"))


def _unique_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            needle = re.compile(re.escape(json.dumps(key, ensure_ascii=False)) + r"\s*:")
            raise _BadValue(f"duplicate key {key!r} in one object", needle)
        out[key] = value
    return out


def _value_problem(value: Any, path: JsonPath = ()) -> Optional[tuple[JsonPath, str]]:
    """The first value that could not be saved again (lone surrogate, non-finite float, integer
    outside int64), as (JSON path, reason); ``None`` when all are fine."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path, "text with a lone surrogate (\\ud800-\\udfff escape); it cannot be saved as UTF-8"
        return None
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            return path, f"integer {value} does not fit 64 bits"
        return None
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            return path, "a number too large for a 64-bit float (it would be Infinity)"
        return None
    if isinstance(value, list):
        for i, item in enumerate(value):
            problem = _value_problem(item, (*path, i))
            if problem:
                return problem
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            problem = _value_problem(key, path) if isinstance(key, str) else None
            if problem:
                return path, "a key " + problem[1].removeprefix("text ")
            problem = _value_problem(item, (*path, key))
            if problem:
                return problem
    return None


def _parse_json(text: str, source: str) -> Any:
    """``json.loads`` with the app's limits; :class:`PipelineFileError` naming the place otherwise."""
    if len(text) > MAX_FILE_BYTES:
        raise PipelineFileError(source, f"the file is larger than {MAX_FILE_BYTES:,} bytes; refused")
    deep = _nesting_problem(text)
    if deep is not None:
        raise PipelineFileError(source, f"nested more than {MAX_DEPTH} levels deep", "", deep)
    try:
        data = json.loads(text, parse_int=_parse_int, parse_constant=_parse_constant,
                          object_pairs_hook=_unique_object)
    except json.JSONDecodeError as exc:
        raise PipelineFileError(source, f"not valid JSON: {exc.msg}", "", exc.lineno, exc.colno) from None
    except _BadValue as exc:
        nth = 2 if exc.reason.startswith("duplicate key") else 1
        raise PipelineFileError(source, exc.reason, "", _line_of(text, exc.needle, nth)) from None
    except (RecursionError, ValueError) as exc:
        raise PipelineFileError(source, f"not valid JSON: {exc}") from None
    problem = _value_problem(data)
    if problem is not None:
        path, reason = problem
        line = None
        try:
            line = line_of_path(text, path)
        except Exception:  # noqa: BLE001 - the place is a help, the message stands without it
            line = None
        raise PipelineFileError(source, reason, format_json_path(path), line)
    return data


def loads_pipeline(
    text: str, source: str = "<string>", known_pass_ids: Optional[set[str]] = None
) -> PipelineDocument:
    """Parse pipeline file text into a :class:`PipelineDocument`, migrating older versions.

    ``source`` names the file in error messages. When ``known_pass_ids`` is given, steps whose pass
    id is not in it load as placeholders (``Step.placeholder`` set, never run, saved unchanged).
    Raises :class:`PipelineFileError` naming ``source``, the JSON path and the line.
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    data = _parse_json(text, source)

    positions: Optional[dict[JsonPath, int]] = None

    def fail(path: JsonPath, reason: str) -> PipelineFileError:
        nonlocal positions
        if positions is None:
            try:
                positions = json_path_positions(text)
            except Exception:  # noqa: BLE001
                positions = {}
        return PipelineFileError(source, reason, format_json_path(path), line_of_path(text, path, positions))

    try:
        version = detect_version(data)
    except _MigrationError as exc:
        raise fail(exc.path, exc.reason) from None
    if version > FORMAT_VERSION:
        raise fail(
            ("version",),
            f"written by a newer version of Relax Pipeline Studio (file format version {version}; "
            f"this build reads versions up to {FORMAT_VERSION}). Update the application to open it.",
        )
    original_version = version
    while version < FORMAT_VERSION:
        try:
            data = MIGRATIONS[version](data)
        except _MigrationError as exc:
            raise fail(exc.path, f"{exc.reason} (version-{version} file)") from None
        version += 1

    problem = _schema_error(data)
    if problem is not None:
        path, reason = problem
        if original_version != FORMAT_VERSION:
            reason += f" (after migration from version {original_version})"
        raise fail(path, reason)

    seen: dict[str, int] = {}
    for i, step in enumerate(data["steps"]):
        uid = step["uid"]
        if uid in seen:
            raise fail(("steps", i, "uid"), f"duplicate step uid {uid!r} (also used by steps[{seen[uid]}])")
        seen[uid] = i

    try:
        target = resolve_target(data["target"])
    except ValueError as exc:
        raise fail(("target",), str(exc)) from None

    pass_context = copy.deepcopy(data.get("pass_context", {}))
    if pass_context:
        from pipeline_model.pass_context import PassContextError, PassContextSettings

        try:
            PassContextSettings.from_json(pass_context)
        except PassContextError as exc:
            raise fail(("pass_context",), str(exc)) from None

    steps = []
    for raw in data["steps"]:
        step = Step(
            pass_id=raw["pass"],
            params=copy.deepcopy(raw["params"]),
            enabled=raw["enabled"],
            uid=raw["uid"],
            note=raw.get("note", ""),
        )
        if known_pass_ids is not None and step.pass_id not in known_pass_ids:
            step.placeholder = f"unknown pass '{step.pass_id}'"
        steps.append(step)
    from pipeline_model.importers.dims import join_spec

    return PipelineDocument(
        model=join_spec(data["model"], dict(data.get("model_dims") or {})) if data.get("model_dims") else data["model"],
        target=target,
        steps=steps,
        name=data.get("name", "Untitled pipeline"),
        description=data.get("description", ""),
        build=copy.deepcopy(data.get("build", {})),
        path=None,
        pass_context=pass_context,
    )


def load_pipeline(path: PathLike, known_pass_ids: Optional[set[str]] = None) -> PipelineDocument:
    """Read a pipeline file (any known version) into a :class:`PipelineDocument` with ``path`` set.

    Raises :class:`PipelineFileError` naming the file, the JSON path and the line of the problem.
    """
    from pipeline_model import safe_files

    source = os.fspath(path)
    try:
        raw = safe_files.read_bytes(source, "pipeline file", MAX_FILE_BYTES)
    except safe_files.UnsafeFileError as exc:
        reason = str(exc)
        prefix = f"pipeline file {source} "
        raise PipelineFileError(source, reason[len(prefix):] if reason.startswith(prefix) else reason) from None
    except OSError as exc:
        raise PipelineFileError(source, f"cannot read the file: {exc.strerror or exc}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise PipelineFileError(
            source, f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at offset {exc.start})", "", line
        ) from None
    doc = loads_pipeline(text, source=source, known_pass_ids=known_pass_ids)
    doc.path = source
    return doc


# ----------------------------------------------------------------------------------------------
# Saving


def pipeline_to_json(doc: PipelineDocument) -> dict[str, Any]:
    """The current-format JSON object of ``doc`` (format header first). Placeholders included as-is."""
    body = doc.to_dict()
    data: dict[str, Any] = {"format": FORMAT_NAME, "version": FORMAT_VERSION}
    for key in ("name", "description", "model", "target", "pass_context", "steps", "build"):
        if key in body:
            data[key] = body.pop(key)
    data.update(body)
    return data


def _encoder() -> json.JSONEncoder:
    return json.JSONEncoder(ensure_ascii=False, indent=2, allow_nan=False)


def dumps_pipeline(doc: PipelineDocument) -> str:
    """The text of the pipeline file for ``doc`` (current format, UTF-8-ready, trailing newline).

    Raises ``ValueError`` when a parameter value is not JSON (NaN, a set, an object ...).
    """
    data = pipeline_to_json(doc)
    problem = _value_problem(data)
    if problem is not None:
        raise ValueError(f"pipeline {doc.name!r} cannot be written: {format_json_path(problem[0]) or 'document'}: "
                         f"{problem[1]}")
    try:
        return _encoder().encode(data) + "\n"
    except (TypeError, ValueError, RecursionError) as exc:
        raise ValueError(f"pipeline {doc.name!r} cannot be written as JSON: {exc}") from None


#: Suffix of the backup of the previous version kept by :func:`save_pipeline` (``p.json`` -> ``p.json.bak``).
BACKUP_SUFFIX = ".bak"
#: Suffix of the app's temporary files (``.<name>.<random>.rps-tmp`` next to the file).
TEMP_SUFFIX = ".rps-tmp"
#: Temp files of the app's naming scheme older than this are removed by the next save (seconds).
STALE_TEMP_S = 60.0


def _temp_pattern(base: str) -> re.Pattern[str]:
    """The app's own temp-file names for ``base``: ``.<base>.<8 random>.rps-tmp`` (and the older
    ``.<base>.<8 random>.tmp``), nothing else."""
    return re.compile(r"^\." + re.escape(base) + r"\.[A-Za-z0-9_]{8}(\.rps-tmp|\.tmp)$")


def clean_stale_temp_files(path: PathLike, older_than_s: float = STALE_TEMP_S) -> list[str]:
    """Remove temp files the app's own saves of ``path`` left behind (a save killed with SIGKILL),
    only those of its naming scheme and older than ``older_than_s``; returns the removed paths."""
    target = os.path.realpath(os.fspath(path))
    folder = os.path.dirname(target) or "."
    pattern = _temp_pattern(os.path.basename(target))
    removed: list[str] = []
    now = time.time()
    try:
        names = os.listdir(folder)
    except OSError:
        return removed
    for name in names:
        if not pattern.match(name):
            continue
        full = os.path.join(folder, name)
        try:
            st = os.lstat(full)
            if os.path.isfile(full) and not os.path.islink(full) and now - st.st_mtime >= older_than_s:
                os.unlink(full)
                removed.append(full)
        except OSError:
            continue
    return removed


def _keep_backup(target: str) -> None:
    """Copy the current ``target`` to ``target + BACKUP_SUFFIX`` (atomically; best effort). Only a regular file
    is copied (read without following a link or blocking on a FIFO); a ``.bak`` that is not a regular file
    (a link, a FIFO, a folder) is left alone and no backup is made."""
    from pipeline_model import safe_files

    try:
        if not stat.S_ISREG(os.lstat(target).st_mode):
            return
    except OSError:
        return
    try:
        if not stat.S_ISREG(os.lstat(target + BACKUP_SUFFIX).st_mode):
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    folder = os.path.dirname(target) or "."
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(target) + ".", suffix=TEMP_SUFFIX, dir=folder)
    os.close(fd)
    try:
        with safe_files.open_regular(target, "pipeline file") as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst)
        shutil.copystat(target, tmp, follow_symlinks=False)
        os.replace(tmp, target + BACKUP_SUFFIX)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def save_pipeline(doc: PipelineDocument, path: PathLike, backup: bool = True) -> None:
    """Write ``doc`` to ``path`` atomically and set ``doc.path``.

    The text is streamed into a temporary file in the same folder (``.<name>.<random>.rps-tmp``),
    flushed and fsynced, then renamed over ``path`` with ``os.replace``; on any error (also Ctrl+C)
    the temporary file is removed and the previous file (if any) is left untouched. An existing
    file's permission bits are kept. With ``backup`` the previous version is kept as
    ``<path>.bak``. Temp files of earlier saves that were killed outright are removed
    (:func:`clean_stale_temp_files`).
    """
    target = os.path.abspath(os.fspath(path))  # a symlink is refused below, never followed
    folder = os.path.dirname(target) or "."
    data = pipeline_to_json(doc)
    problem = _value_problem(data)
    if problem is not None:  # a ValueError before any file is touched
        raise ValueError(f"pipeline {doc.name!r} cannot be written: {format_json_path(problem[0]) or 'document'}: "
                         f"{problem[1]}")
    from pipeline_model.safe_write import check_output_file

    check_output_file(target, "pipeline file")  # a symlink (also a dangling one), device, FIFO or folder is refused
    clean_stale_temp_files(target)
    text = "".join(_encoder().iterencode(data)) + "\n"
    # the old version is kept as <path>.bak right before the new one replaces it

    def before_rename() -> None:
        check_output_file(target, "pipeline file")  # swapped for a link or a FIFO since the check?
        if backup:
            _keep_backup(target)

    files.replace_file(target, text.encode("utf-8"), before_rename, suffix=TEMP_SUFFIX)
    try:  # make the rename itself durable (best effort; not possible on every platform)
        dir_fd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError:
        pass
    doc.path = os.fspath(path)
