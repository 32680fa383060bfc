"""The environment report: what this installation has and what is wrong with it (TVM-free).

The report combines facts gathered in the calling process without importing TVM
(:func:`local_facts`: Python, OS, CPU count, memory, installed package versions read from their
distribution metadata) with the engine's ``env`` reply (:mod:`pipeline_model.engine.handlers_env`:
TVM and tvm-ffi versions and paths, ``tvm.support.libinfo()`` build flags, devices, codegens and
pattern tables, the plug-ins as the engine loaded them) and the plug-ins as this process loaded them
(:func:`local_plugins`). :func:`find_problems` flags known problems, each with its fix; :func:`render_text`
and :func:`render_json` print it (``python main.py env [--json]``, Help ▸ Environment).
"""

from __future__ import annotations

import os
import platform
import sys
from dataclasses import asdict, dataclass, field
from typing import Any, Optional

from pipeline_model import plugins
from pipeline_model.i18n import QT_TRANSLATE_NOOP, translate, translate_marked
from pipeline_model.scriptlib.threads import BIND_ENV_VAR, SPIN_ENV_VAR, usable_cores
from pipeline_model.work_dirs import tuning_database_stats, user_tuning_database_dir

#: Severity of a problem: ``error`` (something will crash or cannot work) or ``warning``.
ERROR, WARNING = "error", "warning"

#: Distributions whose presence and version the report lists (name -> what it is for; translated where shown).
PACKAGES: dict[str, str] = {
    "apache-tvm": QT_TRANSLATE_NOOP("EnvReport", "the compiler (engine process)"),
    "apache-tvm-ffi": QT_TRANSLATE_NOOP("EnvReport", "TVM's FFI (pinned: 0.1.14.post1)"),
    "numpy": QT_TRANSLATE_NOOP("EnvReport", "arrays"),
    "psutil": QT_TRANSLATE_NOOP("EnvReport", "needed by MetaSchedule tuning"),
    "xgboost": QT_TRANSLATE_NOOP("EnvReport", "MetaSchedule's default cost model"),
    "cloudpickle": QT_TRANSLATE_NOOP("EnvReport", "MetaSchedule workers"),
    "tornado": QT_TRANSLATE_NOOP("EnvReport", "the RPC tracker (remote devices)"),
    "torch": QT_TRANSLATE_NOOP("EnvReport", "PyTorch importer"),
    "onnx": QT_TRANSLATE_NOOP("EnvReport", "ONNX importer"),
    "onnxruntime": QT_TRANSLATE_NOOP("EnvReport", "ONNX Runtime comparison"),
    "transformers": QT_TRANSLATE_NOOP("EnvReport", "Hugging Face models"),
    "PySide6": QT_TRANSLATE_NOOP("EnvReport", "the desktop app"),
}

#: What each plug-in group adds, as the report names it (translated where shown).
PLUGIN_GROUP_TITLES: dict[str, str] = {
    plugins.GROUP_PASS_KINDS: QT_TRANSLATE_NOOP("EnvReport", "pass kind"),
    plugins.GROUP_MODEL_FORMATS: QT_TRANSLATE_NOOP("EnvReport", "model format"),
    plugins.GROUP_DLIGHT_RULES: QT_TRANSLATE_NOOP("EnvReport", "DLight rule"),
    plugins.GROUP_ENGINE_COMMANDS: QT_TRANSLATE_NOOP("EnvReport", "engine command"),
}

#: Other distribution names of the same package (checked when the main name is absent).
ALIASES: dict[str, tuple[str, ...]] = {"PySide6": ("PySide6_Essentials", "PySide6-Essentials"),
                                       "xgboost": ("xgboost-cpu",)}

#: The tvm-ffi version known to work (see docs and the engine's refusal message).
FFI_PIN = "0.1.14.post1"


@dataclass
class Problem:
    """One problem found: ``severity`` (``error``/``warning``), what is wrong and how to fix it."""

    severity: str
    message: str
    fix: str = ""

    def to_json(self) -> dict[str, str]:
        """The problem as a JSON object."""
        return asdict(self)


