"""SGLang 0.5.23's per-architecture declarations that touch the attention
fields (``sglang/srt/arg_groups/model_overrides/*.py`` and the two providers
in ``overrides.py``), collected by ``collect_model_override_declarations``.

Every provider reads the state as it was before any of them ran (SGLang
collects them all, then appends them in order; the last writer wins).
Only the fields attn-select follows are returned: attention backends, page
size, KV-cache dtype, the Mamba radix-cache strategy and the speculative
draft backend; MoE, quantization and memory declarations are left out.
Each provider returns ``(declarations, why)``; raises are SGLang's.
"""

from __future__ import annotations

from typing import Callable

from attn_select.selector.sglang.default_rule import default_attention_backend
from attn_select.selector.sglang.model import SGLangModel
from attn_select.selector.sglang.platform import Platform
from attn_select.selector.sglang.state import raise_value

Decl = tuple[dict, str]


def backends_unset(v) -> bool:
    """is_attention_backend_not_set"""
    return v.attention_backend is None and v.prefill_attention_backend is None and v.decode_attention_backend is None


def _beam(v, p: Platform, m: SGLangModel) -> Decl:
    if backends_unset(v) and (p.is_sm90 or p.is_sm100 or p.is_sm120):
        return {"attention_backend": "trtllm_mha"}, "Beam serves on trtllm_mha on SM90/SM100/SM120"
    return {}, ""


def _deepseek_family(v, p: Platform, m: SGLangModel) -> Decl:
    out: dict = {}
    if m.is_deepseek_dsa:
        why = []
        if backends_unset(v):
            out["attention_backend"] = "dsa"
            why.append("DSA model (index_topk): attention backend dsa")
        # CUDA: a logical page owns a whole pooled index group.
        out["page_size"] = 64 * m.index_kpool
        why.append(f"DeepSeek DSA page size 64 x index_kpool {m.index_kpool}")
        return out, "; ".join(why)
    if p.is_sm100 and backends_unset(v):
        return {"attention_backend": "trtllm_mla"}, "DeepSeek V3/R1 (MLA) on SM100: trtllm_mla"
    return {}, ""


def _embedding_gemma2(v, p: Platform, m: SGLangModel) -> Decl:
    if backends_unset(v) or v.attention_backend is None:
        return {"attention_backend": "triton"}, "EmbeddingGemma2 defaults to triton"
    return {}, ""


def _exaone(v, p: Platform, m: SGLangModel) -> Decl:
    if m.sliding_window_pattern is None or v.attention_backend is not None:
        return {}, ""
    if p.is_sm100:
        return {"attention_backend": "trtllm_mha"}, "Exaone with sliding_window_pattern on SM100: trtllm_mha"
    if p.device_sm >= 80:
        return {"attention_backend": "fa3"}, f"Exaone with sliding_window_pattern on SM{p.device_sm} (>= 80): fa3"
    return {"attention_backend": "triton"}, "Exaone with sliding_window_pattern below SM80: triton"


def _falcon_h1_jet(v, p: Platform, m: SGLangModel) -> Decl:
    if p.is_sm100 and v.attention_backend is None:
        return {"attention_backend": "triton"}, f"{m.arch} on SM100: triton"
    return {}, ""


def _gemma4(v, p: Platform, m: SGLangModel) -> Decl:
    diffusion = m.arch == "DiffusionGemmaForBlockDiffusion"
    default = "triton" if diffusion else ("trtllm_mha" if p.is_sm100 else "triton")
    where = "diffusion Gemma" if diffusion else ("Gemma4 on SM100" if p.is_sm100 else "Gemma4 off SM100")
    if backends_unset(v) or v.attention_backend is None:
        return {"attention_backend": default}, f"{where}: {default}"
    return {}, ""


def _granite_moe_hybrid(v, p: Platform, m: SGLangModel) -> Decl:
    if "mamba" in m.layer_types and p.is_sm100 and v.attention_backend is None:
        return {"attention_backend": "flashinfer"}, "Granite hybrid (Mamba layers) on SM100: flashinfer"
    return {}, ""


def _gpt_oss(v, p: Platform, m: SGLangModel) -> Decl:
    if not backends_unset(v):
        return {}, ""
    if p.is_sm100:
        return {"attention_backend": "trtllm_mha"}, "GPT-OSS on SM100: trtllm_mha"
    if p.is_sm90:
        return {"attention_backend": "fa3"}, "GPT-OSS on SM90: fa3"
    return {"attention_backend": "triton"}, "GPT-OSS off SM90/SM100 (attention sinks): triton"


