"""Which vLLM and SGLang are installed, from package metadata only: never
imports an engine (vLLM takes ~10 s to import and may need a driver).

In this Python the ``*.dist-info`` / ``*.egg-info`` folders on ``sys.path``
are read directly, the way ``importlib.metadata`` finds them (first match in
path order), because importing ``importlib.metadata`` alone costs ~30 ms of
explain's start-up. For another Python (``--vllm-python PATH``) a tiny
metadata-only script runs in it, with a timeout.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

from attn_select.selector.engines import SGLANG, VLLM
from attn_select.selector.errors import UserError
from attn_select.selector.host import NEUTRAL_CWD
from attn_select.selector.installed import (EngineWarning, InstalledEngine, deployments_by_engine, metadata_version,
                                            version_warning)

PROBE_TIMEOUT_S = 30

# Runs in the other Python: standard library only, imports no package.
_METADATA_PROBE = r"""
import json, sys
import importlib.metadata as md
out = {"python": sys.version.split()[0], "executable": sys.executable, "packages": {}}
for name in sys.argv[1:]:
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        out["packages"][name] = None
        continue
    out["packages"][name] = {"version": dist.version, "location": str(dist.locate_file(""))}
print("ATTN_SELECT_PROBE " + json.dumps(out))
"""


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def installed_here(project: str) -> tuple[str, str] | None:
    """(version, folder holding the metadata) of ``project`` in this Python,
    or None. A dist-info with only its METADATA file counts, as it does
    for importlib.metadata."""
    want = _normal(project)
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            stem, dot, suffix = name.rpartition(".")
            if not dot or suffix.lower() not in ("dist-info", "egg-info"):
                continue
            if _normal(stem.split("-", 1)[0]) != want:
                continue
            version = _read_version(os.path.join(folder, name), stem)
            if version is not None:
                return version, folder
    return None


def _read_version(path: str, stem: str) -> str | None:
    for meta in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(path, meta), encoding="utf-8", errors="replace") as f:
                found = metadata_version(f.read(65536))
        except OSError:
            continue
        if found is not None:
            return found
    if os.path.isfile(path):  # an old-style egg-info file is the metadata itself
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                return metadata_version(f.read(65536))
        except OSError:
            return None
    # no readable metadata: the folder name's version, as pip names it
    return stem.split("-", 1)[1] if "-" in stem else None


def probe_python(python: str, projects: tuple[str, ...], flag: str, timeout: float | None = None) -> dict:
    """Run the metadata probe in ``python``; ``{"python", "executable",
    "packages": {name: {"version", "location"} | None}}``. Anything that is
    not a working Python is a one-line user error naming ``flag``."""
    timeout = PROBE_TIMEOUT_S if timeout is None else timeout
    if not os.path.exists(python):
        raise UserError(f"{flag} {python}: no such file; give the path of a Python interpreter, "
                        "e.g. /path/to/venv/bin/python")
    if os.path.isdir(python):
        raise UserError(f"{flag} {python} is a folder; give its Python interpreter, e.g. {python.rstrip('/')}/bin/python")
    try:
        proc = subprocess.run([python, "-c", _METADATA_PROBE, *projects], capture_output=True, text=True,
                              timeout=timeout, stdin=subprocess.DEVNULL, cwd=NEUTRAL_CWD)
    except subprocess.TimeoutExpired:
        raise UserError(f"{flag} {python} did not answer a package-metadata query within {timeout:g} s; "
                        "is it a Python interpreter?") from None
    except PermissionError:
        raise UserError(f"{flag} {python} is not executable; give the path of a Python interpreter") from None
    except OSError as exc:
        raise UserError(f"{flag} {python} is not a Python interpreter ({exc.strerror or exc})") from None
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("ATTN_SELECT_PROBE ")), None)
    if proc.returncode != 0 or line is None:
        why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[-1]
        raise UserError(f"{flag} {python} is not a Python 3.8+ interpreter: a package-metadata query failed "
                        f"({why[:200]})")
    try:
        return json.loads(line.removeprefix("ATTN_SELECT_PROBE "))
    except ValueError:
        raise UserError(f"{flag} {python} gave an unreadable answer to a package-metadata query") from None


def find_engine(engine: str, python: str | None = None, required: bool = False) -> InstalledEngine:
    """The installed release of ``engine`` (``vllm`` / ``sglang``): in this
    Python, or in ``python`` (``--vllm-python``). ``required``: a Python
    named by the user without the engine is a user error."""
    flag = f"--{engine}-python"
    if python is None:
        found = installed_here(engine)
        if found is None:
            return InstalledEngine(engine, None, "this Python")
        return InstalledEngine(engine, found[0], f"this Python, {found[1]}")
    answer = probe_python(python, (engine,), flag)
    pkg = answer["packages"].get(engine)
    if pkg is None:
        if required:
            raise UserError(f"{flag} {python} has no {engine} installed (Python {answer['python']}); "
                            f"install it there, or name the Python of the venv that has it")
        return InstalledEngine(engine, None, f"{flag} {python}")
    return InstalledEngine(engine, pkg["version"], f"{flag} {python}")


def engine_warnings(engines: tuple[str, ...], vllm_python: str | None = None, sglang_python: str | None = None,
                    affects: dict[str, tuple[str, ...]] | None = None,
                    own_code: str | None = None, sglang_own_code: str | None = None) -> tuple[EngineWarning, ...]:
    """The version warnings for the engines whose answers a report shows,
    then the removed and unread environment variables (vLLM only).
    ``own_code`` / ``sglang_own_code`` name the option that runs the
    installed vLLM's / SGLang's own code."""
    from attn_select.selector.engine_env import removed_var_warnings, unread_selection_vars

    affects = affects or {}
    out: list[EngineWarning] = []
    pythons = {VLLM: vllm_python, SGLANG: sglang_python}
    for engine in engines:
        found = find_engine(engine, pythons[engine], required=pythons[engine] is not None)
        w = version_warning(found, affects.get(engine, ()), own_code if engine == VLLM else sglang_own_code)
        if w is not None:
            out.append(w)
    for engine, python in pythons.items():
        if engine not in engines and python is not None:
            # no answer of that engine is shown, but a Python named by the user is still checked: a
            # typo there must not pass silently (bad input: one line, exit 2)
            find_engine(engine, python, required=True)
    if VLLM in engines:
        env = os.environ
        out += [EngineWarning("environment", VLLM, text) for text in removed_var_warnings(env)]
        out += [EngineWarning("environment", VLLM, text) for text in unread_selection_vars(env)]
    return tuple(out)


def lock_warnings(named: list[tuple[str, str]], vllm_python: str | None, sglang_python: str | None,
                  own_code: str | None = "attn-select check LOCK --vllm-python PATH") -> tuple[EngineWarning, ...]:
    """The engine warnings of lock and check for deployments given as (name,
    engine): each installed release that differs names the deployments it
    concerns."""
    affects = deployments_by_engine(named)
    shown = tuple(e for e in (VLLM, SGLANG) if affects[e]) or (VLLM,)
    return engine_warnings(shown, vllm_python, sglang_python, affects, own_code=own_code)
