"""Running the installed engine's own code in the Python of its environment,
bounded in time, with the stand-ins a machine without the NVIDIA driver
needs: vLLM's selection (``backends/run/probes/vllm_selection.py``) and
SGLang's resolution (``backends/run/probes/sglang_resolution.py``), through
one runner (``_stream``); and the model folder both read.

On a GPU machine asked about its own GPU nothing is stood in. Elsewhere the
driver library is a stand-in built here with the system C compiler, the
device queries answer for the requested device, and
``has_nvidia_artifactory()`` answers what the mirror assumes instead of
sending a request. Every stand-in comes back with the answer and is printed.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, NamedTuple

from attn_select.backends.run.probes import FOLDER as PROBES
from attn_select.selector.host import NEUTRAL_CWD
from attn_select.selector.config import Kernels
from attn_select.selector.errors import UserError

RUN_TIMEOUT_S = 900


class Probe(NamedTuple):
    """One engine's runner script and how its answer lines are named."""

    script: str  # under backends/run/probes/
    prefix: str  # ATTN_SELECT_VLLM -> ATTN_SELECT_VLLM_READY / _CASE / _ERROR
    title: str
    version_key: str  # the READY line's version field
    loading: str  # what the script loads before the first case, in words


VLLM_PROBE = Probe("vllm_selection.py", "ATTN_SELECT_VLLM", "vLLM", "vllm_version", "its selector")
SGLANG_PROBE = Probe("sglang_resolution.py", "ATTN_SELECT_SGLANG", "SGLang", "sglang_version",
                     "its server arguments")


def engine_python(python: str | None, engine: str = "vllm") -> tuple[str, str]:
    """(interpreter, its ``engine`` version); a one-line error when it has none."""
    from attn_select.selector.host.engine_packages import find_engine
    from attn_select.selector.installed import TITLES

    found = find_engine(engine, python, required=True)
    if found.version is None:
        title = TITLES[engine]
        raise UserError(f"--engine {engine}-installed: {title} is not installed in this Python; name the Python "
                        f"of the environment that has it with --{engine}-python PATH")
    return python or sys.executable, found.version


def installed_kernels(python: str) -> Kernels:
    """What the vLLM installed in ``python`` would find (doctor's probe of
    its files and modules), for the mirror's side of the comparison."""
    from attn_select.selector.host.doctor_probe import environment_facts
    from attn_select.selector.host.kernel_probe import kernels_in

    facts = environment_facts(python)
    return kernels_in(facts["modules"]["vllm"], lambda name: facts["modules"].get(name) is not None,
                      where=f"the vLLM in {python}")


def sglang_environment(python: str) -> dict[str, Any]:
    """What SGLang's Python has that the mirror reads: whether ``flashinfer``
    is importable (``find_spec``, as ``is_flashinfer_available`` asks) and
    the CUDA version its torch was built with."""
    from attn_select.selector.host.doctor_probe import environment_facts

    facts = environment_facts(python, "--sglang-python")
    return {"flashinfer": facts["modules"].get("flashinfer") is not None, "torch_cuda": facts.get("torch_cuda")}


def libcuda_stand_in(title: str = "vLLM") -> str | None:
    """The libcuda.so.1 stand-in's path when this machine has no NVIDIA
    driver (built with the system C compiler), else None."""
    from attn_select.selector.host.kernel_probe import driver_present

    if driver_present():
        return None
    from attn_select.backends.run.probes.libcuda_standin import NoCompiler, build

    try:
        return str(build())
    except NoCompiler:
        raise UserError(f"this machine has no NVIDIA driver, so the installed {title}'s code needs a libcuda.so.1 "
                        "stand-in, built with a C compiler, and there is none (cc, gcc or $CC); install one "
                        "(apt-get install gcc) or run on a machine with the NVIDIA driver") from None
    except (OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", b"") or b""
        text = detail.decode(errors="replace").strip().splitlines() if isinstance(detail, bytes) else [str(exc)]
        raise UserError(f"building the libcuda.so.1 stand-in failed: {(text or [str(exc)])[-1]}") from None


def model_folder(spec: str, tmp: str, load: dict[str, Any] | None = None) -> str:
    """The folder vLLM reads for MODEL: a cached Hugging Face id's snapshot
    (of ``load``'s revision, in its cache_dir), the folder itself, a
    config.json's folder, or a profile written out (config.json, and a
    safetensors header with the profile's weights dtype when it names one)."""
    from attn_select.selector import hub_cache

    load = load or {}
    cached = hub_cache.find_cached(spec.strip(), load.get("revision"), load.get("cache_dir"))
    if cached is not None:
        return str(cached)
    path = Path(spec.strip()).expanduser()
    if path.exists():
        return str(path.resolve() if path.is_dir() else path.resolve().parent)
    from attn_select.selector.profiles import _profile_for_repo, load_model_profile

    name = _profile_for_repo(spec) if "/" in spec else spec
    stem, prof = load_model_profile(name or spec)
    folder = Path(tmp) / stem
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(prof["config"]), encoding="utf-8")
    weights = prof.get("weights_dtype")
    if weights:
        st = {"bfloat16": "BF16", "float16": "F16", "float32": "F32"}[weights]
        header = json.dumps({"w": {"dtype": st, "shape": [1], "data_offsets": [0, 2]}}).encode()
        (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header + b"\0\0")
    return str(folder)


