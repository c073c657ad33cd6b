"""What ``attn-select doctor`` concludes from what was found: the report's
data model and every judgement that turns a finding into a line (which
import tests make sense, what a failed import means, whether vLLM would
count FlashInfer as installed, whether the trtllm paths have their cubins,
the ``--kernels`` value for the node).

Pure: the facts come in as arguments (``selector/host/doctor_probe.py``
gathers them from the machine and the other Python); nothing here runs a
process, reads a file or imports a kernel package.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, NamedTuple

from attn_select.selector.config import Kernels
from attn_select.selector.engine_env import shown_value
from attn_select.selector.errors import one_line
from attn_select.selector.installed import EngineWarning

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


def env_flag(env: Mapping[str, str], name: str) -> bool:
    """A boolean variable as vLLM 0.33.0's envs.py reads these: ``bool(int(value))`` ("2" is
    on, "true" is not a number: vLLM raises ValueError when it reads it; here it counts as off)."""
    try:
        return bool(int(env.get(name, "0")))
    except ValueError:
        return False


def _installed(facts: dict, need: str) -> bool:
    files = facts["vllm_files"]
    if need in ("fa2", "fa3", "fa4", "flashmla"):
        return bool(files.get(need))
    if need in facts["packages"]:
        return facts["packages"][need] is not None
    return facts["modules"].get(need) is not None


def modules_to_import(facts: dict) -> list[str]:
    """The import tests that make sense: those whose package or file is there."""
    return [module for _, module, need in IMPORT_TESTS if _installed(facts, need)]


def _why_hint(detail: str | None) -> str | None:
    if detail and "libcuda.so" in detail:
        return detail + " (no NVIDIA driver here: vLLM's CUDA extensions link it)"
    return detail


def import_checks(done: Mapping[str, Check]) -> tuple[Check, ...]:
    """One line per import test, from ``done`` (module -> its result; a
    module not in it was not installed, so not tried)."""
    out = []
    for label, module, _ in IMPORT_TESTS:
        r = done.get(module)
        if r is None:
            out.append(Check(label, "not installed", module, None))
        else:
            out.append(Check(label, r.value, _why_hint(r.detail) if r.detail else module, r.ok))
    return tuple(out)


def gpu_checks(driver: bool, smi_found: bool, rows: list[list[str]] | None, smi_error: str | None,
               cuda_version: str | None, visible: str | None) -> tuple[Check, ...]:
    """The machine's GPUs and driver from nvidia-smi's CSV ``rows`` (index,
    name, compute_cap, memory.total MiB, driver_version), ``smi_error`` when
    it failed, and the CUDA version its banner names."""
    if not driver:
        return (Check("GPUs", "none visible", "no NVIDIA driver (/proc/driver/nvidia, /dev/nvidia0 absent)", None),
                Check("driver", "none", None, None))
    if not smi_found:
        return (Check("GPUs", "unknown", "the NVIDIA driver is loaded but nvidia-smi is not on PATH", None),)
    if smi_error is not None or rows is None:
        return (Check("GPUs", "unknown", f"nvidia-smi failed: {(smi_error or '')[:200]}", False),)
    checks = [Check(f"GPU {r[0]}", f"{r[1]}, capability {r[2]}, {round(float(r[3]) / 1024, 1)} GiB", None, None)
              for r in rows if len(r) >= 5]
    driver_version = rows[0][4] if rows and len(rows[0]) >= 5 else "unknown"
    checks.append(Check("driver", driver_version, f"supports CUDA {cuda_version}" if cuda_version else None, None))
    if visible is not None:
        checks.append(Check("CUDA_VISIBLE_DEVICES", shown_value(visible), "vLLM and explain's probe see only these",
                            None))
    return tuple(checks)


class Tool(NamedTuple):
    """A program FlashInfer's JIT needs, as found on this machine."""

    path: str | None  # None: not found
    version: str | None = None  # None: it did not say


def jit_checks(facts: dict, nvcc: Tool, ninja: Tool, env: Mapping[str, str]) -> tuple[Check, ...]:
    """FlashInfer's JIT needs nvcc (found as vLLM finds it) and ninja; with
    neither, nor cubins, vLLM's has_flashinfer() is False."""
    checks = []
    # CUDA_HOME / CUDA_PATH and PATH name these paths: shown as the variables are
    if nvcc.path is None:
        checks.append(Check("nvcc", "not found", "looked in CUDA_HOME, CUDA_PATH, nvcc on PATH, /usr/local/cuda", False))
    else:
        checks.append(Check("nvcc", nvcc.version or "unknown version", shown_value(nvcc.path), True))
    if ninja.path is None:
        checks.append(Check("ninja", "not found", "not on PATH", False))
    else:
        checks.append(Check("ninja", ninja.version or "unknown version", shown_value(ninja.path), True))
    cubin = facts["packages"].get("flashinfer-cubin") is not None or env_flag(env, "VLLM_HAS_FLASHINFER_CUBIN")
    if facts["modules"].get("flashinfer") is None:
        verdict = Check("has_flashinfer()", "False", "flashinfer-python is not installed", None)
    elif cubin or (nvcc.path and ninja.path):
        verdict = Check("has_flashinfer()", "True",
                        "flashinfer-cubin installed" if cubin else "no cubins, but nvcc and ninja for its JIT", True)
    else:
        verdict = Check("has_flashinfer()", "False",
                        "flashinfer-cubin is not installed and nvcc or ninja is missing: vLLM disables FlashInfer", False)
    checks.append(verdict)
    return tuple(checks)