@dataclass
class EnvReport:
    """Everything the report shows. ``engine`` is the engine's ``env`` reply (``None`` when the engine
    could not start; ``engine_error`` then says why)."""

    local: dict[str, Any] = field(default_factory=dict)
    engine: Optional[dict[str, Any]] = None
    engine_error: str = ""
    problems: list[Problem] = field(default_factory=list)

    @property
    def has_errors(self) -> bool:
        """True when at least one problem is an error."""
        return any(p.severity == ERROR for p in self.problems)

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON object (``main.py env --json``)."""
        return {
            "local": self.local,
            "engine": self.engine,
            "engine_error": self.engine_error or None,
            "problems": [p.to_json() for p in self.problems],
            "ok": not self.has_errors,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "EnvReport":
        """Inverse of :meth:`to_json`."""
        return cls(
            local=dict(data.get("local") or {}),
            engine=data.get("engine"),
            engine_error=str(data.get("engine_error") or ""),
            problems=[Problem(**p) for p in data.get("problems") or []],
        )


def _package_version(name: str) -> Optional[str]:
    from importlib import metadata

    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _memory_bytes() -> Optional[int]:
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        if pages > 0 and size > 0:
            return int(pages) * int(size)
    except (AttributeError, ValueError, OSError):
        pass
    try:
        import psutil  # type: ignore[import-untyped]

        return int(psutil.virtual_memory().total)
    except Exception:  # noqa: BLE001 - memory is informative only
        return None


def local_facts() -> dict[str, Any]:
    """Python, OS, CPU count, memory and installed package versions, without importing any of them."""
    packages = {}
    for name, purpose in PACKAGES.items():
        version = _package_version(name)
        for alias in ALIASES.get(name, ()):
            version = version or _package_version(alias)
        packages[name] = {"version": version, "purpose": purpose}
    return {
        "python": sys.version.split()[0],
        "python_executable": sys.executable,
        "os": f"{platform.system()} {platform.release()}",
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable_cores(),
        "memory_bytes": _memory_bytes(),
        "packages": packages,
        "tuning_database": tuning_database_stats(user_tuning_database_dir()),
        "plugins": local_plugins(),
    }


def local_plugins() -> dict[str, Any]:
    """The plug-ins as this process loads them (pass kinds and model formats; a failure is named), with their
    packages and versions (:func:`pipeline_model.plugins.report`)."""
    from pipeline_model.importers.registry import FORMATS
    from pipeline_model.passkinds.registry import KINDS

    KINDS.load()
    FORMATS.load()
    return plugins.report()


def all_plugins(local: dict[str, Any], engine: Optional[dict[str, Any]]) -> dict[str, Any]:
    """The plug-ins of both processes (this one's and the engine's ``env`` reply), each once."""
    return plugins.merge_reports(local.get("plugins"), (engine or {}).get("plugins"))


def _titles() -> dict[str, str]:
    return {group: translate_marked("EnvReport", title) for group, title in PLUGIN_GROUP_TITLES.items()}


def plugin_lines(rep: dict[str, Any]) -> list[str]:
    """One line per plug-in of a (merged) report, the groups' names translated."""
    return plugins.plugin_lines(rep, _titles())


def plugin_failure_lines(rep: dict[str, Any]) -> list[str]:
    """One line per plug-in that could not be loaded, the groups' names translated."""
    return plugins.failure_lines(rep, _titles())


def _ffi_problem(version: str) -> Optional[str]:
    from pipeline_model.engine.worker import ffi_version_problem  # stdlib-only module: no TVM import

    return ffi_version_problem(version)


