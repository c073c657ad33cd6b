"""The resolution hooks and post-process passes of SGLang 0.5.23 that decide
the attention fields, one function each, named after SGLang's. Each reads
and declares through ``State``; raises are SGLang's, with its text.

Sources: ``arg_groups/serving_hook.py`` (deprecated aliases),
``model_hook.py`` (model-specific adjustments), ``attention_hook.py``,
``overrides.py`` (the passes), ``kv_cache_hook.py``, ``speculative_hook.py``.
"""

from __future__ import annotations

from attn_select.selector.sglang import choices as C
from attn_select.selector.sglang import model_overrides as MO
from attn_select.selector.sglang.default_rule import DefaultRule, default_attention_backend
from attn_select.selector.sglang.model import SGLangModel
from attn_select.selector.sglang.platform import Platform
from attn_select.selector.sglang.state import SGLangError, State, check, raise_value


def attention_backends_of(s: State) -> tuple[object, object]:
    """(prefill, decode): the split fields, falling back to attention_backend."""
    prefill = s.prefill_attention_backend if s.prefill_attention_backend else s.attention_backend
    decode = s.decode_attention_backend if s.decode_attention_backend else s.attention_backend
    return prefill, decode


# --- serving_hook.handle_deprecated_args ---------------------------------------


def handle_deprecated_args(s: State) -> None:
    renamed: dict = {}
    for attr in ("attention_backend", "decode_attention_backend", "prefill_attention_backend",
                 "speculative_draft_attention_backend"):
        old = s.get(attr)
        if old in C.BACKEND_ALIASES:
            renamed[attr] = C.BACKEND_ALIASES[old]
    if renamed.get("prefill_attention_backend") == "cutedsl_mla":
        renamed["prefill_attention_backend"] = "trtllm_mla"  # cutedsl_mla is decode-only
    if "tokenspeed_mla" in (s.attention_backend, s.decode_attention_backend):
        if s.kv_cache_dtype != "fp8_e4m3":
            renamed["kv_cache_dtype"] = "fp8_e4m3"
        if s.speculative_algorithm is not None and s.speculative_attention_mode == "prefill":
            renamed["speculative_attention_mode"] = "decode"
    if renamed:
        s.declare("_handle_deprecated_args", "deprecated backend name renamed", **renamed)


# --- model_hook.handle_model_specific_adjustments ---------------------------------

# model_hook's DeepSeek branch (its own list, not _DEEPSEEK_FAMILY_ARCHS)
_DEEPSEEK_HOOK_ARCHS = (
    "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "KimiK25ForConditionalGeneration",
    "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM",
    "Glm5NextForConditionalGeneration", "HYV4ForCausalLM", "HYV4ForCausalLMNextN",
    "LongcatFlashForCausalLM", "Dots3NoteForCausalLM",
)
_DEEPSEEK_FAMILY_ARCHS = frozenset(_DEEPSEEK_HOOK_ARCHS) | {"LongcatFlashForCausalLMNextN"}

# overrides._MAMBA_RADIX_CACHE_ARCHS / _MAMBA_EXTRA_BUFFER_ARCHS
_MAMBA_RADIX_ARCHS = frozenset({
    "KimiLinearForCausalLM", "KimiK3ForConditionalGeneration", "BailingMoeV2_5ForCausalLM",
    "BailingMoeV3ForCausalLM", "BailingMoeV3VLForConditionalGeneration", "Qwen3NextForCausalLM",
    "Qwen3_5MoeForConditionalGeneration", "InternS2PreviewForConditionalGeneration",
    "InternS2MobiusForConditionalGeneration", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForCausalLM",
    "Qwen3_5ForCausalLM", "Qwen4ExpForConditionalGeneration", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3", "FalconH1ForCausalLM", "JetNemotronForCausalLM",
    "JetVLMForConditionalGeneration", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM", "ZayaForCausalLM",
    "Glm5NextForConditionalGeneration",
})
_MAMBA_EXTRA_BUFFER_ARCHS = frozenset({
    "KimiLinearForCausalLM", "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForConditionalGeneration",
    "Qwen3_5MoeForCausalLM", "Qwen3_5ForCausalLM", "Qwen3NextForCausalLM", "Qwen4ExpForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM",
    "BailingMoeV3VLForConditionalGeneration", "FalconH1ForCausalLM", "GraniteMoeHybridForCausalLM",
    "Glm5NextForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Omni_Reasoning_V3", "KimiK3ForConditionalGeneration", "InklingForConditionalGeneration",
    "InklingForConditionalGenerationMTP",
})
MAMBA_TRACK_INTERVAL = 256  # --mamba-track-interval default
FLA_CHUNK_SIZE = 64


