"""What ``attn-select doctor`` finds on this machine, in the spirit of
``vllm collect-env``: the GPUs and driver (nvidia-smi), the facts of the
Python that runs vLLM (``backends/run/probes/environment.py`` run in it),
which attention builds import there, the JIT tools and their versions, and,
only with ``--probe-network``, one bounded HEAD request. ``selector/doctor.py``
judges what is found.

Nothing here imports torch, vLLM or a kernel package in this process: each
import test runs in its own subprocess with a timeout, so an extension that
crashes or hangs is a finding, not the end of doctor.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

from attn_select.backends.run.probes import FOLDER as PROBES
from attn_select.selector import doctor as d
from attn_select.selector.errors import UserError
from attn_select.selector.host import NEUTRAL_CWD

IMPORT_TIMEOUT_S = 240
COMMAND_TIMEOUT_S = 15
NETWORK_TIMEOUT_S = 5


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


def environment_facts(python: str, flag: str = "--vllm-python") -> dict:
    """backends/run/probes/environment.py's answer from ``python`` (named by ``flag``)."""
    from attn_select.selector.host.engine_packages import probe_python

    probe_python(python, (), flag)  # a one-line error when it is not a Python
    rc, out, err = _run([python, str(PROBES / "environment.py")], timeout=60)
    line = next((ln for ln in out.splitlines() if ln.startswith("ATTN_SELECT_DOCTOR ")), None)
    if rc != 0 or line is None:
        why = (err.strip().splitlines() or [f"exit code {rc}"])[-1]
        raise UserError(f"{python}: the environment probe failed ({why[:200]})")
    return json.loads(line.removeprefix("ATTN_SELECT_DOCTOR "))


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


def import_tests(python: str, modules: list[str], timeout: float) -> dict[str, d.Check]:
    """Import each of ``modules`` in ``python``: ok, the error it raised, or
    how it died; each import may take ``timeout`` seconds."""
    import queue
    import threading

    results: dict[str, d.Check] = {}
    todo = list(modules)
    while todo:
        try:
            proc = subprocess.Popen([python, "-c", _IMPORTS, *todo], stdout=subprocess.PIPE, cwd=NEUTRAL_CWD,
                                    stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True)
        except OSError as exc:
            return {**results, **{m: d.Check(m, "not tested", str(exc), False) for m in todo}}
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
                results[current or todo[0]] = d.Check(current or todo[0], "does not import",
                                                      f"the import did not finish within {timeout:g} s", False)
                break
            if line is None:  # the interpreter is gone
                rc = proc.wait()
                if current is not None:
                    results[current] = d.Check(current, "crashes",
                                               f"the import killed the interpreter (exit code {rc})", False)
                break
            kind, _, rest = line.rstrip("\n").partition(" ")
            if kind == "START":
                current = rest
            elif kind == "OK":
                results[rest] = d.Check(rest, "imports", None, True)
                current = None
            elif kind == "ERR":
                name, _, why = rest.partition(" ")
                results[name] = d.Check(name, "does not import", json.loads(why), False)
                current = None
        todo = [m for m in todo if m not in results]
    return results


def gpu_checks() -> tuple[d.Check, ...]:
    """nvidia-smi's view of the GPUs and driver (nothing runs without a driver)."""
    from attn_select.selector.host.kernel_probe import driver_present

    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if not driver_present():
        return d.gpu_checks(False, False, None, None, None, visible)
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return d.gpu_checks(True, False, None, None, None, visible)
    rc, out, err = _run([smi, "--query-gpu=index,name,compute_cap,memory.total,driver_version",
                         "--format=csv,noheader,nounits"])
    if rc != 0:
        return d.gpu_checks(True, True, None, (err or out).strip(), None, visible)
    rows = [[p.strip() for p in ln.split(",")] for ln in out.strip().splitlines() if ln.strip()]
    rc, out, _ = _run([smi])
    cuda = re.search(r"CUDA Version:\s*([\d.]+)", out or "")
    return d.gpu_checks(True, True, rows, None, cuda.group(1) if cuda else None, visible)


def _tool(path: str | None, pattern: str, arg: str = "--version") -> d.Tool:
    """A program and the version it prints (None when it prints none)."""
    if path is None:
        return d.Tool(None)
    rc, out, err = _run([path, arg])
    m = re.search(pattern, (out or "") + (err or ""))
    return d.Tool(path, m.group(1) if m else None)


def jit_checks(facts: dict) -> tuple[d.Check, ...]:
    """FlashInfer's JIT tools: nvcc found as vLLM finds it, and ninja."""
    from attn_select.selector.host.kernel_probe import flashinfer_nvcc

    nvcc = _tool(flashinfer_nvcc(), r"release ([\d.]+)")
    ninja = _tool(shutil.which("ninja"), r"([\d.]+)")
    return d.jit_checks(facts, nvcc, ninja, os.environ)


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


def cubin_checks(facts: dict, probe_network: bool) -> tuple[d.Check, ...]:
    """The trtllm cubins; the one request is sent only when vLLM would send
    it and the user asked (--probe-network)."""
    env = os.environ
    head = head_request(d.cubins_url(env)) if probe_network and d.cubins_need_request(facts, env) else None
    return d.cubin_checks(facts, env, head)


def diagnose(python: str | None, probe_network: bool, import_timeout: float = IMPORT_TIMEOUT_S) -> d.DoctorReport:
    """The whole doctor report for ``python`` (None: this one)."""
    from attn_select.selector.host.kernel_probe import driver_present, kernels_in

    target = sys.executable if python is None else python  # "" is no interpreter, as for explain
    facts = environment_facts(target)
    where = f"{target} (Python {facts['python']})"
    vllm_dir = facts["modules"].get("vllm")
    found = None
    if vllm_dir:
        found = kernels_in(vllm_dir, lambda name: facts["modules"].get(name) is not None, where=target)
    sections = (
        d.Section("machine", gpu_checks() + d.cuda_checks(facts)),
        d.Section(f"packages in {where}", d.package_checks(facts)),
        d.Section("FlashAttention and other attention builds (imported in a subprocess)",
                  d.import_checks(import_tests(target, d.modules_to_import(facts), import_timeout))),
        d.Section("FlashInfer JIT prerequisites", jit_checks(facts)),
        d.Section("trtllm cubins", cubin_checks(facts, probe_network)),
        d.Section("environment variables that change selection in vLLM 0.33.0", d.env_checks(os.environ)),
    )
    warnings = d.version_warnings(facts, "this Python" if python is None else f"--vllm-python {python}", os.environ)
    return d.doctor_report(where, sections, found, driver_present(), warnings)