def find_problems(local: dict[str, Any], engine: Optional[dict[str, Any]], engine_error: str = "") -> list[Problem]:
    """Known problems of this installation, each with its fix (errors first)."""
    problems: list[Problem] = []
    packages = local.get("packages") or {}

    def version_of(name: str) -> Optional[str]:
        entry = packages.get(name) or {}
        return entry.get("version")

    if engine_error:
        fix = ""
        if FFI_PIN in engine_error:
            fix = f"pip install 'apache-tvm-ffi=={FFI_PIN}'"
        elif version_of("apache-tvm") is None:
            fix = "pip install -r requirements.txt (apache-tvm==0.27.0.post1)"
        problems.append(Problem(ERROR, translate("EnvReport", "the engine could not start: {0}").format(engine_error), fix))
    ffi_versions = {v for v in (version_of("apache-tvm-ffi"), (engine or {}).get("tvm_ffi", {}).get("version")) if v}
    for version in sorted(ffi_versions):
        message = _ffi_problem(str(version))
        if message and not (engine_error and str(version) in engine_error):
            problems.append(Problem(ERROR, message, f"pip install 'apache-tvm-ffi=={FFI_PIN}'"))
    if version_of("apache-tvm") is None and not (engine or {}).get("tvm"):
        problems.append(Problem(ERROR, translate("EnvReport", "apache-tvm is not installed: nothing can run"),
                                "pip install 'apache-tvm==0.27.0.post1' 'apache-tvm-ffi==0.1.14.post1'"))
    if version_of("psutil") is None:
        problems.append(Problem(WARNING, translate("EnvReport", "psutil is missing: MetaSchedule tuning refuses to start without it"),
                                "pip install psutil"))
    if version_of("xgboost") is None:
        problems.append(Problem(WARNING, translate("EnvReport", "xgboost is missing: MetaSchedule's default cost model (xgb) imports it"),
                                "pip install xgboost"))
    if version_of("cloudpickle") is None:
        problems.append(Problem(WARNING, translate("EnvReport", "cloudpickle is missing: MetaSchedule's workers need it"),
                                "pip install cloudpickle"))
    for line in plugin_failure_lines(all_plugins(local, engine)):
        problems.append(Problem(WARNING, translate("EnvReport", "a plug-in could not be loaded (the app runs "
                                                                "without it): {0}").format(line),
                                translate("EnvReport", "reinstall or uninstall its package")))
    if engine:
        libinfo = engine.get("libinfo") or {}
        if str(libinfo.get("USE_LLVM", "")).upper() in ("OFF", "") and libinfo:
            problems.append(Problem(ERROR, translate("EnvReport", "this TVM build has no LLVM: nothing can be compiled for the CPU"),
                                    translate("EnvReport", "install the apache-tvm wheel from PyPI (built with LLVM)")))
        threads = engine.get("runtime_threads") or {}
        usable = int(local.get("usable_cores") or local.get("cpu_count") or 0)
        if threads.get("count") and usable and int(threads["count"]) < usable:
            problems.append(Problem(
                WARNING,
                translate("EnvReport", "compiled models run on {0} of the {1} usable cores ({2}): latency figures "
                          "will be slower than the machine can do").format(threads["count"], usable, threads.get("source", "?")),
                translate("EnvReport", "unset {0} (the app then uses every usable core)").format(threads.get("source"))
                if threads.get("source") in ("TVM_NUM_THREADS", "OMP_NUM_THREADS") else ""))
        lacking = [name for name, item in sorted((engine.get("pattern_tables") or {}).items())
                   if item.get("patterns") and not item.get("codegen")]
        if lacking:
            problems.append(Problem(
                WARNING,
                translate("EnvReport", "pattern tables without their codegen (relax.ext.<name>) in this TVM build: {0}; "
                          "FuseOpsByPattern with annotate_codegen=true and RunCodegen will fail for them").format(
                    ", ".join(lacking)),
                translate("EnvReport", "keep annotate_codegen off for these tables (fusion into composite functions still "
                          "works), or use a TVM built with that library's support")))
    problems.sort(key=lambda p: 0 if p.severity == ERROR else 1)
    return problems


def make_report(local: dict[str, Any], engine: Optional[dict[str, Any]], engine_error: str = "") -> EnvReport:
    """A report with its problems found."""
    return EnvReport(local=local, engine=engine, engine_error=engine_error,
                     problems=find_problems(local, engine, engine_error))


def collect(client: Any = None) -> EnvReport:
    """Gather the whole report: local facts plus the engine's ``env`` reply (asked through ``client``, an
    :class:`~pipeline_model.engine.client.EngineClient`; a fresh engine is started and closed when ``None``)."""
    from pipeline_model.engine.client import EngineClient, EngineError

    own = client is None
    if client is None:
        client = EngineClient()
    engine: Optional[dict[str, Any]] = None
    error = ""
    try:
        engine = client.request("env", {})
    except EngineError as exc:
        error = exc.message
    finally:
        if own:
            client.close()
    return make_report(local_facts(), engine, error)