def _mamba_extra_buffer(s: State) -> bool:
    return s.disable_radix_cache is False and s.mamba_radix_cache_strategy in ("extra_buffer", "extra_buffer_lazy")


def _mamba_radix_cache_resolution(s: State, m: SGLangModel) -> None:
    """overrides._mamba_radix_cache_resolution (hybrid Mamba models)."""
    in_branch = m.arch in _MAMBA_RADIX_ARCHS
    if m.arch == "GraniteMoeHybridForCausalLM":
        in_branch = "mamba" in m.layer_types
    if not in_branch or s.disable_radix_cache:
        return
    declared: dict = {"uses_mamba_radix_cache": True}
    why = "hybrid Mamba model with the radix cache on"
    if s.mamba_radix_cache_strategy == "auto":
        wants = (not s.disable_overlap_schedule) or (s.page_size is not None and s.page_size > 1)
        if wants and m.arch in _MAMBA_EXTRA_BUFFER_ARCHS and s.linear_attn_backend == "triton":
            declared["mamba_radix_cache_strategy"] = "extra_buffer"
            why += ": extra_buffer strategy (overlap schedule on, triton linear attention)"
        else:
            declared["mamba_radix_cache_strategy"] = "no_buffer"
            declared["disable_overlap_schedule"] = True
            why += ": no_buffer strategy, overlap schedule off"
    s.declare("_mamba_radix_cache_resolution", why, **declared)


def handle_mamba_radix_cache(s: State, m: SGLangModel) -> None:
    """model_hook.handle_mamba_radix_cache: resolution, then its validators."""
    _mamba_radix_cache_resolution(s, m)
    src = "handle_mamba_radix_cache"
    if not s.uses_mamba_radix_cache:
        if _mamba_extra_buffer(s):
            raise_value(src, f"--mamba-radix-cache-strategy {s.mamba_radix_cache_strategy} "
                             f"needs mamba state, got {m.arch}.")
        return
    if _mamba_extra_buffer(s):
        # validate_mamba_extra_buffer
        supports = ((m.arch in _MAMBA_EXTRA_BUFFER_ARCHS) and s.linear_attn_backend == "triton")
        check(supports, "validate_mamba_extra_buffer", f"extra_buffer is not supported for {m.arch}; use no_buffer.")
        if s.speculative_num_draft_tokens is not None:
            check(MAMBA_TRACK_INTERVAL >= s.speculative_num_draft_tokens, "validate_mamba_extra_buffer")
        if s.page_size is not None:
            check(MAMBA_TRACK_INTERVAL % s.page_size == 0, "validate_mamba_extra_buffer")
            chunk = m.mamba_chunk_size if m.mamba_chunk_size is not None else FLA_CHUNK_SIZE
            page = s.page_size
            check(max(chunk, page) % min(chunk, page) == 0, "mamba_cache_chunk_size",
                  "For SSM models, either chunk_size or page_size must be divisible by the other, "
                  f"got chunk_size={chunk!r}, page_size={page!r}")
    else:
        # validate_mamba_no_buffer
        check(s.page_size in (1, None), "validate_mamba_no_buffer", "no_buffer only supports page_size=1.")
        check(bool(s.disable_overlap_schedule), "validate_mamba_no_buffer",
              "no_buffer do not support overlap schedule. Try to set disable_overlap_schedule=True.")
        check(s.attention_backend != "trtllm_mha", "validate_mamba_no_buffer",
              "no_buffer do not support trtllm_mha attention backend.")


def collect_model_overrides(s: State, p: Platform, m: SGLangModel) -> None:
    """collect_model_override_declarations: every provider reads the state
    before any of them; their declarations apply in order."""
    collected = []
    for source, fn in MO.providers(m.arch):
        declared, why = fn(s, p, m)
        if declared:
            collected.append((source, declared, why))
    for source, declared, why in collected:
        s.declare(source, why, **declared)


