"""The deployments file takes vLLM's names for its overrides:
tensor_parallel_size, attention_backend, decode_context_parallel_size,
prefill_context_parallel_size, max_model_len as vLLM writes it, vLLM's dtype values and an attention_config
mapping; revision picks a cached Hugging Face snapshot. The lockfile records
attn-select's names, so the same deployment locks the same either way."""

from __future__ import annotations

from pathlib import Path

import pytest

from attn_select.selector import lock as L
from tests.selector.test_hub_cache import OTHER, cache_repo, profile_config


def lock_text(text: str, base: Path = Path(".")) -> str:
    deps, doc = L.parse_deployments(text, "deployments.yaml")
    lock, paths = L.lock_deployments(deps, doc, base, base)
    return L.dump_lock(lock, paths)


def deployment(overrides: str, model: str = "llama-3.1-8b") -> str:
    return f"deployments:\n  - name: a\n    model: {model}\n    device: h100\n    overrides:\n{overrides}"


def test_vllm_names_lock_as_attn_selects():
    # an MLA model: vLLM refuses -dcp for a GQA model with fewer TP ranks than KV heads
    ours = lock_text(deployment("      tp: 2\n      backend: FLASHINFER_MLA\n      dcp_size: 2\n"
                                "      flash_attn_version: 2\n      use_trtllm_attention: false\n", "deepseek-v3"))
    theirs = lock_text(deployment("      tensor_parallel_size: 2\n      decode_context_parallel_size: 2\n"
                                  "      attention_config: {backend: FLASHINFER_MLA, flash_attn_version: 2,\n"
                                  "                         use_trtllm_attention: false}\n", "deepseek-v3"))
    assert theirs == ours
    also = lock_text(deployment("      tensor_parallel_size: 2\n      attention_backend: FLASHINFER_MLA\n"
                                "      decode_context_parallel_size: 2\n"
                                '      attention_config: \'{"flash_attn_version": 2, "use_trtllm_attention": false}\'\n',
                                "deepseek-v3"))
    assert also == ours
    pcp = lock_text(deployment("      tp: 2\n      pcp_size: 2\n", "deepseek-v3"))
    assert lock_text(deployment("      tp: 2\n      prefill_context_parallel_size: 2\n", "deepseek-v3")) == pcp
    assert "pcp_size: 2" in pcp


def test_max_model_len_and_dtype_as_vllm_writes_them():
    text = lock_text(deployment("      max_model_len: 32k\n      dtype: half\n"))
    assert "max_model_len: 32000" in text and "dtype: half" in text
    assert lock_text(deployment("      dtype: half\n")).split("groups:")[1] == \
        lock_text(deployment("      dtype: float16\n")).split("groups:")[1]
    assert lock_text(deployment("      attention_backend: auto\n")) == lock_text(deployment("      {}\n"))


def test_the_lock_checks_clean_with_vllm_names():
    text = lock_text(deployment("      tensor_parallel_size: 2\n      max_model_len: 8K\n"))
    lock, doc = L.parse_lockfile(text, "x.lock")
    assert L.run_check(lock, doc, Path(".")).ok


@pytest.mark.parametrize("overrides, line, words", [
    ("      tp: 2\n      tensor_parallel_size: 2\n", 5, "tp and tensor_parallel_size are one field"),
    ("      backend: FLASHINFER\n      attention_config: {backend: TRITON_ATTN}\n", 5,
     "attention_backend and attention_config.backend are mutually exclusive"),
    ("      flash_attn_version: 3\n      attention_config: {flash_attn_version: 2}\n", 5,
     "flash_attn_version and attention_config set the same value"),
    ("      attention_config: {flash_attn_max_num_splits_for_cuda_graph: 16}\n", 5,
     "attention_config.flash_attn_max_num_splits_for_cuda_graph"),
    ("      attention_config: {mla_prefill_backend: FLASHINFR}\n", 5, "did you mean FLASHINFER"),
    ("      attention_config: {flash_attn_verison: 2}\n", 5, "Unexpected keyword argument"),
    ("      attention_config: {flash_attn_version: 5}\n", 5, "Input should be 2, 3 or 4"),
    ("      tensor_parallel_size: two\n", 6, "overrides.tensor_parallel_size: Input should be a valid integer"),
    ("      max_model_len: lots\n", 5, "is not a length"),
    ("      max_model_len: 0\n", 6, "max_model_len must be a positive integer"),
    ("      dtype: bf16\n", 6, "unknown dtype 'bf16'; choose from auto, half"),
])
def test_bad_vllm_names_are_one_line_at_their_line(overrides, line, words):
    with pytest.raises(L.BadInput) as exc:
        L.parse_deployments(deployment(overrides), "deploy.yaml")
    msg = str(exc.value)
    assert msg.startswith(f"deploy.yaml:{line}: ") and words in msg and "\n" not in msg, msg


def test_revision_of_a_cached_id(monkeypatch, tmp_path):
    for var in ("HUGGINGFACE_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    cache_repo(tmp_path / "hub", "acme/m", profile_config("llama-3.1-8b"))
    cache_repo(tmp_path / "hub", "acme/m", profile_config("gemma-3-27b"), commit=OTHER, ref="v2")
    base = "deployments:\n  - name: a\n    model: acme/m\n    device: h100\n"
    main_lock, v2_lock = lock_text(base, tmp_path), lock_text(base + "    revision: v2\n", tmp_path)
    assert "revision: v2" in v2_lock and "sliding" in v2_lock and "sliding" not in main_lock
    lock, doc = L.parse_lockfile(v2_lock, "x.lock")
    assert L.run_check(lock, doc, tmp_path).ok
    with pytest.raises(L.BadInput, match="'revision' needs 'model'"):
        L.parse_deployments('deployments:\n  - name: a\n    selector: {head_size: 64}\n    capability: "9.0"\n'
                            "    revision: v2\n", "d.yaml")