def run_selection(python: str, cases: list[dict[str, Any]], *, live: bool, kernels: Kernels | None,
                  artifactory: bool | None, timeout: float | None = None) -> dict[str, Any]:
    """The runner's answer for ``cases``. ``live``: the question is about this
    machine's own GPU (nothing stood in when it has a driver); ``kernels``:
    --kernels to stand in for, or None (as installed); ``artifactory``: what
    has_nvidia_artifactory() answers when stood in."""
    from attn_select.selector.vllm_installed import kernels_request

    timeout = RUN_TIMEOUT_S if timeout is None else timeout
    libcuda = libcuda_stand_in()
    request = {
        "libcuda": libcuda,
        "platform": not (live and libcuda is None),
        "kernels": kernels_request(kernels) if kernels is not None else None,
        "artifactory": None if (live and libcuda is None) else artifactory,
        "cases": cases,
    }
    return _stream(python, request, timeout, VLLM_PROBE)


def run_resolution(python: str, cases: list[dict[str, Any]], *, live: bool,
                   timeout: float | None = None) -> dict[str, Any]:
    """SGLang's own resolution for ``cases`` (``sglang_resolution.py``'s
    request shape). ``live``: the question is about this machine's own GPU
    (nothing stood in when it has a driver)."""
    libcuda = libcuda_stand_in("SGLang")
    request = {"libcuda": libcuda, "platform": not (live and libcuda is None), "cases": cases}
    return _stream(python, request, RUN_TIMEOUT_S if timeout is None else timeout, SGLANG_PROBE)


def _stream(python: str, request: dict[str, Any], timeout: float, probe: Probe) -> dict[str, Any]:
    """Run ``probe``'s script; its import and each case may take ``timeout`` seconds."""
    import queue
    import threading

    try:
        proc = subprocess.Popen([python, str(PROBES / probe.script)], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=NEUTRAL_CWD)
    except OSError as exc:
        raise UserError(f"cannot run {python}: {exc.strerror or exc}") from None
    lines: queue.Queue = queue.Queue()
    err_tail: list[str] = []
    threading.Thread(target=lambda: [lines.put(ln) for ln in proc.stdout] + [lines.put(None)], daemon=True).start()
    threading.Thread(target=lambda: [err_tail.append(ln) or err_tail.__delitem__(slice(0, -20))
                                     for ln in proc.stderr], daemon=True).start()
    try:
        proc.stdin.write(json.dumps(request))
        proc.stdin.close()
    except OSError:
        pass  # it died at once; said below
    answer: dict[str, Any] = {"cases": []}
    cases = request["cases"]
    try:
        while True:
            waiting_for = "its import" if probe.version_key not in answer else \
                f"case {len(answer['cases']) + 1} of {len(cases)}"
            try:
                line = lines.get(timeout=timeout)
            except queue.Empty:
                raise UserError(f"the installed {probe.title}'s code did not finish {waiting_for} within {timeout:g} s "
                                "(--engine-timeout sets the limit)") from None
            if line is None:
                proc.wait()
                if probe.version_key in answer and len(answer["cases"]) == len(cases):
                    return answer
                why = [ln.strip() for ln in err_tail if ln.strip()] or [f"exit code {proc.returncode}"]
                raise UserError(f"the installed {probe.title}'s code died without an answer during "
                                f"{waiting_for} ({why[-1][:300]})")
            kind, _, doc = line.rstrip("\n").partition(" ")
            if kind == probe.prefix + "_READY":
                answer.update(json.loads(doc))
            elif kind == probe.prefix + "_CASE":
                answer["cases"].append(json.loads(doc))
            elif kind == probe.prefix + "_ERROR":
                found = json.loads(doc)
                raise UserError(f"{probe.title} {found.get(probe.version_key)}'s own code raised while loading "
                                f"{probe.loading}: {found['error'][:300]}")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def temp_models() -> tempfile.TemporaryDirectory:
    return tempfile.TemporaryDirectory(prefix="attn-select-models-")