def _dsa_kv_cache_dtype_default(s: State, p: Platform, m: SGLangModel) -> None:
    major = p.capability.major
    kv = s.kv_cache_dtype
    sinks = m.dsa_learnable_sink
    if sinks and kv not in ("auto", "bf16", "bfloat16"):
        raise_value("_dsa_kv_cache_dtype_default", "Learnable DSA attention sinks require a bfloat16 KV cache; "
                                                   f"got kv_cache_dtype={kv}.")
    why = ""
    if kv == "auto":
        kv = "fp8_e4m3" if major >= 10 and not sinks else "bfloat16"
        why = f"DeepSeek DSA KV cache on SM{major}x: {kv}" + (" (learnable sinks)" if sinks else "")
    if kv == "bf16":
        kv = "bfloat16"
        why = why or "DSA spells bf16 as bfloat16"
    check(kv in ("bfloat16", "fp8_e4m3"), "_dsa_kv_cache_dtype_default",
          "DeepSeek DSA only supports bf16/bfloat16 or fp8_e4m3 kv_cache_dtype")
    if kv != s.kv_cache_dtype:
        s.declare("_dsa_kv_cache_dtype_default", why, kv_cache_dtype=kv)


def _dsa_split_backend_resolution(s: State, p: Platform, m: SGLangModel) -> None:
    major = p.capability.major
    kv = s.kv_cache_dtype
    src = "_dsa_split_backend_resolution"
    out: dict = {}
    if m.dsa_learnable_sink:
        out = {"dsa_prefill_backend": "flashmla_sparse", "dsa_decode_backend": "flashmla_sparse"}
        why = "learnable attention sinks: flashmla_sparse"
    elif m.arch == "GlmMoeDsaForCausalLM" and major == 12 and kv == "fp8_e4m3":
        out = {"dsa_prefill_backend": "flashinfer_sparse_mla", "dsa_decode_backend": "flashinfer_sparse_mla"}
        why = "GLM FP8 KV cache on SM12x: flashinfer_sparse_mla"
    elif kv == "fp8_e4m3":
        b = "trtllm" if major >= 10 else "flashmla_kv"
        out = {"dsa_prefill_backend": b, "dsa_decode_backend": b}
        why = f"FP8 KV cache on SM{major}x: {b}"
    else:
        out = {"dsa_prefill_backend": "flashmla_sparse", "dsa_decode_backend": "trtllm" if major >= 10 else "fa3"}
        why = f"{kv} KV cache on SM{major}x: flashmla_sparse prefill, {out['dsa_decode_backend']} decode"
    s.declare(src, why, **out)


def _assert_model_backends(s: State, m: SGLangModel) -> None:
    """The per-architecture backend asserts of handle_model_specific_adjustments
    (one if/elif chain, after the DeepSeek and DeepSeek-V4 branches)."""
    arch = m.arch
    src = "_handle_model_specific_adjustments"
    if arch in _DEEPSEEK_HOOK_ARCHS or arch == "DeepseekV4ForCausalLM":
        return
    if arch == "GptOssForCausalLM":
        supported = ["triton", "trtllm_mha", "fa3", "fa4", "ascend", "intel_amx", "intel_xpu", "aiter"]
        prefill, decode = attention_backends_of(s)
        check(prefill in supported and decode in supported, src,
              f"GptOssForCausalLM requires one of {supported} attention backend, but got the following backends\n"
              f"- Prefill: {prefill}\n- Decode: {decode}\n")
    elif arch in ("MiMoV2ForCausalLM", "MiMoV2FlashForCausalLM"):
        return
    elif "Step3p5ForCausalLM" in arch or "Step3p7ForConditionalGeneration" in arch:
        return
    elif arch in ("Llama4ForConditionalGeneration", "Llama4ForCausalLM"):
        ok = {"fa3", "aiter", "triton", "ascend", "trtllm_mha", "intel_xpu"}
        check(s.attention_backend in ok, src, "fa3, aiter, triton, ascend, trtllm_mha or intel_xpu is required "
                                              f"for Llama4 model but got {s.attention_backend}")
    elif arch in ("Gemma4ForConditionalGeneration", "Gemma4ForCausalLM", "Gemma4UnifiedForConditionalGeneration"):
        ok = ("trtllm_mha", "triton", "fa4", "ascend", "intel_xpu", "intel_amx", "aiter")
        prefill, decode = attention_backends_of(s)
        check(prefill in ok and decode in ok, src,
              "Gemma4 only supports trtllm_mha, triton, fa4, ascend, intel_xpu, intel_amx, or "
              f"aiter attention backend, got prefill={prefill}, decode={decode}")
    elif arch == "MossVLForConditionalGeneration":
        return
    elif arch in ("Exaone4ForCausalLM", "ExaoneMoEForCausalLM", "ExaoneMoeForCausalLM"):
        if m.sliding_window_pattern is not None:
            ok = ["fa3", "triton", "trtllm_mha"]
            check(s.attention_backend in ok, src, f"One of the attention backends in {ok} is required for {arch}, "
                                                  f"but got {s.attention_backend}")
    elif arch == "Olmo2ForCausalLM":
        check(s.attention_backend != "flashinfer", src,
              "FlashInfer backend can significantly degrade the performance of Olmo3 models.")
    elif arch in ("Lfm2ForCausalLM", "Lfm2MoeForCausalLM"):
        check(s.attention_backend != "triton", src,
              f"{arch} does not support triton attention backend, as the first layer might not be an attention layer")