def _size(n: Optional[int]) -> str:
    if not n:
        return "unknown"
    return f"{n / 1024 ** 3:.1f} GiB"


def render_text(report: EnvReport) -> str:
    """The report as plain text: problems first, then one section per topic."""
    out: list[str] = []
    if report.problems:
        out.append(translate("EnvReport", "== Problems =="))
        for p in report.problems:
            out.append(f"  [{p.severity.upper()}] {p.message}")
            if p.fix:
                out.append("      " + translate("EnvReport", "fix:") + f" {p.fix}")
        out.append("")
    else:
        out.append(translate("EnvReport", "== Problems ==") + "\n  " + translate("EnvReport", "none found") + "\n")
    loc = report.local
    out.append(translate("EnvReport", "== System =="))
    out.append(f"  Python      {loc.get('python')} ({loc.get('python_executable')})")
    out.append(f"  OS          {loc.get('platform') or loc.get('os')}")
    usable = loc.get("usable_cores")
    shown = translate("EnvReport", ", {0} usable").format(usable) if usable and usable != loc.get("cpu_count") else ""
    out.append(f"  CPU         {loc.get('machine')}, " + translate("EnvReport", "{0} logical cores").format(loc.get("cpu_count")) + shown)
    memory = translate("EnvReport", "Memory")
    out.append(f"  {memory:<11} {_size(loc.get('memory_bytes'))}")
    out.append("")
    eng = report.engine
    out.append(translate("EnvReport", "== TVM (engine process) =="))
    if eng is None:
        out.append("  " + translate("EnvReport", "unavailable:") + " "
                   + (report.engine_error or translate("EnvReport", "the engine did not answer")))
    else:
        tvm_info, ffi_info = eng.get("tvm") or {}, eng.get("tvm_ffi") or {}
        out.append(f"  tvm         {tvm_info.get('version')} ({tvm_info.get('path')})")
        out.append(f"  tvm-ffi     {ffi_info.get('version')} ({ffi_info.get('path')})")
        if eng.get("llvm_version"):
            out.append(f"  LLVM        {eng.get('llvm_version')}")
        threads = eng.get("runtime_threads") or {}
        if threads.get("count"):
            out.append("  " + translate("EnvReport", "CPU threads {0} ({1}) for compiled code").format(threads["count"], threads.get("source", "?")))
        if eng.get("runtime_pool"):
            out.append("  " + _pool_line(eng["runtime_pool"], eng.get("thread_pool")))
        libinfo = eng.get("libinfo") or {}
        if libinfo:
            flags = [f"{k}={v}" for k, v in sorted(libinfo.items())]
            build_flags = translate("EnvReport", "build flags")
            out.append(f"  {build_flags:<11} " + ", ".join(flags[:6]))
            for i in range(6, len(flags), 6):
                out.append("              " + ", ".join(flags[i:i + 6]))
        out.append("")
        out.append(translate("EnvReport", "== Devices =="))
        for dev in eng.get("devices") or []:
            out.append(f"  {dev.get('kind')}:{dev.get('index', 0)}  {dev.get('name', '')}")
        if not eng.get("devices"):
            out.append("  " + translate("EnvReport", "none found"))
        out.append("")
        out.append(translate("EnvReport", "== Codegens (relax.ext.*) =="))
        codegens = eng.get("codegens") or {}
        yes, no = translate("EnvReport", "yes"), translate("EnvReport", "no")
        out.append("  " + (", ".join(f"{k}: {yes if v else no}" for k, v in sorted(codegens.items()))
                           or translate("EnvReport", "none")))
        out.append("")
        out.append(translate("EnvReport", "== Pattern tables =="))
        for name, item in sorted((eng.get("pattern_tables") or {}).items()):
            codegen = translate("EnvReport", "codegen available") if item.get("codegen") else translate("EnvReport", "no codegen")
            out.append(f"  {name:<10} " + translate("EnvReport", "{0} patterns").format(item.get("patterns", 0)) + f", {codegen}")
        if not eng.get("pattern_tables"):
            out.append("  " + translate("EnvReport", "none"))
    out.append("")
    out.extend(_plugin_lines(all_plugins(loc, eng)))
    out.extend(_tuning_database_lines(loc.get("tuning_database")))
    out.append(translate("EnvReport", "== Python packages =="))
    for name, item in (loc.get("packages") or {}).items():
        version = item.get("version") or translate("EnvReport", "not installed")
        purpose = translate_marked("EnvReport", str(item.get("purpose", "")))
        out.append(f"  {name:<15} {version:<16} {purpose}")
    return "\n".join(out).rstrip() + "\n"


