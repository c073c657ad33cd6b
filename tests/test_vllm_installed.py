"""``--engine vllm-installed`` against the vLLM 0.33.0 that attn-select
mirrors: on every built-in model profile x device profile, vLLM's own
selection code (run by backends/run/probes/vllm_selection.py in that venv, with the
stand-ins a CPU machine needs) and the mirror agree, zero differences,
down to each MLA layer's prefill backend (auto, and each one given
explicitly on an H100 and a B200).

Needs a venv with vllm==0.33.0 (``ATTN_SELECT_VLLM_PYTHON``, default
/tmp/vllm-venv/bin/python) and a C compiler; skipped without them. One
subprocess answers every case (one vLLM import). Run it with
``pytest -m vllm tests/test_vllm_installed.py``.
"""

from __future__ import annotations

import os

import pytest

from attn_select.selector.engines import VLLM_VERSION
from tests.installed_vllm import vllm_python_or_skip

pytestmark = [pytest.mark.vllm, pytest.mark.slow]

PYTHON = os.environ.get("ATTN_SELECT_VLLM_PYTHON", "/tmp/vllm-venv/bin/python")
# vLLM 0.33.0's MLAPrefillBackendEnum members that run on CUDA
PREFILL_BACKENDS = ("FLASH_ATTN", "FLASHINFER", "TRTLLM_RAGGED", "TOKENSPEED_MLA")

def _vllm_python() -> str:
    return vllm_python_or_skip(PYTHON, VLLM_VERSION, "ATTN_SELECT_VLLM_PYTHON")


def test_every_profile_on_every_device_agrees_with_the_mirror(tmp_path):
    from attn_select.cli import installed_engine as ie
    from attn_select.selector import profiles
    from attn_select.selector.engine_config import engine_config
    from attn_select.selector.errors import UserError
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides
    from attn_select.selector.vllm_installed import case_for, engine_case, installed_explanation, refusal_message

    python = _vllm_python()
    kernels = ie.installed_kernels(python)
    mirrors, cases, refusals = [], [], {}
    for model in profiles.model_profile_names():
        for device in profiles.device_profile_names():
            dev = profiles.load_device(device)
            facts = profiles.load_model(model, capability=dev.capability)
            folder = ie.model_folder(model, str(tmp_path))
            try:
                r = explain(facts, dev, kernels, Overrides())
            except UserError:
                # the mirror says vLLM refuses this engine config: vLLM must, with the same words
                refused = engine_config(facts, Overrides(), dev.capability, kernels).error
                assert refused is not None, (model, device)
                refusals[(model, device)] = refused.split(": ", 1)[1]
                mirrors.append((model, device, None))
                cases.append(engine_case(Overrides(), dev.capability, folder))
                continue
            mirrors.append((model, device, r))
            cases.append(case_for(r, folder))
    # The MLA prefill choice given explicitly, valid or not (vLLM's explicit path).
    for device in ("h100", "b200"):
        dev = profiles.load_device(device)
        facts = profiles.load_model("deepseek-v3", capability=dev.capability)
        for name in PREFILL_BACKENDS:
            r = explain(facts, dev, kernels, Overrides(mla_prefill_backend=name))
            mirrors.append((f"deepseek-v3 --mla-prefill-backend {name}", device, r))
            cases.append(case_for(r, ie.model_folder("deepseek-v3", str(tmp_path))))
    answer = ie.run_selection(python, cases, live=False, kernels=None, artifactory=kernels.trtllm_cubins)
    assert answer["vllm_version"] == VLLM_VERSION
    assert any("libcuda.so.1" in s for s in answer["stand_ins"]) or os.path.exists("/dev/nvidia0")
    differences = []
    prefill_compared = prefill_expected = 0
    for (model, device, r), case in zip(mirrors, answer["cases"]):
        if r is None:
            theirs = refusal_message(case["error"]) if case.get("error") else "(vLLM builds the engine config)"
            if theirs != refusals[(model, device)]:
                differences.append(f"{model} on {device}: the mirror refuses: {refusals[(model, device)]}; "
                                   f"vLLM {VLLM_VERSION}: {theirs}")
            continue
        one = {**answer, "cases": [case]}
        report = installed_explanation(r, one, python)
        assert len(report.groups) == len(r.groups) or report.error, (model, device)
        differences += [f"{model} on {device}: {d}" for d in report.differences]
        for g, mine in zip(r.groups, report.groups):
            prefill_expected += g.mla_prefill is not None
            prefill_compared += g.mla_prefill is not None and bool((mine.mla_prefill or {}).get("exposed"))
    assert len(mirrors) == len(profiles.model_profile_names()) * len(profiles.device_profile_names()) \
        + 2 * len(PREFILL_BACKENDS)
    # vLLM 0.33.0 has MLA prefill selection: every MLA layer's choice was compared
    assert prefill_expected > 2 * len(PREFILL_BACKENDS) and prefill_compared == prefill_expected
    assert not differences, "\n".join(differences)
    # vLLM 0.33.0 refuses gpt-oss's mxfp4 (min capability 80) on a T4: the refusal path was compared
    assert {("gpt-oss-20b", "t4"), ("gpt-oss-120b", "t4")} <= set(refusals)