def handle_model_specific_adjustments(s: State, p: Platform, m: SGLangModel) -> None:
    collect_model_overrides(s, p, m)
    if m.arch in _DEEPSEEK_HOOK_ARCHS and m.is_deepseek_dsa:
        # CUDA: the DSA KV-cache dtype default, then the split DSA backends.
        _dsa_kv_cache_dtype_default(s, p, m)
        if m.arch in _DEEPSEEK_FAMILY_ARCHS:
            _dsa_split_backend_resolution(s, p, m)
    _assert_model_backends(s, m)
    handle_mamba_radix_cache(s, m)


# --- attention_hook.handle_deterministic_inference --------------------------------

_DETERMINISTIC_DEEPSEEK_PASS = (  # overrides._deterministic_is_deepseek_model
    "DeepseekV2ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV32ForCausalLM", "MistralLarge3ForCausalLM",
    "PixtralForConditionalGeneration", "GlmMoeDsaForCausalLM", "Glm4MoeLiteForCausalLM",
)
_DETERMINISTIC_DEEPSEEK_HOOK = _DETERMINISTIC_DEEPSEEK_PASS + ("Glm5NextForConditionalGeneration",)


def handle_deterministic_inference(s: State, p: Platform, m: SGLangModel) -> None:
    if not s.enable_deterministic_inference:
        return
    det = C.DETERMINISTIC_ATTENTION_BACKEND_CHOICES
    if s.attention_backend is None:
        if p.is_sm100 or p.is_sm120:
            if m.arch in _DETERMINISTIC_DEEPSEEK_PASS:
                backend, why = "triton", "deterministic inference on Blackwell, DeepSeek-style model: triton"
            else:
                backend, why = "flashinfer", "deterministic inference on Blackwell: flashinfer"
        else:
            backend, why = "fa3", "deterministic inference off SM100/SM120: fa3"
        s.declare("_deterministic_attention_backend", why, attention_backend=backend)
    elif s.attention_backend not in det:
        raise_value("_deterministic_attention_backend",
                    f"Currently only {det} attention backends are supported for deterministic inference, "
                    f"but you explicitly specified '{s.attention_backend}'.")
    radix = C.RADIX_SUPPORTED_DETERMINISTIC_ATTENTION_BACKEND
    backend = s.attention_backend
    if m.arch in _DETERMINISTIC_DEEPSEEK_HOOK:
        if backend not in radix:
            raise_value("handle_deterministic_inference",
                        f"Currently only {radix} attention backends are supported for deterministic inference "
                        f"with absorbed-MLA models. But you're using {backend}.")
        if backend == "fa4" and not p.is_sm100_or_sm110:
            raise_value("handle_deterministic_inference",
                        "Deterministic inference with absorbed-MLA models on the fa4 attention backend requires "
                        "SM100/SM110: it runs absorbed MLA, whose qv argument flash_attn.cute only implements "
                        "on those archs.")


# --- kv_cache_hook.handle_nvfp4_prefill_kv_dequant_dtype ---------------------------

_NVFP4_PREFILL_BACKEND = {"fp8_e4m3": "flashinfer", "nvfp4": "trtllm_mha"}
_NVFP4_PREFILL_DEQUANT_DTYPE = {b: d for d, b in _NVFP4_PREFILL_BACKEND.items()}