def _pool_line(pool: dict[str, Any], thread_pool: "dict[str, Any] | None" = None) -> str:
    """Which thread pool runs the engine's parallel loops: the app's (``thread_pool``,
    :func:`pipeline_model.runtime_threads.thread_pool`), else TVM's — what its idle workers do, whether they
    are pinned to cores (:func:`pipeline_model.scriptlib.threads.pool_settings`; an unset variable is TVM's
    default) and why the app's pool is not in use."""
    if thread_pool and thread_pool.get("pool") == "app":
        return translate("EnvReport", "thread pool: the app's (idle workers spin {0} µs, then sleep; the caller "
                                      "runs the parts no worker took)").format(
            thread_pool.get("spin_us"))
    line = _tvm_pool_line(pool)
    if thread_pool and thread_pool.get("why"):
        line += translate("EnvReport", "; the app's pool is not in use: {0}").format(thread_pool["why"])
    return line


def _tvm_pool_line(pool: dict[str, Any]) -> str:
    """How TVM's own thread pool runs (:func:`_pool_line`)."""
    spin, bind = str(pool.get(SPIN_ENV_VAR) or ""), str(pool.get(BIND_ENV_VAR) or "")
    if spin == "0":
        idle = translate("EnvReport", "sleep")
    else:
        idle = translate("EnvReport", "spin {0} turns first").format(spin or "300000")
    pinned = translate("EnvReport", "no") if bind == "0" else translate("EnvReport", "yes")
    return translate("EnvReport", "thread pool: idle workers {0} ({1}={2}); pinned to cores: {3} ({4}={5})").format(
        idle, SPIN_ENV_VAR, spin or translate("EnvReport", "unset"), pinned, BIND_ENV_VAR,
        bind or translate("EnvReport", "unset"))


def _plugin_lines(rep: dict[str, Any]) -> list[str]:
    """The plug-ins (package, version, what each adds) and those that could not be loaded."""
    out = [translate("EnvReport", "== Plug-ins (entry points) ==")]
    out.extend("  " + line for line in plugin_lines(rep))
    out.extend("  " + translate("EnvReport", "NOT LOADED: {0}").format(line) for line in plugin_failure_lines(rep))
    if len(out) == 1:
        out.append("  " + translate("EnvReport", "none installed"))
    out.append("")
    return out


def _tuning_database_lines(db: Any) -> list[str]:
    """The per-user MetaSchedule database: where it is and how big (records, workloads, bytes), or that it is off."""
    out = [translate("EnvReport", "== Tuning database (per user, reused across pipelines and models) ==")]
    if not isinstance(db, dict):
        return []
    if not db.get("path"):
        out.append("  " + translate("EnvReport", "off (RPS_TUNING_DB_DIR=off)"))
    elif not db.get("exists"):
        out.append("  " + translate("EnvReport", "{0} (not created yet: nothing tuned with it)").format(db["path"]))
    else:
        out.append(f"  {db['path']}")
        out.append("  " + translate("EnvReport", "{records} records of {workloads} workloads, {size} KiB").format(
            records=db.get("records", 0), workloads=db.get("workloads", 0), size=f"{int(db.get('bytes') or 0) / 1024:.1f}"))
    out.append("")
    return out


def render_json(report: EnvReport) -> dict[str, Any]:
    """The report as a JSON-plain dict (same as :meth:`EnvReport.to_json`)."""
    return report.to_json()