def test_llm_compressor_kv_scheme_agrees_with_the_mirror(tmp_path):
    """An llm-compressor checkpoint's kv_cache_scheme: Attention.__init__
    makes an "auto" cache fp8 when the layer is built (the runner stands in
    for that one assignment), MLAAttention does not."""
    import json

    from attn_select.cli import installed_engine as ie
    from attn_select.selector import profiles
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides
    from attn_select.selector.vllm_installed import case_for, installed_explanation

    python = _vllm_python()
    kernels = ie.installed_kernels(python)
    fixtures = os.path.join(os.path.dirname(__file__), "fixtures", "configs")
    scheme = {"quant_method": "compressed-tensors", "format": "float-quantized", "ignore": ["lm_head"],
              "config_groups": {"group_0": {"targets": ["Linear"], "weights": {
                  "num_bits": 8, "type": "float", "strategy": "channel", "symmetric": True, "dynamic": False}}},
              "kv_cache_scheme": {"num_bits": 8, "type": "float", "strategy": "tensor", "dynamic": False,
                                  "symmetric": True}}
    runs, cases = [], []
    for name, cut in (("llama-3.1-8b", {"num_hidden_layers": 2}),
                      ("deepseek-v3", {"num_hidden_layers": 3, "first_k_dense_replace": 1})):
        with open(os.path.join(fixtures, name, "config.json")) as f:
            config = {**json.load(f), **cut, "quantization_config": scheme}
        folder = tmp_path / name
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        for device in ("h100", "b200"):
            dev = profiles.load_device(device)
            r = explain(profiles.load_model(str(folder), capability=dev.capability), dev, kernels, Overrides())
            runs.append((name, device, r))
            cases.append(case_for(r, str(folder)))
    answer = ie.run_selection(python, cases, live=False, kernels=None, artifactory=kernels.trtllm_cubins)
    differences, caches = [], {}
    for (name, device, r), case in zip(runs, answer["cases"]):
        report = installed_explanation(r, {**answer, "cases": [case]}, python)
        differences += [f"{name} on {device}: {d}" for d in report.differences]
        caches[name] = case["engine_config"]["cache_dtype"]
    assert not differences, "\n".join(differences)
    assert caches == {"llama-3.1-8b": "fp8", "deepseek-v3": "auto"}