def handle_nvfp4_prefill_kv_dequant_dtype(s: State, p: Platform) -> None:
    src = "handle_nvfp4_prefill_kv_dequant_dtype"
    requested = s.prefill_kv_cache_dequant_dtype
    if s.kv_cache_dtype != "nvfp4":
        if requested != "auto":
            raise_value(src, "--prefill-kv-cache-dequant-dtype applies only with --kv-cache-dtype=nvfp4.")
        return
    if requested == "auto":
        explicit = s.prefill_attention_backend or s.attention_backend
        if explicit in _NVFP4_PREFILL_DEQUANT_DTYPE:
            requested = _NVFP4_PREFILL_DEQUANT_DTYPE[explicit]
        else:
            if explicit is not None:
                raise_value(src, "NVFP4 prefill supports an FP8 E4M3 workspace or native "
                                 f"NVFP4, but backend {explicit!r} provides neither.")
            requested = "nvfp4" if p.is_sm100 else "fp8_e4m3"
    if requested == "nvfp4" and not p.is_sm100:
        raise_value(src, "Native NVFP4 prefill currently requires SM100; use "
                         "--prefill-kv-cache-dequant-dtype=fp8_e4m3 on this platform.")
    target = _NVFP4_PREFILL_BACKEND[requested]
    explicit_prefill = s.prefill_attention_backend
    if explicit_prefill is not None and explicit_prefill != target:
        raise_value(src, f"--prefill-kv-cache-dequant-dtype={requested} requires prefill "
                         f"backend {target!r}, but --prefill-attention-backend={explicit_prefill!r} was set. "
                         "Remove the backend option and select the KV dtype only.")
    explicit_decode = s.decode_attention_backend
    if explicit_decode not in (None, "trtllm_mha"):
        raise_value(src, "NVFP4 decode requires --decode-attention-backend=trtllm_mha; got "
                         f"{explicit_decode!r}. Remove the backend option; NVFP4 "
                         "selects the supported decode implementation automatically.")
    updates: dict = {"prefill_attention_backend": target, "decode_attention_backend": "trtllm_mha"}
    if s.prefill_kv_cache_dequant_dtype == "auto":
        updates["prefill_kv_cache_dequant_dtype"] = requested
    s.declare("_handle_nvfp4_prefill_kv_dequant_dtype",
              f"NVFP4 KV cache: prefill reads it as {requested} ({target}), decode on trtllm_mha", **updates)


# --- attention_hook.handle_attention_backend_compatibility --------------------------


def _attention_backend_default(s: State, p: Platform, m: SGLangModel) -> DefaultRule | None:
    """Split-backend override, then the default rule. Returns the rule's
    answer when it was consulted."""
    if s.prefill_attention_backend is not None and s.prefill_attention_backend == s.decode_attention_backend:
        s.declare("_attention_backend_default", "prefill and decode backends agree: they become the backend",
                  attention_backend=s.prefill_attention_backend)
        return None
    if s.attention_backend is None:
        rule = default_attention_backend(s, p, m)
        s.declare("_attention_backend_default", "default rule: " + rule.branch, attention_backend=rule.backend)
        return rule
    return None


def _mla_backend_page_constraints(s: State) -> None:
    page = s.page_size
    whys = []
    if s.attention_backend == "flashmla" or s.decode_attention_backend == "flashmla":
        page = 64
        whys.append("FlashMLA only supports page size 64")
    if s.attention_backend == "trtllm_mla" or s.decode_attention_backend == "trtllm_mla":
        if page not in (32, 64):
            whys.append(f"TensorRT-LLM MLA needs page size 32 or 64 (was {page}): 64")
            page = 64
    if "cutedsl_mla" in (s.attention_backend, s.decode_attention_backend, s.prefill_attention_backend):
        if page not in (32, 64):
            whys.append(f"CuteDSL MLA needs page size 32 or 64 (was {page}): 64")
            page = 64
    if "trtllm_mha" in (s.attention_backend, s.decode_attention_backend, s.prefill_attention_backend,
                        s.speculative_draft_attention_backend):
        if page not in (16, 32, 64, 128):
            whys.append(f"TensorRT-LLM MHA needs page size 16, 32, 64 or 128 (was {page}): 64")
            page = 64
    if "hpc_ops" in (s.attention_backend, s.decode_attention_backend, s.prefill_attention_backend):
        if page != 64:
            whys.append(f"HPC-Ops needs page size 64 (was {page})")
            page = 64
    if page != s.page_size:
        s.declare("_mla_backend_page_constraints", "; ".join(whys), page_size=page)


def _mla_kv_cache_dtype_checks(s: State, p: Platform) -> None:
    if s.attention_backend == "trtllm_mla" or s.decode_attention_backend == "trtllm_mla":
        if not p.is_blackwell:
            raise_value("_mla_kv_cache_dtype_checks", "TRTLLM MLA backend is only supported on Blackwell GPUs "
                                                      "(SM100/SM12x). Please use a different backend.")
        if s.kv_cache_dtype not in ("fp8_e4m3", "bf16", "auto"):
            raise_value("_mla_kv_cache_dtype_checks",
                        "TensorRT-LLM MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.")


