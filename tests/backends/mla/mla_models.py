"""MLA model contexts and queries shared by the MLA backend tests.

Dims are the hf_text_config values of the real models (config.json):
DeepSeek-V3 / R1: kv_lora_rank 512, qk_rope_head_dim 64, qk_nope_head_dim
128, v_head_dim 128, 128 attention heads. DeepSeek-V3.2 adds index_topk 2048.
The MLA layer's head_size is kv_lora_rank + qk_rope_head_dim = 576 and its
num_heads is the per-rank head count.
"""

from __future__ import annotations

from attn_select.selector.config import Capability, EngineContext, Kernels, Query, SelectorConfig

H100 = Capability(9, 0)
B200 = Capability(10, 0)
RTX_PRO_6000 = Capability(12, 0)
A100 = Capability(8, 0)


def deepseek_v3(tp: int = 8, **changes) -> EngineContext:
    ctx = EngineContext(
        has_model=True,
        model_head_size=576,
        model_num_heads=128 // tp,
        model_num_kv_heads=1,
        mla_qk_nope_head_dim=128,
        mla_qk_rope_head_dim=64,
        mla_v_head_dim=128,
        mla_kv_lora_rank=512,
    )
    return ctx._replace(**changes)


def deepseek_v32(tp: int = 8, **changes) -> EngineContext:
    return deepseek_v3(tp, **{"mla_index_topk": 2048, **changes})


def glm_nope(tp: int = 8, **changes) -> EngineContext:
    """A rope-free sparse MLA model (qk_rope_head_dim 0): head_size 512."""
    nope = {
        "model_head_size": 512,
        "mla_qk_nope_head_dim": 256,
        "mla_qk_rope_head_dim": 0,
        "mla_v_head_dim": 256,
        "mla_index_topk": 2048,
    }
    return deepseek_v3(tp, **{**nope, **changes})


def mla_cfg(
    kv_cache_dtype: str | None = "auto",
    head_size: int = 576,
    dtype: str = "bfloat16",
    block_size: int | None = None,
    **flags,
) -> SelectorConfig:
    return SelectorConfig(head_size, dtype, kv_cache_dtype, block_size, use_mla=True, **flags)


def query(cfg: SelectorConfig, cap: Capability, ctx: EngineContext | None = None,
          kernels: Kernels | None = None) -> Query:
    return Query(cfg, cap, kernels or Kernels(), ctx or EngineContext())
