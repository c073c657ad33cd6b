"""What ``attn-select doctor`` finds on this machine, in the spirit of
``vllm collect-env``: the GPUs and driver, the Python that runs vLLM (this
one or ``--vllm-python``) with its engine and kernel packages, which
FlashAttention builds import there and why the others do not, FlashInfer's
JIT prerequisites, whether the trtllm paths would have their cubins, the
environment variables that change selection, and the ``--kernels`` value
explain would assume.

Nothing here imports torch, vLLM or a kernel package in this process: the
facts of the other Python come from ``backends/run/probes/environment.py``, and each
import test runs in its own subprocess with a timeout, so an extension that
crashes or hangs is a finding, not the end of doctor. No network unless
``--probe-network`` (one bounded HEAD request).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from attn_select.backends.run.probes import FOLDER as PROBES
from attn_select.cli.detect import NEUTRAL_CWD
from attn_select.selector.config import Kernels
from attn_select.selector.errors import UserError
from attn_select.selector.installed import EngineWarning

IMPORT_TIMEOUT_S = 240
COMMAND_TIMEOUT_S = 15
NETWORK_TIMEOUT_S = 5
DEFAULT_CUBINS_URL = "https://edge.urm.nvidia.com/artifactory/sw-kernelinferencelibrary-public-generic-local/"


@dataclass(frozen=True)
class Check:
    """One line of the report: a name, a value, and why or what follows."""

    name: str
    value: str
    detail: str | None = None
    ok: bool | None = None  # None: informational


@dataclass(frozen=True)
class Section:
    title: str
    checks: tuple[Check, ...]


@dataclass(frozen=True)
class DoctorReport:
    python: str  # the interpreter examined
    sections: tuple[Section, ...]
    kernels_flag: str  # the --kernels value for this node
    kernels_assumed: str  # what explain assumes with no --kernels, and why
    warnings: tuple[EngineWarning, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return True  # doctor reports; it never fails a run


# --- running things, bounded -------------------------------------------------------


def _run(argv: list[str], timeout: float = COMMAND_TIMEOUT_S) -> tuple[int | None, str, str]:
    """(exit code or None when it could not run / timed out, stdout, stderr)."""
    try:
        p = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                           cwd=NEUTRAL_CWD)
    except subprocess.TimeoutExpired:
        return None, "", f"did not finish within {timeout:g} s"
    except OSError as exc:
        return None, "", str(exc.strerror or exc)
    return p.returncode, p.stdout, p.stderr


def environment_facts(python: str) -> dict:
    """backends/run/probes/environment.py's answer from ``python``."""
    from attn_select.cli.detect import probe_python

    probe_python(python, (), "--vllm-python")  # a one-line error when it is not a Python
    rc, out, err = _run([python, str(PROBES / "environment.py")], timeout=60)
    line = next((ln for ln in out.splitlines() if ln.startswith("ATTN_SELECT_DOCTOR ")), None)
    if rc != 0 or line is None:
        why = (err.strip().splitlines() or [f"exit code {rc}"])[-1]
        raise UserError(f"{python}: the environment probe failed ({why[:200]})")
    return json.loads(line.removeprefix("ATTN_SELECT_DOCTOR "))


# (label, module imported, what must be installed for the test to make sense)
IMPORT_TESTS = (
    ("vLLM FA2", "vllm.vllm_flash_attn._vllm_fa2_C", "fa2"),
    ("vLLM FA3", "vllm.vllm_flash_attn._vllm_fa3_C", "fa3"),
    ("vLLM FA4 (CuTe DSL)", "vllm.vllm_flash_attn.cute.interface", "fa4"),
    ("vLLM FlashMLA", "vllm._flashmla_C", "flashmla"),
    ("flash-attn (FA2)", "flash_attn_2_cuda", "flash-attn"),
    ("flash_attn_interface (FA3)", "flash_attn_interface", "flash_attn_interface"),
    ("flash-attn-4 (flash_attn.cute)", "flash_attn.cute", "flash-attn-4"),
    ("FlashInfer", "flashinfer", "flashinfer"),
)

# One interpreter imports the modules one after another (torch, which they all
# need, is imported once), announcing each before and after. A module that
# kills or hangs the interpreter is the one announced last; a fresh
# interpreter goes on with the rest.
# vllm.vllm_flash_attn's package import hides why each build failed behind
# one message; its flash_attn_interface module, loaded first, keeps vLLM's
# own reason per version (FA2_UNAVAILABLE_REASON, ...).
_IMPORTS = r"""
import importlib, json, sys
VLLM_REASON = {"vllm.vllm_flash_attn._vllm_fa2_C": "FA2", "vllm.vllm_flash_attn._vllm_fa3_C": "FA3",
               "vllm.vllm_flash_attn.cute.interface": "FA4"}
for name in sys.argv[1:]:
    print("START " + name, flush=True)
    try:
        importlib.import_module(name)
        print("OK " + name, flush=True)
    except BaseException as exc:
        why = type(exc).__name__ + ": " + str(exc)
        fai = sys.modules.get("vllm.vllm_flash_attn.flash_attn_interface")
        own = getattr(fai, VLLM_REASON.get(name, "-") + "_UNAVAILABLE_REASON", None)
        if own:
            why = "vLLM: " + own
        print("ERR " + name + " " + json.dumps(why), flush=True)
"""