def _cutedsl_prefill_backend_fill(s: State, p: Platform) -> None:
    if "cutedsl_mla" not in (s.attention_backend, s.decode_attention_backend, s.prefill_attention_backend):
        return
    check(s.prefill_attention_backend != "cutedsl_mla", "_cutedsl_prefill_backend_fill",
          "CuteDSL MLA only supports decoding for now")
    if not p.is_sm100:
        raise_value("_cutedsl_prefill_backend_fill", "CuteDSL MLA backend is only supported on Blackwell GPUs "
                                                     "(SM100). Please use a different backend.")
    if s.kv_cache_dtype not in ("fp8_e4m3", "bf16", "bfloat16", "auto"):
        raise_value("_cutedsl_prefill_backend_fill",
                    "CuteDSL MLA backend only supports kv-cache-dtype of fp8_e4m3, bf16, or auto.")
    if s.prefill_attention_backend is None:
        s.declare("_cutedsl_prefill_backend_fill", "CuteDSL MLA is decode-only: trtllm_mla prefills",
                  prefill_attention_backend="trtllm_mla")


def _trtllm_mha_checks(s: State, p: Platform) -> None:
    prefill, decode = attention_backends_of(s)
    if "trtllm_mha" not in (prefill, decode):
        return
    src = "handle_attention_backend_compatibility"
    fast = p.is_sm90 or p.is_sm100 or p.is_sm120
    if prefill == "trtllm_mha" and not fast:
        raise_value(src, "TRTLLM MHA backend for prefill requires Hopper (SM90), Blackwell (SM100), or SM120 GPUs. "
                         "Please use a different prefill backend.")
    if prefill == "trtllm_mha" and p.is_sm120 and s.kv_cache_dtype == "fp8_e4m3":
        raise_value(src, "TRTLLM FMHAv2 prefill on SM120 does not support fp8_e4m3 KV cache or skip-softmax.")
    if decode == "trtllm_mha" and not fast:
        raise_value(src, "TRTLLM MHA backend for decode is only supported on Hopper (SM90), Blackwell (SM100) and "
                         "(SM120) GPUs. Please use a different decode backend.")


def _attention_backend_fa3_fp8_fallback(s: State) -> None:
    if s.attention_backend == "fa3" and s.kv_cache_dtype == "fp8_e5m2":
        s.declare("_attention_backend_fa3_fp8_fallback",
                  "FlashAttention3 reads only fp8_e4m3 among FP8 caches: triton", attention_backend="triton")


def _fa4_page_constraint(s: State, p: Platform, m: SGLangModel) -> None:
    if ("fa4" in (s.attention_backend, s.decode_attention_backend, s.prefill_attention_backend)
            and not m.use_mla and p.is_sm100 and (s.speculative_eagle_topk or 0) <= 1):
        if "DiffusionGemmaForBlockDiffusion" in m.architectures:
            s.declare("_fa4_page_constraint", "diffusion Gemma on FA4: page size 1", page_size=1)
        else:
            s.declare("_fa4_page_constraint", "FA4 on SM100 for non-MLA models runs page size 128",
                      page_size=128)


def _intel_xpu_page_constraint(s: State, m: SGLangModel) -> None:
    if "intel_xpu" in attention_backends_of(s):
        sizes = [64, 128] + ([16, 32] if m.use_mla else [])
        if s.page_size not in sizes:
            s.declare("_intel_xpu_page_constraint", f"Intel XPU attention supports page sizes {sizes}: 128",
                      page_size=128)


def handle_attention_backend_compatibility(s: State, p: Platform, m: SGLangModel) -> DefaultRule | None:
    rule = _attention_backend_default(s, p, m)
    if s.attention_backend == "flex_attention":
        check(s.speculative_algorithm is None, "handle_attention_backend_compatibility",
              "Speculative decoding is currently not supported with Flex Attention backend")
    _mla_backend_page_constraints(s)
    _mla_kv_cache_dtype_checks(s, p)
    _cutedsl_prefill_backend_fill(s, p)
    _trtllm_mha_checks(s, p)
    _attention_backend_fa3_fp8_fallback(s)
    _fa4_page_constraint(s, p, m)
    # aiter, intel_amx (device cpu), intel_xpu (device xpu): not on CUDA.
    _intel_xpu_page_constraint(s, m)
    return rule


# --- kv_cache_hook: FP4 and MXFP8 KV caches ------------------------------------------