def _inkling(v, p: Platform, m: SGLangModel) -> Decl:
    out: dict = {}
    if v.mamba_radix_cache_strategy == "auto":
        out["mamba_radix_cache_strategy"] = "extra_buffer"
    if not v.disable_radix_cache:
        out["uses_mamba_radix_cache"] = True
    if backends_unset(v):
        out["attention_backend"] = "fa4" if (p.is_sm90 or p.is_sm100) else "triton"
    return out, "Inkling runs only fa4 (SM90/SM100) or triton; extra-buffer Mamba strategy"


def _iquest_q1(v, p: Platform, m: SGLangModel) -> Decl:
    src = "_iquest_q1_overrides"
    if any(b not in (None, "fa3") for b in (v.attention_backend, v.prefill_attention_backend,
                                             v.decode_attention_backend)):
        raise_value(src, "IQuestQ1 applies its attention sink from the softmax LSE and "
                         "requires FA3 attention for both prefill and decode.")
    if v.speculative_algorithm is not None:
        if v.speculative_algorithm.upper() not in ("EAGLE", "NEXTN"):
            raise_value(src, "IQuest Q1 MTP requires serial EAGLE or NEXTN drafting.")
    if v.speculative_eagle_topk is not None and v.speculative_eagle_topk > 1:
        raise_value(src, "IQuestQ1 speculative decoding requires --speculative-eagle-topk 1.")
    why = "IQuestQ1 needs FA3 for prefill and decode"
    if backends_unset(v):
        return {"attention_backend": "fa3"}, why
    out: dict = {}
    if v.attention_backend is None and v.prefill_attention_backend is None:
        out["prefill_attention_backend"] = "fa3"
    if v.attention_backend is None and v.decode_attention_backend is None:
        out["decode_attention_backend"] = "fa3"
    return out, why


def _kimi_k3(v, p: Platform, m: SGLangModel) -> Decl:
    # No decode context parallelism here (--dcp-size 1), no DSPARK.
    if not (p.is_sm100 and p.device_sm in (100, 103)):
        return {}, ""
    if not backends_unset(v):
        return {}, ""
    return ({"decode_attention_backend": "trtllm_mla", "prefill_attention_backend": "trtllm_mla"},
            "Kimi-K3 on SM100/SM103: trtllm_mla for prefill and decode")


def _lfm2(v, p: Platform, m: SGLangModel) -> Decl:
    if p.is_sm100 and v.attention_backend is None:
        return {"attention_backend": "flashinfer"}, "LFM2 on SM100: flashinfer"
    return {}, ""


def _llama4(v, p: Platform, m: SGLangModel) -> Decl:
    if v.attention_backend is not None:
        return {}, ""
    if p.is_sm100:
        return {"attention_backend": "trtllm_mha"}, "Llama4 on SM100: trtllm_mha"
    if p.is_sm90:
        return {"attention_backend": "fa3"}, "Llama4 on SM90: fa3"
    return {"attention_backend": "triton"}, "Llama4 on other platforms: triton"


def _mimo_v2(v, p: Platform, m: SGLangModel) -> Decl:
    if p.is_sm100 and backends_unset(v):
        return {"attention_backend": "fa4"}, "MiMoV2 on SM100: fa4"
    return {}, ""


def _minicpm_sala(v, p: Platform, m: SGLangModel) -> Decl:
    # SGLANG_MINICPM_FORCE_DENSE unset (its default).
    if m.minicpm_sparse and backends_unset(v):
        backend = "minicpm_flashinfer" if p.is_blackwell else "minicpm_flashattn"
        return {"attention_backend": backend}, f"MiniCPM sparse attention: {backend}"
    return {}, ""


def _minicpm_v4_6(v, p: Platform, m: SGLangModel) -> Decl:
    if p.is_sm100 and v.attention_backend is None:
        return {"attention_backend": "triton"}, f"{m.arch} on SM100: triton"
    return {}, ""


def _moss_vl(v, p: Platform, m: SGLangModel) -> Decl:
    out: dict = {}
    if backends_unset(v):
        out["prefill_attention_backend"] = "flashinfer"
    prefill = out.get("prefill_attention_backend") or (v.prefill_attention_backend or v.attention_backend)
    if prefill != "flashinfer":
        from attn_select.selector.sglang.state import check

        check(False, "_moss_vl_overrides", "MossVLForConditionalGeneration requires flashinfer prefill "
                                           "attention backend for cross-attention custom mask support.")
    return out, "Moss-VL cross-attention needs the flashinfer prefill backend"