def import_tests(python: str, modules: list[str], timeout: float) -> dict[str, Check]:
    """Import each of ``modules`` in ``python``: ok, the error it raised, or
    how it died; each import may take ``timeout`` seconds."""
    import queue
    import threading

    results: dict[str, Check] = {}
    todo = list(modules)
    while todo:
        try:
            proc = subprocess.Popen([python, "-c", _IMPORTS, *todo], stdout=subprocess.PIPE, cwd=NEUTRAL_CWD,
                                    stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
        except OSError as exc:
            return {**results, **{m: Check(m, "not tested", str(exc), False) for m in todo}}
        lines: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout] + [lines.put(None)],
                         daemon=True).start()
        current = None
        while True:
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:  # the current import hangs
                proc.kill()
                proc.wait()
                results[current or todo[0]] = Check(current or todo[0], "does not import",
                                                    f"the import did not finish within {timeout:g} s", False)
                break
            if line is None:  # the interpreter is gone
                rc = proc.wait()
                if current is not None:
                    results[current] = Check(current, "crashes",
                                             f"the import killed the interpreter (exit code {rc})", False)
                break
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "START":
                current = rest
            elif kind == "OK":
                results[rest] = Check(rest, "imports", None, True)
                current = None
            elif kind == "ERR":
                name, _, why = rest.partition(" ")
                results[name] = Check(name, "does not import", json.loads(why), False)
                current = None
        todo = [m for m in todo if m not in results]
    return results


def _why_hint(detail: str | None) -> str | None:
    if detail and "libcuda.so" in detail:
        return detail + " (no NVIDIA driver here: vLLM's CUDA extensions link it)"
    return detail


def _installed(facts: dict, need: str) -> bool:
    files = facts["vllm_files"]
    if need in ("fa2", "fa3", "flashmla"):
        return bool(files.get(need))
    if need == "fa4":
        return bool(files.get("fa4"))
    if need in facts["packages"]:
        return facts["packages"][need] is not None
    return facts["modules"].get(need) is not None


def import_checks(python: str, facts: dict, timeout: float) -> tuple[Check, ...]:
    todo = [module for _, module, need in IMPORT_TESTS if _installed(facts, need)]
    done = import_tests(python, todo, timeout)
    out = []
    for label, module, _ in IMPORT_TESTS:
        r = done.get(module)
        if r is None:
            out.append(Check(label, "not installed", module, None))
        else:
            out.append(Check(label, r.value, _why_hint(r.detail) if r.detail else module, r.ok))
    return tuple(out)


# --- the machine -----------------------------------------------------------------


def gpu_checks() -> tuple[Check, ...]:
    from attn_select.cli.probe import driver_present

    if not driver_present():
        return (Check("GPUs", "none visible", "no NVIDIA driver (/proc/driver/nvidia, /dev/nvidia0 absent)", None),
                Check("driver", "none", None, None))
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return (Check("GPUs", "unknown", "the NVIDIA driver is loaded but nvidia-smi is not on PATH", None),)
    rc, out, err = _run([smi, "--query-gpu=index,name,compute_cap,memory.total,driver_version",
                         "--format=csv,noheader,nounits"])
    if rc != 0:
        return (Check("GPUs", "unknown", f"nvidia-smi failed: {(err or out).strip()[:200]}", False),)
    rows = [[p.strip() for p in ln.split(",")] for ln in out.strip().splitlines() if ln.strip()]
    checks = [Check(f"GPU {r[0]}", f"{r[1]}, capability {r[2]}, {round(float(r[3]) / 1024, 1)} GiB", None, None)
              for r in rows if len(r) >= 5]
    driver = rows[0][4] if rows and len(rows[0]) >= 5 else "unknown"
    rc, out, _ = _run([smi])
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", out or "")
    checks.append(Check("driver", driver, f"supports CUDA {cuda.group(1)}" if cuda else None, None))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        checks.append(Check("CUDA_VISIBLE_DEVICES", visible, "vLLM and explain's probe see only these", None))
    return tuple(checks)


def _tool_version(path: str, pattern: str, arg: str = "--version") -> str | None:
    rc, out, err = _run([path, arg])
    m = re.search(pattern, (out or "") + (err or ""))
    return m.group(1) if m else None


