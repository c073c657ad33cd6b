"""doctor's judgements, on facts given as data (no machine, no subprocess)."""

from __future__ import annotations

from attn_select.selector import doctor as d
from attn_select.selector.config import Kernels


def facts(**packages) -> dict:
    return {"packages": {"flashinfer-python": "0.7.2", **packages}, "modules": {"flashinfer": "/site/flashinfer"},
            "vllm_files": {}, "torch_cuda": None, "python": "3.11.7"}


def verdict(checks) -> d.Check:
    return next(c for c in checks if c.name == "has_flashinfer()")


def test_flashinfer_needs_cubins_or_both_jit_tools():
    f = facts()
    assert verdict(d.jit_checks(f, d.Tool("/cuda/bin/nvcc", "13.0"), d.Tool("/bin/ninja", "1.11"), {})).value == "True"
    missing = verdict(d.jit_checks(f, d.Tool("/cuda/bin/nvcc", "13.0"), d.Tool(None), {}))
    assert (missing.value, missing.ok) == ("False", False)
    cubins = verdict(d.jit_checks(f, d.Tool(None), d.Tool(None), {"VLLM_HAS_FLASHINFER_CUBIN": "1"}))
    assert (cubins.value, cubins.detail) == ("True", "flashinfer-cubin installed")


def test_cubins_ask_the_network_only_without_flashinfer_cubin():
    assert d.cubins_need_request(facts(), {})
    assert not d.cubins_need_request(facts(**{"flashinfer-cubin": "0.7.2"}), {})
    assert not d.cubins_need_request(facts(), {"VLLM_HAS_FLASHINFER_CUBIN": "1"})
    line = d.cubin_checks(facts(), {"FLASHINFER_CUBINS_REPOSITORY": "https://mirror/"}, (False, "HTTP 404"))[-1]
    assert (line.value, line.ok) == ("unreachable", False) and line.detail.startswith("HEAD https://mirror/: HTTP 404")
    assert d.cubin_checks(facts(), {}, None)[-1].value == "need the network"


def test_a_mismatched_cubin_package_is_a_finding():
    first = d.cubin_checks(facts(**{"flashinfer-cubin": "0.6.0"}), {}, None)[0]
    assert first.ok is False and "does not match flashinfer-python 0.7.2" in first.detail


def test_the_kernels_value_for_the_node():
    found = Kernels(fa3=False, fa4=False, flashmla=False, tokenspeed_mla=False)
    flag, assumed = d.kernels_for_node(found, driver=False)
    assert flag == ",".join(found.present()) and "fa3" not in flag
    assert assumed.endswith(f"for this node pass --kernels {flag}") and ",".join(Kernels().present()) in assumed
    flag, assumed = d.kernels_for_node(None, driver=True)
    assert flag == ",".join(Kernels().present())
    assert assumed.startswith(f"a live GPU: explain probes and assumes --kernels {flag} (no vLLM in this Python")


def test_an_import_not_tried_was_not_installed():
    done = {"flashinfer": d.Check("flashinfer", "does not import", "OSError: libcuda.so.1: no such file", False)}
    rows = {c.name: c for c in d.import_checks(done)}
    assert rows["vLLM FA2"].value == "not installed"
    assert rows["FlashInfer"].detail.endswith("(no NVIDIA driver here: vLLM's CUDA extensions link it)")


def test_boolean_variables_are_read_as_vllm_reads_them():
    from attn_select.selector.doctor import env_flag

    # vLLM 0.33.0: bool(int(os.getenv(NAME, "0")))
    assert env_flag({"X": "1"}, "X") and env_flag({"X": "2"}, "X")
    assert not env_flag({"X": "0"}, "X") and not env_flag({}, "X")
    assert not env_flag({"X": "true"}, "X")  # vLLM raises ValueError reading it; never "on"


# --- what doctor echoes from the environment ---------------------------------------
# A megabyte value, a newline or a terminal escape in FLASHINFER_CUBINS_REPOSITORY,
# CUDA_VISIBLE_DEVICES or CUDA_HOME (the nvcc path) went into the report as set.

HOSTILE = "http://mirror/" + "y" * 1_000_000 + "\x1b]0;title\x07\n"


def _bounded(text: str) -> None:
    assert len(text) < 1000 and "\x1b" not in text and "\n" not in text and "\x07" not in text


def test_the_cubin_repository_is_cut_and_escaped():
    env = {"FLASHINFER_CUBINS_REPOSITORY": HOSTILE}
    line = d.cubin_checks(facts(), env, None)[-1]
    _bounded(line.detail)
    assert "'http://mirror/yyy" in line.detail and "\\x1b]0;title\\x07\\n' (1,000,025 characters)" in line.detail
    # urllib's refusal repeats the URL: that too is bounded
    line = d.cubin_checks(facts(), env, (False, f"ValueError: unknown url type: {HOSTILE!r}"))[-1]
    _bounded(line.detail)


def test_a_usual_cubin_repository_is_shown_as_set():
    line = d.cubin_checks(facts(), {}, None)[-1]
    assert f"vLLM requests {d.DEFAULT_CUBINS_URL} (5 s" in line.detail


def test_visible_devices_and_tool_paths_are_cut_and_escaped():
    rows = [["0", "NVIDIA H100", "9.0", "81559", "580.1"]]
    (visible,) = [c for c in d.gpu_checks(True, True, rows, None, "13.0", HOSTILE) if c.name == "CUDA_VISIBLE_DEVICES"]
    _bounded(visible.value)
    nvcc, ninja, _ = d.jit_checks(facts(), d.Tool("/cuda\x1b[2J/bin/nvcc", "13.0"), d.Tool("/b/" + "n" * 5000), {})
    assert nvcc.detail == "'/cuda\\x1b[2J/bin/nvcc'" and "(5,003 characters)" in ninja.detail
    _bounded(ninja.detail)
