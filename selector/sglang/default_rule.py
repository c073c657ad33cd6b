"""``get_default_attn_backend`` (sglang/srt/arg_groups/model_override_base.py):
the backend SGLang picks when none is given, and the branch that picked it.

Only NVIDIA CUDA branches can be taken here (no out-of-tree platform, HIP or
MPS); their ROCm/MPS arms are kept in the branch list for the record.
"""

from __future__ import annotations

from dataclasses import dataclass

from attn_select.selector.sglang.model import SGLangModel
from attn_select.selector.sglang.platform import Platform


@dataclass(frozen=True)
class DefaultRule:
    backend: str
    branch: str  # which branch of get_default_attn_backend, in words


def no_spec_or_topk_one(view) -> bool:
    """``is_no_spec_infer_or_topk_one``: no EAGLE tree (topk unset), or a
    chain (topk 1) on unpaged KV (page size 1 or unset)."""
    topk = view.speculative_eagle_topk
    return topk is None or (topk == 1 and (view.page_size == 1 or view.page_size is None))


def _forces_eagle_topk_one(algorithm: object) -> bool:
    """DFLASH declares its topk (1) later, so the default rule treats it as set."""
    return str(algorithm).upper() == "DFLASH"


def default_attention_backend(view, platform: Platform, model: SGLangModel) -> DefaultRule:
    """``view`` holds the current flag values (attention fields, page size,
    speculative settings)."""
    if model.is_whisper:
        return DefaultRule("flashinfer", "Whisper: flashinfer, for cross-attention CUDA graph support")
    topk = view.speculative_eagle_topk
    spec_ok = no_spec_or_topk_one(view)
    spec_why = ("no speculative decoding tree" if topk is None
                else f"speculative_eagle_topk {topk} with page_size {view.page_size}")
    cuda = platform.cuda_text()
    if not model.use_mla:
        if platform.is_hopper_with_cuda_12_3 and spec_ok:
            return DefaultRule("fa3", f"MHA on Hopper with CUDA {cuda} >= 12.3 and {spec_why}: fa3")
        if (platform.is_sm100 and spec_ok
                and (view.speculative_algorithm is None or topk is not None
                     or _forces_eagle_topk_one(view.speculative_algorithm))):
            if model.has_asymmetric_kv:
                return DefaultRule("fa4", f"MHA on SM100 with CUDA {cuda} >= 12.8, {spec_why}, K/V head dims "
                                          f"{model.head_dim}/{model.v_head_dim} differ: fa4 "
                                          "(trtllm_mha needs equal K/V widths)")
            return DefaultRule("trtllm_mha", f"MHA on SM100 with CUDA {cuda} >= 12.8 and {spec_why}: trtllm_mha")
        why = _why_not_fast_path(view, platform, spec_ok, spec_why)
        if platform.has_flashinfer and not model.has_attention_sinks:
            return DefaultRule("flashinfer", f"MHA, {why}; flashinfer is installed and the model has no "
                                             "attention sinks: flashinfer")
        if not platform.has_flashinfer:
            return DefaultRule("triton", f"MHA, {why}; flashinfer is not installed: triton")
        return DefaultRule("triton", f"MHA, {why}; the model has attention sinks, which flashinfer "
                                     "does not support: triton")
    if platform.is_hopper_with_cuda_12_3:
        return DefaultRule("fa3", f"MLA on Hopper with CUDA {cuda} >= 12.3: fa3")
    if platform.is_sm100:
        return DefaultRule("flashinfer", f"MLA on SM100 with CUDA {cuda} >= 12.8: flashinfer")
    return DefaultRule("triton", f"MLA, not Hopper with CUDA >= 12.3 nor SM100 with CUDA >= 12.8 "
                                 f"({_arch_text(platform)}): triton")


def _arch_text(platform: Platform) -> str:
    return f"SM{platform.device_sm}, CUDA {platform.cuda_text()}"


def _why_not_fast_path(view, platform: Platform, spec_ok: bool, spec_why: str) -> str:
    """Why neither the Hopper (fa3) nor the SM100 (trtllm_mha) branch applied."""
    cap = platform.capability
    if cap.major == 9:
        if not platform.is_hopper_with_cuda_12_3:
            return f"Hopper but CUDA {platform.cuda_text()} < 12.3"
        return f"Hopper with {spec_why} (fa3 needs no tree, or topk 1 on page size 1)"
    if cap.major == 10:
        if not platform.is_sm100:
            return f"SM100 but CUDA {platform.cuda_text()} < 12.8"
        if not spec_ok:
            return f"SM100 with {spec_why} (trtllm_mha needs no tree, or topk 1 on page size 1)"
        return (f"SM100 with --speculative-algorithm {view.speculative_algorithm} and no "
                "--speculative-eagle-topk yet (trtllm_mha needs the topk known)")
    return f"neither Hopper nor SM100 ({_arch_text(platform)})"