def jit_checks(facts: dict) -> tuple[Check, ...]:
    """FlashInfer's JIT needs nvcc (found as vLLM finds it) and ninja."""
    from attn_select.cli.probe import flashinfer_nvcc

    nvcc = flashinfer_nvcc()
    ninja = shutil.which("ninja")
    checks = []
    if nvcc is None:
        checks.append(Check("nvcc", "not found", "looked in CUDA_HOME, CUDA_PATH, nvcc on PATH, /usr/local/cuda", False))
    else:
        v = _tool_version(nvcc, r"release ([\d.]+)")
        checks.append(Check("nvcc", v or "unknown version", nvcc, True))
    if ninja is None:
        checks.append(Check("ninja", "not found", "not on PATH", False))
    else:
        checks.append(Check("ninja", _tool_version(ninja, r"([\d.]+)") or "unknown version", ninja, True))
    cubin = facts["packages"].get("flashinfer-cubin") is not None or \
        os.environ.get("VLLM_HAS_FLASHINFER_CUBIN", "0").lower() in ("1", "true")
    if facts["modules"].get("flashinfer") is None:
        verdict = Check("has_flashinfer()", "False", "flashinfer-python is not installed", None)
    elif cubin or (nvcc and ninja):
        verdict = Check("has_flashinfer()", "True",
                        "flashinfer-cubin installed" if cubin else "no cubins, but nvcc and ninja for its JIT", True)
    else:
        verdict = Check("has_flashinfer()", "False",
                        "flashinfer-cubin is not installed and nvcc or ninja is missing: vLLM disables FlashInfer", False)
    checks.append(verdict)
    return tuple(checks)