def _nemotron_h(v, p: Platform, m: SGLangModel) -> Decl:
    if not (p.is_blackwell and backends_unset(v)):
        return {}, ""
    out: dict = {}
    if v.speculative_algorithm is not None:
        algo = v.speculative_algorithm.upper()
        if p.is_sm100 and v.speculative_eagle_topk in (None, 1):
            out["attention_backend"] = "trtllm_mha"
            if v.page_size is None:
                out["page_size"] = 64
            if v.mamba_radix_cache_strategy == "auto":
                out["mamba_radix_cache_strategy"] = "extra_buffer"
            if v.speculative_draft_attention_backend is None and algo in ("EAGLE", "NEXTN", "DSPARK"):
                out["speculative_draft_attention_backend"] = "trtllm_mha"
            return out, "Nemotron-H on SM100 with a chain draft: trtllm_mha"
        out["attention_backend"] = "triton"
        if v.speculative_draft_attention_backend is None and algo in ("EAGLE", "NEXTN", "DFLASH", "DSPARK"):
            out["speculative_draft_attention_backend"] = "flashinfer"
        return out, "Nemotron-H on Blackwell with speculative decoding (not SM100 chain): triton"
    if p.is_sm100:
        return {"attention_backend": "trtllm_mha"}, "Nemotron-H on SM100: trtllm_mha"
    return {}, ""


def _olmo2(v, p: Platform, m: SGLangModel) -> Decl:
    if v.attention_backend is not None:
        return {}, ""
    if p.is_sm100:
        return {"attention_backend": "trtllm_mha"}, "Olmo2/3 on SM100: trtllm_mha"
    if p.device_sm >= 80:
        return {"attention_backend": "fa3"}, f"Olmo2/3 on SM{p.device_sm} (>= 80): fa3"
    return {"attention_backend": "triton"}, "Olmo2/3 below SM80: triton"


def _mamba_extra_buffer(v) -> bool:
    """mamba_extra_buffer_of"""
    return v.disable_radix_cache is False and v.mamba_radix_cache_strategy in ("extra_buffer", "extra_buffer_lazy")


def _qwen3_5_hybrid(v, p: Platform, m: SGLangModel) -> Decl:
    if not p.is_sm100 or v.attention_backend is not None:
        return {}, ""
    rule = default_attention_backend(v, p, m)
    backend = "triton"
    # trtllm_mha needs page size > 1; page size 1 is required only with the
    # radix cache on, no extra buffer and no speculative decoding.
    if rule.backend == "trtllm_mha" and not (
        not _mamba_extra_buffer(v) and not v.disable_radix_cache and v.speculative_algorithm is None
    ):
        backend = "trtllm_mha"
    why = (f"Qwen3-Next/Qwen3.5 hybrid on SM100: the default rule gives {rule.backend}; "
           + ("trtllm_mha with page 64" if backend == "trtllm_mha" else
              "triton with page 1 (trtllm_mha only when the default rule picks it and paging is possible: "
              "Mamba extra buffer, no radix cache or speculative decoding)"))
    return {"attention_backend": backend, "page_size": 64 if backend == "trtllm_mha" else 1}, why


def _qwen3vl_hopper_serving(v, p: Platform, m: SGLangModel) -> Decl:
    mem = p.gpu_memory_mib
    if not p.is_sm90 or mem is None or mem < 60 * 1024:
        return {}, ""
    if not (m.is_multimodal and m.model_type in ("qwen3_vl", "qwen3_vl_moe")):
        return {}, ""
    if v.attention_backend is None and v.decode_attention_backend is None:
        return ({"decode_attention_backend": "flashinfer"},
                "Qwen3-VL on a Hopper GPU with >= 60 GiB: profiled serving defaults, flashinfer decode")
    return {}, ""


def _muse_spark(v, p: Platform, m: SGLangModel) -> Decl:
    if v.kv_cache_dtype == "auto":
        return {"kv_cache_dtype": "fp8_e4m3"}, "Muse Spark uses an fp8_e4m3 KV cache by default"
    return {}, ""


def _step3p(v, p: Platform, m: SGLangModel) -> Decl:
    if backends_unset(v):
        if p.is_blackwell:
            return {"attention_backend": "fa4"}, "Step3p7 on Blackwell: fa4"
        if p.is_sm90:
            return {"attention_backend": "fa3"}, "Step3p7 on Hopper: fa3"
    return {}, ""


Provider = Callable[..., Decl]

_DEEPSEEK_FAMILY = (
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration",
    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
    "Glm5NextForConditionalGeneration", "HYV4ForCausalLM", "HYV4ForCausalLMNextN",
    "LongcatFlashForCausalLM", "LongcatFlashForCausalLMNextN", "Dots3NoteForCausalLM",
)