def cubins_url(env: Mapping[str, str]) -> str:
    """The repository vLLM's has_nvidia_artifactory() requests."""
    return env.get("FLASHINFER_CUBINS_REPOSITORY", DEFAULT_CUBINS_URL)


def cubins_need_request(facts: dict, env: Mapping[str, str]) -> bool:
    """Whether vLLM would send a request to learn if the cubins are reachable."""
    return facts["packages"].get("flashinfer-cubin") is None and not env_flag(env, "VLLM_HAS_FLASHINFER_CUBIN")


def cubin_checks(facts: dict, env: Mapping[str, str], head: tuple[bool, str] | None) -> tuple[Check, ...]:
    """Whether the trtllm-gen paths would find their cubins: flashinfer-cubin
    (or VLLM_HAS_FLASHINFER_CUBIN) answers without a network; else vLLM's
    has_nvidia_artifactory() requests FLASHINFER_CUBINS_REPOSITORY at start.
    ``head``: (reachable, what happened) of the one request doctor sent
    (--probe-network), or None when it sent none."""
    pkgs = facts["packages"]
    fi, cubin, jit = pkgs.get("flashinfer-python"), pkgs.get("flashinfer-cubin"), pkgs.get("flashinfer-jit-cache")
    env_cubin = env_flag(env, "VLLM_HAS_FLASHINFER_CUBIN")
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
    url = shown_value(cubins_url(env))  # the user's FLASHINFER_CUBINS_REPOSITORY
    if not cubins_need_request(facts, env):
        checks.append(Check("trtllm cubins", "available", "has_nvidia_artifactory() is True without a request", True))
    elif head is None:
        checks.append(Check("trtllm cubins", "need the network",
                            f"vLLM requests {url} (5 s timeout) at start; not probed here (--probe-network does one "
                            "HEAD request); on an air-gapped node pass --kernels without trtllm-cubins", None))
    else:
        reachable, what = head  # urllib's refusal of a malformed URL repeats it whole
        checks.append(Check("trtllm cubins", "reachable" if reachable else "unreachable",
                            f"HEAD {url}: {one_line(what)}"
                            + ("" if reachable else "; pass --kernels without trtllm-cubins"),
                            reachable))
    return tuple(checks)


def env_checks(env: Mapping[str, str]) -> tuple[Check, ...]:
    """Every variable that changes selection, set or not, and each removed one that is set."""
    from attn_select.selector.engine_env import REMOVED_VARS, SELECTION_VARS

    out = []
    for var in SELECTION_VARS:
        value = env.get(var.name)
        out.append(Check(var.name, "unset" if value is None else shown_value(value),
                         f"{var.effect}; explain: {var.explain}", None))
    for var in REMOVED_VARS:
        value = env.get(var.name)
        if value is not None:
            value = shown_value(value)  # a 100 KB value or a terminal escape is no report line
            out.append(Check(var.name, value, "vLLM 0.33.0 ignores it silently; use "
                             + var.replacement.format(value=value), False))
    return tuple(out)


def package_checks(facts: dict) -> tuple[Check, ...]:
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


def cuda_checks(facts: dict) -> tuple[Check, ...]:
    p = facts["packages"]
    runtime = p.get("nvidia-cuda-runtime-cu12") or p.get("nvidia-cuda-runtime") or p.get("nvidia-cuda-runtime-cu13")
    torch = p.get("torch")
    return (
        Check("CUDA runtime", runtime or "no nvidia-cuda-runtime wheel", "the runtime pip installed beside torch", None),
        Check("torch", torch or "not installed (optional for attn-select; vLLM needs it)",
              f"built for CUDA {facts['torch_cuda']}" if torch and facts["torch_cuda"] else
              ("a CPU build (torch.version.cuda is None)" if torch else None), None),
    )


def kernels_for_node(found: Kernels | None, driver: bool) -> tuple[str, str]:
    """(the --kernels value for this node, what explain assumes without it).
    ``found``: what the vLLM there would find, or None without a vLLM."""
    shipped = ",".join(Kernels().present())
    flag = (",".join(found.present()) or "none") if found is not None else shipped
    if driver:
        assumed = f"a live GPU: explain probes and assumes --kernels {flag}"
    else:
        assumed = ("no GPU here: explain needs --device or --capability and then assumes every kernel vLLM's "
                   f"wheel ships ({shipped}); for this node pass --kernels {flag}")
    if found is None:  # nothing to read the set from: what a pip install of vLLM brings
        assumed += (" (no vLLM in this Python: that is what `pip install vllm` brings, not what is here; "
                    "install vLLM or name its Python with --vllm-python)")
    return flag, assumed


def version_warnings(facts: dict, where: str, env: Mapping[str, str]) -> tuple[EngineWarning, ...]:
    """Another vLLM / SGLang release than the mirrored one, removed variables set."""
    from attn_select.selector.engine_env import removed_var_warnings
    from attn_select.selector.installed import InstalledEngine, version_warning

    out = []
    for engine in ("vllm", "sglang"):
        found = InstalledEngine(engine, facts["packages"].get(engine), where)
        w = version_warning(found, own_code="explain --engine vllm-installed" if engine == "vllm" else None)
        if w is not None:
            out.append(w)
    out += [EngineWarning("environment", "vllm", text) for text in removed_var_warnings(env)]
    return tuple(out)


def doctor_report(where: str, sections: tuple[Section, ...], found: Kernels | None, driver: bool,
                  warnings: tuple[EngineWarning, ...]) -> DoctorReport:
    flag, assumed = kernels_for_node(found, driver)
    return DoctorReport(python=where, sections=sections, kernels_flag=flag, kernels_assumed=assumed,
                        warnings=warnings)