def head_request(url: str, timeout: float = NETWORK_TIMEOUT_S) -> tuple[bool, str]:
    """One HEAD request; (reachable, what happened)."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:  # noqa: S310 - the user's opt-in
            return resp.status == 200, f"HTTP {resp.status}"
    except urllib.error.HTTPError as exc:
        return False, f"HTTP {exc.code}"
    except (urllib.error.URLError, OSError, ValueError) as exc:
        return False, f"{type(getattr(exc, 'reason', exc)).__name__}: {getattr(exc, 'reason', exc)}"


def cubin_checks(facts: dict, probe_network: bool) -> tuple[Check, ...]:
    """Whether the trtllm-gen paths would find their cubins: flashinfer-cubin
    (or VLLM_HAS_FLASHINFER_CUBIN) answers without a network; else vLLM's
    has_nvidia_artifactory() requests FLASHINFER_CUBINS_REPOSITORY at start."""
    pkgs = facts["packages"]
    fi, cubin, jit = pkgs.get("flashinfer-python"), pkgs.get("flashinfer-cubin"), pkgs.get("flashinfer-jit-cache")
    env_cubin = os.environ.get("VLLM_HAS_FLASHINFER_CUBIN", "0").lower() in ("1", "true")
    checks = []
    if cubin is not None:
        same = fi is None or cubin.split("+")[0] == fi.split("+")[0]
        checks.append(Check("flashinfer-cubin", cubin,
                            "trtllm cubins present, no network needed" if same else
                            f"does not match flashinfer-python {fi}: vLLM warns, kernels may be missing", same))
    else:
        checks.append(Check("flashinfer-cubin", "not installed",
                            "pre-downloaded by VLLM_HAS_FLASHINFER_CUBIN=1" if env_cubin else
                            "an air-gapped node loses every trtllm path (pip install flashinfer-cubin, "
                            "or `vllm download-kernels`)", None if env_cubin else False))
    checks.append(Check("flashinfer-jit-cache", jit or "not installed",
                        "precompiled JIT kernels" if jit else "FlashInfer compiles its kernels on first use", None))
    url = os.environ.get("FLASHINFER_CUBINS_REPOSITORY", DEFAULT_CUBINS_URL)
    if cubin is not None or env_cubin:
        checks.append(Check("trtllm cubins", "available", "has_nvidia_artifactory() is True without a request", True))
    elif not probe_network:
        checks.append(Check("trtllm cubins", "need the network",
                            f"vLLM requests {url} (5 s timeout) at start; not probed here (--probe-network does one "
                            "HEAD request); on an air-gapped node pass --kernels without trtllm-cubins", None))
    else:
        reachable, what = head_request(url)
        checks.append(Check("trtllm cubins", "reachable" if reachable else "unreachable",
                            f"HEAD {url}: {what}" + ("" if reachable else "; pass --kernels without trtllm-cubins"),
                            reachable))
    return tuple(checks)


def env_checks() -> tuple[Check, ...]:
    from attn_select.selector.engine_env import REMOVED_VARS, SELECTION_VARS

    out = []
    for var in SELECTION_VARS:
        value = os.environ.get(var.name)
        out.append(Check(var.name, "unset" if value is None else value, f"{var.effect}; explain: {var.explain}", None))
    for var in REMOVED_VARS:
        value = os.environ.get(var.name)
        if value is not None:
            out.append(Check(var.name, value, "vLLM 0.33.0 ignores it silently; use "
                             + var.replacement.format(value=value), False))
    return tuple(out)


def _package_checks(facts: dict) -> tuple[Check, ...]:
    p = facts["packages"]
    rows = (("vLLM", "vllm"), ("SGLang", "sglang"), ("torch", "torch"), ("Triton", "triton"),
            ("FlashInfer", "flashinfer-python"), ("flash-attn", "flash-attn"), ("flash-attn-3", "flash-attn-3"),
            ("flash-attn-4", "flash-attn-4"), ("FlashMLA (flash-mla)", "flash-mla"),
            ("CUTLASS DSL", "nvidia-cutlass-dsl"), ("TokenSpeed MLA", "tokenspeed-mla"))
    out = [Check(label, p.get(name) or "not installed", name, None) for label, name in rows]
    files = facts["vllm_files"]
    if p.get("vllm"):
        ships = [k for k, v in (("FA2", files.get("fa2")), ("FA3", files.get("fa3")), ("FA4", files.get("fa4")),
                                ("FlashMLA", files.get("flashmla"))) if v]
        out.insert(1, Check("vLLM's wheel ships", ", ".join(ships) or "no attention extensions",
                            facts["modules"].get("vllm"), None))
    return tuple(out)


def _cuda_checks(facts: dict) -> tuple[Check, ...]:
    p = facts["packages"]
    runtime = p.get("nvidia-cuda-runtime-cu12") or p.get("nvidia-cuda-runtime") or p.get("nvidia-cuda-runtime-cu13")
    torch = p.get("torch")
    return (
        Check("CUDA runtime", runtime or "no nvidia-cuda-runtime wheel", "the runtime pip installed beside torch", None),
        Check("torch", torch or "not installed (optional for attn-select; vLLM needs it)",
              f"built for CUDA {facts['torch_cuda']}" if torch and facts["torch_cuda"] else
              ("a CPU build (torch.version.cuda is None)" if torch else None), None),
    )


def diagnose(python: str | None, probe_network: bool, import_timeout: float = IMPORT_TIMEOUT_S) -> DoctorReport:
    from attn_select.cli.probe import kernels_in

    target = python or sys.executable
    facts = environment_facts(target)
    where = f"{target} (Python {facts['python']})"
    vllm_dir = facts["modules"].get("vllm")
    if vllm_dir:
        kern = kernels_in(vllm_dir, lambda name: facts["modules"].get(name) is not None,
                          source=f"probe ({target}")
        flag = ",".join(kern.present()) or "none"
    else:
        kern = None
        flag = ",".join(Kernels().present()) + "  (vLLM is not installed there: what its wheel ships)"
    from attn_select.cli.probe import driver_present

    if driver_present():
        assumed = f"a live GPU: explain probes and assumes --kernels {flag.split()[0]}"
    else:
        assumed = ("no GPU here: explain needs --device or --capability and then assumes every kernel vLLM's "
                   f"wheel ships ({','.join(Kernels().present())}); for this node pass --kernels {flag.split()[0]}")
    sections = (
        Section("machine", gpu_checks() + _cuda_checks(facts)),
        Section(f"packages in {where}", _package_checks(facts)),
        Section("FlashAttention and other attention builds (imported in a subprocess)",
                import_checks(target, facts, import_timeout)),
        Section("FlashInfer JIT prerequisites", jit_checks(facts)),
        Section("trtllm cubins", cubin_checks(facts, probe_network)),
        Section("environment variables that change selection in vLLM 0.33.0", env_checks()),
    )
    return DoctorReport(python=where, sections=sections, kernels_flag=flag.split()[0], kernels_assumed=assumed,
                        warnings=_warnings(facts, "this Python" if python is None else f"--vllm-python {python}"))


def _warnings(facts: dict, where: str) -> tuple[EngineWarning, ...]:
    """Another vLLM / SGLang release than the mirrored one, removed variables set."""
    from attn_select.selector.engine_env import removed_var_warnings
    from attn_select.selector.installed import InstalledEngine, version_warning

    out = []
    for engine in ("vllm", "sglang"):
        found = InstalledEngine(engine, facts["packages"].get(engine), where)
        w = version_warning(found, own_code="explain --engine vllm-installed" if engine == "vllm" else None)
        if w is not None:
            out.append(w)
    out += [EngineWarning("environment", "vllm", text) for text in removed_var_warnings(os.environ)]
    return tuple(out)