def handle_kv4_compatibility(s: State, p: Platform, m: SGLangModel) -> None:
    if s.kv_cache_dtype not in ("nvfp4", "fp4_mx_block16"):
        return
    src = "handle_kv4_compatibility"
    prefill, decode = attention_backends_of(s)
    backend = s.attention_backend
    if s.kv_cache_dtype == "nvfp4" and not (p.is_sm100 or p.is_sm120):
        raise SGLangError("RuntimeError", "--kv-cache-dtype=nvfp4 requires Blackwell SM100 or SM120. "
                                          "Use --kv-cache-dtype=fp4_mx_block16 for the block-size-16 FP4 recipe.", src)
    native = s.kv_cache_dtype == "nvfp4" and p.is_sm100 and "trtllm_mha" in (prefill, decode)
    mixed = s.kv_cache_dtype == "nvfp4" and prefill == "flashinfer" and decode == "trtllm_mha"
    algo = s.speculative_algorithm.upper() if s.speculative_algorithm is not None else None
    if native and algo in ("DFLASH", "DSPARK"):
        raise_value(src, "SM100 native NVFP4 speculative decoding does not yet support "
                         f"{algo}; use EAGLE/NEXTN or NGRAM.")
    if native and algo is not None and algo not in ("EAGLE", "EAGLE3", "NEXTN", "NGRAM"):
        raise_value(src, "SM100 native NVFP4 speculative decoding supports EAGLE, "
                         f"EAGLE3, NEXTN, and breadth-1 NGRAM; got {algo}.")
    if native and algo == "NGRAM" and C.NGRAM_MAX_BFS_BREADTH != 1:
        raise_value(src, "SM100 native NVFP4 NGRAM speculative decoding requires "
                         "--speculative-ngram-max-bfs-breadth=1 because trtllm_mha "
                         "supports linear target verification only; got "
                         f"{C.NGRAM_MAX_BFS_BREADTH}.")
    if native and algo not in (None, "NGRAM"):
        draft = s.speculative_draft_attention_backend
        if draft is None:
            s.declare("_handle_kv4_compatibility", "SM100 native NVFP4: the draft worker runs trtllm_mha",
                      speculative_draft_attention_backend="trtllm_mha")
        elif draft != "trtllm_mha":
            raise_value(src, "SM100 native NVFP4 speculative decoding requires "
                             "--speculative-draft-attention-backend=trtllm_mha so the "
                             "draft worker consumes its physical NVFP4 KV layout; got "
                             f"{draft!r}.")
    if native and mixed and s.speculative_algorithm is not None and s.speculative_attention_mode == "prefill":
        s.declare("_handle_kv4_compatibility", "SM100 mixed NVFP4: target verify runs on trtllm_mha",
                  speculative_attention_mode="decode")
    if prefill != decode and prefill != "fa4":
        return  # a warning only (or the supported NVFP4 mixed recipe)
    if prefill == "fa4":
        if m.use_mla:
            ok = ["flashinfer", "trtllm_mla"]
            check(decode in ok, src, f"KV4 FA4 MLA expects decode_attention_backend to be one of {ok}, "
                                     f"but got {decode}")
        else:
            ok = ["triton", "torch_native", "flex_attention"]
            check(decode in ok, src, f"KV4 FA4 MHA expects decode_attention_backend to be one of {ok}, "
                                     f"but got {decode}")
    elif m.use_mla:
        ok = ["flashinfer", "trtllm_mla"]
        check(backend in ok, src, f"KV4 MLA expects attention_backend to be one of {ok}, but got {backend}")
    else:
        ok = ["triton", "torch_native", "flex_attention", "trtllm_mha"]
        check(backend in ok, src, f"KV4 MHA expects attention_backend to be one of {ok}, but got {backend}")


def handle_mxfp8_kv_cache_compatibility(s: State, p: Platform) -> None:
    if s.kv_cache_dtype == "mxfp8" and not p.is_blackwell:
        raise_value("handle_mxfp8_kv_cache_compatibility",
                    "--kv-cache-dtype mxfp8 requires an SM100+ (Blackwell) GPU for the "
                    "block-scaled operands used by the FA4 MXFP8 attention path.")


def _page_size_default(s: State) -> None:
    if s.page_size is None:
        s.declare("_page_size_default", "no backend or model asked for a page size: 1", page_size=1)


# --- speculative_hook.handle_speculative_decoding ------------------------------------

_DRAFT_IN_TARGET = (
    "DeepseekV32ForCausalLM", "DeepseekV3ForCausalLM", "DeepseekV4ForCausalLM", "Glm4MoeForCausalLM",
    "Glm4MoeLiteForCausalLM", "GlmMoeDsaForCausalLM", "BailingMoeForCausalLM", "BailingMoeV2ForCausalLM",
    "BailingMoeV2_5ForCausalLM", "MistralLarge3ForCausalLM", "PixtralForConditionalGeneration",
    "HYV3ForCausalLM", "HYV4ForCausalLM", "Qwen4ExpForConditionalGeneration",
)