def test_forced_mla_backends_read_a_non_mla_configs_fields_as_written(tmp_path):
    """A forced MLA backend's checks read hf_text_config's qk_nope_head_dim
    and index_topk off a non-MLA model as written (FlashInfer MLA: "but got
    []"); a non-integer index_topk no sparse layer reads refuses nothing."""
    import json

    from attn_select.cli import installed_engine as ie
    from attn_select.selector import profiles
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides
    from attn_select.selector.vllm_installed import case_for, installed_explanation

    python = _vllm_python()
    kernels = ie.installed_kernels(python)
    llama = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 512,
             "num_attention_heads": 8, "num_key_value_heads": 4, "num_hidden_layers": 2, "vocab_size": 1000,
             "intermediate_size": 1024, "torch_dtype": "bfloat16"}
    runs = [("qk_nope [] FLASHINFER_MLA", {**llama, "qk_nope_head_dim": []}, "b200", "FLASHINFER_MLA"),
            ("qk_nope 128 FLASHINFER_MLA", {**llama, "qk_nope_head_dim": 128}, "b200", "FLASHINFER_MLA"),
            ("index_topk 1.5", {**llama, "index_topk": 1.5}, "h100", None),
            # (without qk_nope_head_dim vLLM's sparse check raises AttributeError)
            ("index_topk 1.5 FLASHINFER_MLA_SPARSE", {**llama, "index_topk": 1.5, "qk_nope_head_dim": 128,
                                                      "qk_rope_head_dim": 64, "kv_lora_rank": 512}, "rtx5090",
             "FLASHINFER_MLA_SPARSE")]
    explained, cases = [], []
    for i, (name, config, device, backend) in enumerate(runs):
        folder = tmp_path / str(i)
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps(config))
        dev = profiles.load_device(device)
        r = explain(profiles.load_model(str(folder), capability=dev.capability), dev, kernels,
                    Overrides(backend=backend))
        explained.append((name, r))
        cases.append(case_for(r, str(folder)))
    answer = ie.run_selection(python, cases, live=False, kernels=None, artifactory=kernels.trtllm_cubins)
    differences = []
    for (name, r), case in zip(explained, answer["cases"]):
        report = installed_explanation(r, {**answer, "cases": [case]}, python)
        differences += [f"{name}: {d}" for d in report.differences]
    assert not differences, "\n".join(differences)
    reasons = [c.reasons for c in explained[0][1].groups[0].selection.candidates if c.name == "FLASHINFER_MLA"]
    assert any("but got []" in why for why in reasons[0]), reasons


def test_a_model_cases_block_size_warning_is_heard_after_the_engine_config(tmp_path):
    """--block-size 32 with an fp8 cache keeps FlashMLA out of an MLA layer on
    an H100 (block_size not supported alone): get_attn_backend_cls warns. The
    runner builds the engine config first, and vLLM configures its loggers
    again there: the warning must still be caught (found on the published
    DeepSeek-V2-Lite config, where the mirror's warning was reported as a
    difference)."""
    import json

    from attn_select.cli import installed_engine as ie
    from attn_select.selector import profiles
    from attn_select.selector.explain import explain
    from attn_select.selector.overrides import Overrides
    from attn_select.selector.vllm_installed import case_for, installed_explanation

    python = _vllm_python()
    kernels = ie.installed_kernels(python)
    fixtures = os.path.join(os.path.dirname(__file__), "fixtures", "configs")
    with open(os.path.join(fixtures, "deepseek-v3", "config.json")) as f:
        config = {**json.load(f), "num_hidden_layers": 3, "first_k_dense_replace": 1}
    (tmp_path / "config.json").write_text(json.dumps(config))
    dev = profiles.load_device("h100")
    ov = Overrides(block_size=32, kv_cache_dtype="fp8")
    r = explain(profiles.load_model(str(tmp_path), capability=dev.capability), dev, kernels, ov)
    assert r.groups[0].selection.warning.startswith("--block-size 32 precluded higher-priority backend(s) FLASHMLA")
    answer = ie.run_selection(python, [case_for(r, str(tmp_path))], live=False, kernels=None,
                              artifactory=kernels.trtllm_cubins)
    report = installed_explanation(r, answer, python)
    assert not report.differences, report.differences
    assert report.groups[0].warning == r.groups[0].selection.warning