# architecture -> [(SGLang source name, provider)], in registration order.
_BY_ARCH: dict[str, list[tuple[str, Provider]]] = {}


def _register(source: str, fn: Provider, *archs: str) -> None:
    for a in archs:
        _BY_ARCH.setdefault(a, []).append((source, fn))


# model_overrides/__init__.py imports its modules alphabetically; overrides.py
# registers Muse Spark after them.
_register("_beam_overrides", _beam, "BeamForCausalLM")
_register("_deepseek_family_overrides", _deepseek_family, *_DEEPSEEK_FAMILY)
_register("_embedding_gemma2_overrides", _embedding_gemma2, "EmbeddingGemma2Model")
_register("_exaone_overrides", _exaone, "Exaone4ForCausalLM", "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM")
_register("_falcon_h1_jet_overrides", _falcon_h1_jet, "FalconH1ForCausalLM", "JetNemotronForCausalLM",
          "JetVLMForConditionalGeneration")
_register("_gemma4_overrides", _gemma4, "Gemma4ForConditionalGeneration", "Gemma4ForCausalLM",
          "Gemma4UnifiedForConditionalGeneration", "DiffusionGemmaForBlockDiffusion")
_register("_granite_moe_hybrid_overrides", _granite_moe_hybrid, "GraniteMoeHybridForCausalLM")
_register("_gpt_oss_overrides", _gpt_oss, "GptOssForCausalLM")
_register("_inkling_overrides", _inkling, "InklingForConditionalGeneration", "InklingForConditionalGenerationMTP")
_register("_iquest_q1_overrides", _iquest_q1, "IQuestQ1ForCausalLM", "IQuestQ1MTP")
_register("_kimi_k3_overrides", _kimi_k3, "KimiK3ForConditionalGeneration")
_register("_lfm2_overrides", _lfm2, "Lfm2ForCausalLM", "Lfm2MoeForCausalLM")
_register("_llama4_overrides", _llama4, "Llama4ForConditionalGeneration", "Llama4ForCausalLM")
_register("_mimo_v2_overrides", _mimo_v2, "MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM")
_register("_minicpm_sala_overrides", _minicpm_sala, "MiniCPMForCausalLM", "MiniCPMSALAForCausalLM")
_register("_minicpm_v4_6_overrides", _minicpm_v4_6, "MiniCPMV4_7ForConditionalGeneration",
          "MiniCPMV4_6ForConditionalGeneration")
_register("_moss_vl_overrides", _moss_vl, "MossVLForConditionalGeneration")
_register("_nemotron_h_overrides", _nemotron_h, "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
          "NemotronH_Omni_Reasoning_V3")
_register("_olmo2_overrides", _olmo2, "Olmo2ForCausalLM")
_register("_qwen3_5_hybrid_overrides", _qwen3_5_hybrid, "Qwen3NextForCausalLM",
          "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration",
          "InternS2MobiusForConditionalGeneration", "Qwen3_5ForConditionalGeneration")
_register("_qwen3vl_hopper_serving_overrides", _qwen3vl_hopper_serving, "Qwen3VLForConditionalGeneration",
          "Qwen3VLMoeForConditionalGeneration")
_register("_muse_spark_overrides", _muse_spark, "MuseSparkForConditionalGeneration")

# register_model_override_predicate: matched after the exact-keyed ones.
_PREDICATES: list[tuple[Callable[[str], bool], str, Provider]] = [
    (lambda a: "Step3p5ForCausalLM" in a or "Step3p7ForConditionalGeneration" in a,
     "_step3p_overrides", _step3p),
]

# Architectures whose SGLang declarations read inputs attn-select does not
# have (quantization configs, QSA profiles, DeepSeek-V4 kernels, HRM text).
NOT_MODELLED = {
    "DeepseekV4ForCausalLM": "its dsv4 kernel choice and V4 validations",
    "MiniMaxM3SparseForCausalLM": "its quantization-dependent defaults",
    "MiniMaxM3SparseForConditionalGeneration": "its quantization-dependent defaults",
    "Qwen4ExpForConditionalGeneration": "its compressed-QSA profile",
    "GigaChat35ForCausalLM": "its registered linear-attention spec",
    "HrmTextForCausalLM": "its bidirectional prefix forcing",
}


def providers(arch: str) -> list[tuple[str, Provider]]:
    found = list(_BY_ARCH.get(arch, ()))
    found += [(src, fn) for pred, src, fn in _PREDICATES if pred(arch)]
    return found