def _auto_choose_speculative_params(s: State, arch: str) -> tuple[int, int, int]:
    if s.speculative_algorithm == "STANDALONE":
        return 3, 1, 4
    if arch in ("LlamaForCausalLM", "Grok1ForCausalLM", "Grok1VForCausalLM"):
        return 5, 4, 8
    return 3, 1, 4


def _gt(a: object, b: int, source: str) -> bool:
    """``a > b`` as Python evaluates it: None > int is a TypeError."""
    if a is None:
        raise SGLangError("TypeError", "'>' not supported between instances of 'NoneType' and 'int'", source)
    return a > b  # type: ignore[operator]


def _handle_eagle_family(s: State, m: SGLangModel) -> None:
    src = "_handle_eagle_family"
    if m.arch in _DRAFT_IN_TARGET and s.speculative_draft_model_path is None:
        s.declare(src, "the MTP draft layer ships in the target checkpoint",
                  speculative_draft_model_path=s.model_path)
    if m.arch == "IQuestQ1ForCausalLM" and s.speculative_draft_model_path in (None, s.model_path):
        raise_value("_handle_iquest_q1_mtp_draft", "IQuest Q1 requires an independent draft model path.")
    if s.speculative_num_steps is None:
        check(s.speculative_eagle_topk is None and s.speculative_num_draft_tokens is None, src)
        steps, topk, draft = _auto_choose_speculative_params(s, m.arch)
        s.declare("_handle_eagle_family.auto_params",
                  f"automatic speculative parameters for {m.arch}: steps {steps}, topk {topk}, draft tokens {draft}",
                  speculative_num_steps=steps, speculative_eagle_topk=topk, speculative_num_draft_tokens=draft)
    if "trtllm_mha" in attention_backends_of(s):
        if _gt(s.speculative_eagle_topk, 1, src):
            raise_value(src, "trtllm_mha backend only supports topk = 1 for speculative decoding.")
    if s.speculative_eagle_topk == 1 and s.speculative_num_draft_tokens != s.speculative_num_steps + 1:
        s.declare(src, "topk 1: draft tokens = steps + 1",
                  speculative_num_draft_tokens=s.speculative_num_steps + 1)
    page_tree = ("flashinfer", "fa3", "triton")
    if _gt(s.speculative_eagle_topk, 1, src) and s.page_size > 1 and s.attention_backend not in page_tree:
        raise_value(src, "speculative_eagle_topk > 1 with page_size > 1 is only supported on "
                         f"{page_tree}; got attention_backend={s.attention_backend!r}. "
                         "Use page_size == 1 or one of those backends.")


def _handle_ngram(s: State) -> None:
    src = "_handle_ngram"
    s.declare(src, "NGRAM's tree breadth is --speculative-ngram-max-bfs-breadth",
              speculative_eagle_topk=C.NGRAM_MAX_BFS_BREADTH)
    if s.speculative_num_draft_tokens is None:
        s.declare(src, "NGRAM default draft tokens", speculative_num_draft_tokens=12)
    if s.speculative_num_steps is None:
        s.declare(src, "NGRAM steps = draft tokens // breadth",
                  speculative_num_steps=s.speculative_num_draft_tokens // s.speculative_eagle_topk)
    if s.speculative_eagle_topk > 1 and s.page_size > 1 and s.attention_backend != "flashinfer":
        raise_value(src, f"speculative_eagle_topk({s.speculative_eagle_topk}) > 1 "
                         f"with page_size({s.page_size}) > 1 is unstable "
                         "and produces incorrect results for paged attention backends. "
                         "This combination is only supported for the 'flashinfer' backend.")


def handle_speculative_decoding(s: State, m: SGLangModel) -> None:
    if s.speculative_algorithm is None:
        return
    src = "handle_speculative_decoding"
    upper = s.speculative_algorithm.upper()
    s.declare(src, "speculative algorithm names are upper case", speculative_algorithm=upper)
    if upper in ("NEXTN", "EAGLE"):
        s.declare(src, "NEXTN is EAGLE", speculative_algorithm="EAGLE")
    algo = s.speculative_algorithm
    if algo not in C.SPECULATIVE_ALGORITHMS and algo not in C.SPECULATIVE_ALIASES:
        raise_value(src, f"Unknown speculative algorithm name: {algo}")
    if algo in ("EAGLE", "EAGLE3", "STANDALONE"):
        _handle_eagle_family(s, m)
    elif algo == "NGRAM":
        _handle_ngram(s)
