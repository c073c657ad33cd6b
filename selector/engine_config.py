"""What vLLM 0.33.0 changes in the selection inputs while it builds the
engine config, before any layer calls ``get_attn_backend``.

``vllm serve`` turns its flags into a ``VllmConfig`` in
``EngineArgs.create_engine_config`` (vllm/engine/arg_utils.py) and then runs
``VllmConfig.__post_init__`` -> ``try_verify_and_update_config``, which calls
the model's ``MODELS_CONFIG_MAP`` hook (vllm/model_executor/models/config.py).
Several of these steps rewrite fields the selector reads later:
``cache_config.cache_dtype``, ``attention_config.backend``,
``attention_config.flash_attn_version`` and ``attention_config.use_non_causal``
(and the KV-cache skip layers, which give some layers "auto").

``engine_config`` replays them in vLLM's order, for CUDA, as a pure function
of the parsed model, the what-if flags, the device capability and the
installed kernels, and records every change as an ``EngineStep``. Nothing
here reads globals or imports vLLM; a hook that vLLM would run but whose
inputs the model parser does not produce is skipped with a note step.
"""

from __future__ import annotations

from typing import NamedTuple

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.fa_version import is_fa_version_supported
from attn_select.selector.model_facts import ModelFacts
from attn_select.selector.overrides import Overrides
from attn_select.selector.errors import UserError
from attn_select.selector.quant_methods import (CONFIG_FILENAMES, DEPRECATED, METHODS, QuantMethod,
                                                capability_error, flag_config_class, flag_method,
                                                unknown_method_error)
from attn_select.selector.quant_methods import dtype_error as quant_dtype_error  # beside vllm_names' dtype_error

# Hook names as the report prints them (vLLM's function or class.method).
ARGS_HOOK = "EngineArgs.create_engine_config"
RESOLVE_HOOK = "resolve_kv_cache_dtype_string"
LAYER_SCHEME_HOOK = "Attention.__init__ (kv_cache_scheme)"
QUANT_VERIFY_HOOK = "ModelConfig._verify_quantization"
QUANT_CONFIG_HOOK = "VllmConfig._get_quantization_config"
PARALLEL_HOOK = "ParallelConfig._validate_parallel_config"
MODEL_PARALLEL_HOOK = "ModelConfig.verify_with_parallel_config"
FLOAT_KV_HOOK = "VllmConfig._reject_mismatched_float_kv_cache"
NVFP4_MLA_HOOK = "VllmConfig.validate_nvfp4_kv_cache_with_mla"

# MODELS_CONFIG_MAP keys whose hook can change a selection input, by the
# hook class vLLM maps them to.
_DEEPSEEK_V32 = frozenset({"DeepseekV32ForCausalLM"})
_GLM_MOE_DSA = frozenset({"GlmMoeDsaForCausalLM"})
_GLM5_NEXT = frozenset({"Glm5NextForCausalLM", "Glm5NextForConditionalGeneration"})
_GEMMA4 = frozenset({
    "Gemma4ForCausalLM", "Gemma4ForConditionalGeneration", "Gemma4UnifiedForConditionalGeneration",
})
_EMBEDDING_GEMMA2 = frozenset({"EmbeddingGemma2Model"})
_DIFFUSION_GEMMA = frozenset({"DiffusionGemmaForBlockDiffusion"})
_UNLIMITED_OCR = frozenset({"UnlimitedOCRForCausalLM"})

# Layer kinds that make vLLM's model_config.is_hybrid true (a Mamba-style or
# linear-attention mixer beside attention); MLP/MoE-only layers do not.
_HYBRID_KINDS_EXCLUDED = frozenset({"mlp", "moe"})
# model_config.is_hybrid starts from the model class: the registered
# architectures whose class implements IsHybrid in vLLM 0.33.0
# (interfaces.is_hybrid over the model registry). Another architecture with
# layers of its own kind (MiniMax-M3's sparse attention) is not hybrid.
_HYBRID_ARCHS = frozenset({
    "AliceAIForCausalLM", "BailingMoeV2_5ForCausalLM", "BailingMoeV3ForCausalLM",
    "BailingMoeV3VLForConditionalGeneration", "ClefFlashForJointSchema", "ColBERTLfm2Model", "ColQwen3_5",
    "D3ForSequenceClassification", "FalconH1ForCausalLM", "Glm5NextForCausalLM", "Glm5NextForConditionalGeneration",
    "GraniteMoeHybridForCausalLM", "InternS2MobiusForConditionalGeneration",
    "InternS2PreviewForConditionalGeneration", "JambaForCausalLM", "JambaForSequenceClassification",
    "KimiK3ForConditionalGeneration", "KimiLinearForCausalLM", "Lfm2ForCausalLM", "Lfm2MoeForCausalLM",
    "Lfm2VlForConditionalGeneration", "MiniCPMOcrForConditionalGeneration", "MiniCPMV4_6ForConditionalGeneration",
    "MiniCPMV4_7ForConditionalGeneration", "NemotronHForCausalLM", "NemotronHPuzzleForCausalLM",
    "NemotronH_Nano_Omni_Reasoning_V3", "NemotronH_Nano_VL_V2", "NemotronH_Omni_Reasoning_V3",
    "NemotronH_Super_Omni_Reasoning_V3", "OlmoHybridForCausalLM", "Qwen3NextForCausalLM", "Qwen3_5ForCausalLM",
    "Qwen3_5ForConditionalGeneration", "Qwen3_5MoeForCausalLM", "Qwen3_5MoeForConditionalGeneration",
    "Qwen4ExpForCausalLM", "Qwen4ExpForConditionalGeneration", "Zamba2ForCausalLM",
})

# TurboQuantConfig.get_boundary_skip_layers keeps this many attention layers
# at each end of a dense model uncompressed.
_BOUNDARY_LAYERS = 2


class EngineStep(NamedTuple):
    """One engine-config change: which vLLM step, which field, old -> new, why.
    ``field`` "-" marks a note (a hook skipped or a decision that changed nothing)."""

    hook: str
    field: str
    old: object
    new: object
    why: str

    @property
    def is_note(self) -> bool:
        return self.field == "-"

    def text(self) -> str:
        if self.is_note:
            return f"{self.hook}: {self.why}"
        return f"{self.hook}: {self.field} {self.old!r} -> {self.new!r} ({self.why})"


class EngineConfig(NamedTuple):
    """The engine-config values the selection reads, after vLLM's adjustments."""

    cache_dtype: str  # cache_config.cache_dtype (what layers pass as kv_cache_dtype)
    backend: str | None  # attention_config.backend: an explicit backend, validated alone
    backend_from: str | None  # "--attention-backend" or the hook that set it
    flash_attn_version: int | None  # attention_config.flash_attn_version
    use_non_causal: bool  # attention_config.use_non_causal
    block_size: int | None  # the block size get_attn_backend passes (None unless user-specified)
    user_specified_block_size: bool  # cache_config.user_specified_block_size
    kv_skip_layers: tuple[int, ...] = ()  # layer indices whose KV stays "auto" (kv_cache_dtype_skip_layers)
    # The class get_quant_config built (QuantMethod.config_class), None when
    # unquantized: the layers ask it for their KV-cache method.
    quant_config_class: str | None = None
    trail: tuple[EngineStep, ...] = ()
    error: str | None = None  # the exception text vLLM raises while building the config


class _State:
    """The mutable copy of the config fields while the steps run."""

    def __init__(self, ov: Overrides) -> None:
        self.cache_dtype = ov.kv_cache_dtype or "auto"
        self.quantization: str | None = None  # model_config.quantization, set by _verify_quantization
        self.backend = ov.backend
        self.backend_from = "--attention-backend" if ov.backend else None
        self.fa_version = ov.flash_attn_version
        self.use_non_causal = bool(ov.use_non_causal)
        self.skip_layers: tuple[int, ...] = ()
        self.quant_config_class: str | None = None
        self.trail: list[EngineStep] = []
        self.error: str | None = None

    def set(self, hook: str, name: str, attr: str, new: object, why: str) -> None:
        old = getattr(self, attr)
        if old == new:
            return
        setattr(self, attr, new)
        if attr == "backend":
            self.backend_from = hook
        self.trail.append(EngineStep(hook, name, old, new, why))

    def note(self, hook: str, why: str) -> None:
        self.trail.append(EngineStep(hook, "-", None, None, why))


def engine_config(
    model: ModelFacts | None, ov: Overrides, cap: Capability, kernels: Kernels
) -> EngineConfig:
    """The selection inputs after ``create_engine_config`` and the model's
    ``verify_and_update_config`` hook, in vLLM's order.

    Without a model (a raw selector config) nothing runs: vLLM always builds
    its engine config from a model, and a raw config is taken as given.
    """
    s = _State(ov)
    if model is not None:
        _verify_quantization(s, model, ov.quantization, cap)
        if s.error is None:
            _validate_parallel(s, ov)
    if model is not None and s.error is None:
        _resolve_cache_dtype(s, model)
        packed = _is_packed_kv(s.cache_dtype)
        if packed:
            _boundary_skip_layers(s, model)
        # --attention-backend was applied by _State; the batch-invariant
        # TRITON_ATTN default is XPU-only and never runs on CUDA.
        if packed:
            _packed_kv_fa2(s)
        _model_hook(s, model, cap, kernels)
        if s.error is None:
            _reject_mismatched_float_kv_cache(s, model, ov)
        if s.error is None:
            _verify_model_parallel(s, model, ov)
        if s.error is None:
            _quantization_config(s, model, ov.quantization, cap)
        if s.error is None:
            _nvfp4_kv_cache_with_mla(s, model)
        if s.error is None:
            _layer_kv_scheme(s, model)
    return EngineConfig(
        cache_dtype=s.cache_dtype,
        backend=s.backend,
        backend_from=s.backend_from,
        flash_attn_version=s.fa_version,
        use_non_causal=s.use_non_causal,
        # CacheConfig._apply_block_size_default marks only a given --block-size
        # as user-specified; no CUDA engine-config step sets it, and the
        # platform's block-size alignment runs after the layers are built.
        block_size=ov.block_size,
        user_specified_block_size=ov.block_size is not None,
        kv_skip_layers=s.skip_layers,
        quant_config_class=s.quant_config_class,
        trail=tuple(s.trail),
        error=s.error,
    )


# --- EngineArgs.create_engine_config -----------------------------------------


def _verify_quantization(s: _State, model: ModelFacts, flag: str | None, cap: Capability) -> None:
    """ModelConfig._verify_quantization, while create_engine_config builds the
    model config: --quantization resolved against the checkpoint's config
    (an override claims it, or the two must name the same method), then a
    method vLLM does not register, or a deprecated one
    (--allow-deprecated-quantization is not taken, so always refused)."""
    s.quantization = model.quantization
    if flag is not None:
        try:
            method = flag_method(flag, model.checkpoint_quant, model.model_type, cap.to_int())
        except ValueError as exc:
            s.error = f"{QUANT_VERIFY_HOOK}: {exc}"
            return
        why = ("--quantization on an unquantized checkpoint" if model.checkpoint_quant is None
               else "--quantization resolved against the checkpoint's quantization_config")
        s.set(QUANT_VERIFY_HOOK, "model_config.quantization", "quantization", method, why)
    method = s.quantization
    if method is None:
        return
    unknown = unknown_method_error(method)
    if unknown is not None:
        s.error = f"{QUANT_VERIFY_HOOK}: {unknown}"
    elif method in DEPRECATED:
        # vLLM passes the name as a second ValueError argument instead of
        # formatting it in, so its message is the arguments' tuple
        s.error = (f"{QUANT_VERIFY_HOOK}: ('The quantization method %s is deprecated and will be removed in "
                   "future versions of vLLM. To bypass, set `--allow-deprecated-quantization`.', "
                   f"{method!r})")


def _validate_parallel(s: _State, ov: Overrides) -> None:
    """ParallelConfig's validator, which create_engine_config reaches right
    after the model config. Without prefill context parallelism DCP reuses
    the TP ranks, so -dcp must divide -tp; with -pcp > 1 DCP must be off,
    span the PCP axis or span all TP x PCP ranks. The raw --use-dcp and
    --use-pcp toggles are selector-config what-ifs, not sizes: with
    --use-pcp and no -pcp the PCP size is unknown, so nothing is checked."""
    if ov.dcp_size is None:
        return
    tp, dcp = ov.tp, ov.dcp_size
    pcp = ov.pcp_size if ov.pcp_size is not None else (None if ov.use_pcp else 1)
    if pcp == 1:
        if tp % dcp != 0:
            s.error = f"{PARALLEL_HOOK}: tp_size={tp} must be divisible by dcp_size={dcp}."
    elif pcp is not None and dcp not in (1, pcp, tp * pcp):
        s.error = (f"{PARALLEL_HOOK}: When PCP is enabled, DCP must be disabled, span the PCP axis, or span the "
                   f"full TP x PCP axis. Got TP={tp}, PCP={pcp}, DCP={dcp}; valid DCP sizes are "
                   f"{sorted({1, pcp, tp * pcp})}.")


def _nvfp4_kv_cache_with_mla(s: _State, model: ModelFacts) -> None:
    """VllmConfig.validate_nvfp4_kv_cache_with_mla, a model validator that
    runs after __post_init__: the plain nvfp4 cache layout is not MLA's."""
    if s.cache_dtype.startswith("nvfp4") and not s.cache_dtype.endswith("_ds_mla") and model.model_use_mla:
        s.error = (f"{NVFP4_MLA_HOOK}: nvfp4 KV cache is not supported with MLA (Multi-head Latent Attention) "
                   "backends. Please use a different --kv-cache-dtype (e.g., 'fp8', 'auto', or 'nvfp4_ds_mla' with a "
                   "sparse MLA backend) for MLA models such as DeepSeek.")


def _reject_mismatched_float_kv_cache(s: _State, model: ModelFacts, ov: Overrides) -> None:
    """VllmConfig._reject_mismatched_float_kv_cache, right after the model
    hook (which may have made DeepSeek-V3.2's bfloat16 "auto"): a float16 or
    bfloat16 cache must be the model's own dtype."""
    from attn_select.selector.vllm_names import forced_dtype

    if s.cache_dtype not in ("float16", "bfloat16"):
        return
    model_dtype = forced_dtype(ov.dtype) or model.dtype
    if model_dtype == s.cache_dtype:
        return
    allowed = f"`auto` or `{model_dtype}`" if model_dtype in ("float16", "bfloat16") else "`auto`"
    s.error = (f"{FLOAT_KV_HOOK}: kv_cache_dtype=\"{s.cache_dtype}\" is incompatible with dtype=\"{model_dtype}\". "
               f"Please set `--kv-cache-dtype` to {allowed}.")


def _verify_model_parallel(s: _State, model: ModelFacts, ov: Overrides) -> None:
    """ModelConfig.verify_with_parallel_config (VllmConfig.__post_init__,
    after the model hook): a GQA/MQA model shards its KV heads over the TP
    ranks first, so decode context parallelism needs more TP ranks than KV
    heads, at most tp // kv_heads DCP ranks, and whole query groups per DCP
    rank. MLA models (one latent KV head) are not checked."""
    dcp = ov.dcp_size or 1
    if dcp <= 1 or model.is_mla:
        return
    tp, kv = ov.tp, model.total_kv_heads
    if tp <= kv:
        s.error = (f"{MODEL_PARALLEL_HOOK}: Decode context parallelism for GQA/MQA requires "
                   f"`--tensor-parallel-size` ({tp}) to be greater than the model's total number of KV heads "
                   f"({kv}). Increase `--tensor-parallel-size` or set `--decode-context-parallel-size 1`.")
    elif dcp > tp // kv:
        s.error = (f"{MODEL_PARALLEL_HOOK}: `--decode-context-parallel-size` ({dcp}) exceeds the maximum supported "
                   f"value ({tp // kv}) for `--tensor-parallel-size` ({tp}) and {kv} model KV heads.")
    elif (model.total_heads // kv) % dcp != 0:
        s.error = (f"{MODEL_PARALLEL_HOOK}: The model's number of query heads per KV head "
                   f"({model.total_heads // kv}) must be divisible by `--decode-context-parallel-size` ({dcp}) "
                   "for GQA/MQA.")


def _resolve_cache_dtype(s: _State, model: ModelFacts) -> None:
    """resolve_kv_cache_dtype_string: "auto" becomes the ModelOpt checkpoint's
    KV algorithm (get_kv_cache_quant_algo_string). llm-compressor's scheme
    ("fp8") is not read here but when the Attention layer is built."""
    scheme = model.kv_cache_scheme
    if s.cache_dtype == "auto" and scheme and not _is_layer_scheme(scheme):
        s.set(RESOLVE_HOOK, "cache_config.cache_dtype", "cache_dtype", scheme,
              "the checkpoint's ModelOpt KV-cache quantization")


def _is_layer_scheme(scheme: str) -> bool:
    """The parser reports compressed-tensors' kv_cache_scheme as "fp8" and
    ModelOpt's as "fp8_e4m3" / "nvfp4" (the names vLLM maps them to)."""
    return scheme == "fp8"


def _is_packed_kv(cache_dtype: str) -> bool:
    """create_engine_config's uses_packed_kv_backend: TurboQuant or UltraQuant."""
    return cache_dtype.startswith("turboquant_") or cache_dtype == "ultraquant_4bit"


def _is_hybrid(model: ModelFacts) -> bool:
    """ModelConfig.is_hybrid: an IsHybrid model class whose layers are not
    all attention (granite-4.0-micro's hybrid config with attention only is not)."""
    return model.architecture in _HYBRID_ARCHS and any(
        o.kind not in _HYBRID_KINDS_EXCLUDED for o in model.other_layers)


def _boundary_skip_layers(s: _State, model: ModelFacts) -> None:
    """TurboQuantConfig.get_boundary_skip_layers joined into
    kv_cache_dtype_skip_layers: the first and last two layers of a dense
    model keep the native dtype ("auto"); hybrids skip none."""
    hook = f"{ARGS_HOOK} (TurboQuantConfig.get_boundary_skip_layers)"
    if _is_hybrid(model):
        s.note(hook, "hybrid model: no boundary layers kept uncompressed")
        return
    n_layers = model.num_layers
    n = min(_BOUNDARY_LAYERS, n_layers // 2)
    if n <= 0:
        return
    layers = tuple(sorted(set(range(n)) | set(range(n_layers - n, n_layers))))
    s.set(hook, "cache_config.kv_cache_dtype_skip_layers", "skip_layers", layers,
          f"the first and last {n} layers keep kv_cache_dtype auto")


def _packed_kv_fa2(s: _State) -> None:
    """TurboQuant/UltraQuant boundary layers run FlashAttentionImpl, which
    only FA2 supports here: any version but an explicit 2 becomes 2."""
    if s.fa_version is None or s.fa_version >= 3:
        kind = "TurboQuant" if s.cache_dtype.startswith("turboquant_") else "UltraQuant"
        s.set(ARGS_HOOK, "attention_config.flash_attn_version", "fa_version", 2,
              f"{kind} is not yet compatible with FlashAttention >= 3")


# --- VllmConfig.try_verify_and_update_config: MODELS_CONFIG_MAP hooks -------


def _model_hook(s: _State, model: ModelFacts, cap: Capability, kernels: Kernels) -> None:
    """The hook vLLM looks up by model_config.architecture (here the
    config's architectures[0])."""
    arch = model.architecture
    if arch in _DEEPSEEK_V32:
        _deepseek_v32(s, model)
    elif arch in _GLM_MOE_DSA:
        _glm_moe_dsa(s, cap)
    elif arch in _GLM5_NEXT:
        _glm5_next(s, model, cap)
    elif arch in _GEMMA4:
        _gemma4(s, model, cap, kernels, "Gemma4Config")
    elif arch in _EMBEDDING_GEMMA2:
        _embedding_gemma2(s, model, cap, kernels)
    elif arch in _DIFFUSION_GEMMA:
        _diffusion_gemma(s, model, cap, kernels)
    elif arch in _UNLIMITED_OCR:
        _unlimited_ocr(s, cap, kernels)


def _quantization_config(s: _State, model: ModelFacts, flag: str | None, cap: Capability) -> None:
    """VllmConfig._get_quantization_config, after the model hook:
    get_quant_config builds the method's config (from the checkpoint's, else
    from a config file in the model folder or online), then the GPU must
    reach that class's get_min_capability() and the model's dtype be one it
    runs activations in; vLLM's messages name model_config.quantization."""
    method = s.quantization
    if method is None:
        return
    cls: QuantMethod | None = None
    if model.checkpoint_quant is None and flag is not None:
        if model.checkpoint_json is None and CONFIG_FILENAMES.get(method):
            raise UserError(f"--quantization {method}: the checkpoint has no quantization_config, so vLLM looks "
                            f"for {' or '.join(CONFIG_FILENAMES[method])} in the model folder; a built-in profile "
                            "has none to look in: give the model's folder or its config.json")
        try:
            cls = flag_config_class(method, model.checkpoint_json or ())
        except (ValueError, TypeError) as exc:
            s.error = f"{QUANT_CONFIG_HOOK}: {exc}"
            return
    ck = model.checkpoint_quant
    if cls is None and ck is not None and method == "modelopt_mixed" and not ck.mixed_layers:
        # get_quant_config passes over a config without quantized_layers and
        # reads the file instead (weight_utils.py:245-256), whose contents are not read here
        if not any(n.endswith("hf_quant_config.json") for n in model.checkpoint_json or ()):
            s.error = f"{QUANT_CONFIG_HOOK}: Cannot find the config file for modelopt_mixed"
            return
    elif cls is None and ck is not None:
        refusal = dict(ck.from_config_errors).get(METHODS[method].config_class)
        if refusal is not None:  # the class's from_config, on the checkpoint's config
            s.error = f"{QUANT_CONFIG_HOOK}: {refusal}"
            return
    if cls is None and ck is not None and ck.modelopt_missing and method in ("modelopt_fp4", "modelopt_mxfp8"):
        # from_config, before the capability and dtype checks
        name, *missing = ck.modelopt_missing
        s.error = (f"{QUANT_CONFIG_HOOK}: {name} quantization requires the following fields in "
                   f"hf_quant_config.json: {missing}")
        return
    s.quant_config_class = (cls or METHODS[method]).config_class
    error = (capability_error(method, cap.to_int(), cls)
             or quant_dtype_error(method, model.dtype, cls))
    if error is not None:
        s.error = f"{QUANT_CONFIG_HOOK}: {error}"


def _hook(cls: str) -> str:
    return f"{cls}.verify_and_update_config"


def _deepseek_v32(s: _State, model: ModelFacts) -> None:
    """DeepseekV32ForCausalLM: a bfloat16 cache is the default layout, so
    "bfloat16" is rewritten to "auto" (the sparse MLA backends then see auto)."""
    hook = _hook("DeepseekV32ForCausalLM")
    if model.index_topk is None:
        s.error = f"{hook}: AssertionError (hf_config has no index_topk)"
        return
    if s.cache_dtype == "bfloat16":
        s.set(hook, "cache_config.cache_dtype", "cache_dtype", "auto",
              "DeepSeek-V3.2's bfloat16 KV cache is its auto layout")


def _glm_moe_dsa(s: _State, cap: Capability) -> None:
    """GlmMoeDsaForCausalLM: on the SM10x family an "auto" cache becomes
    fp8_e4m3 (its DCP defaults change nothing the selector reads)."""
    if s.cache_dtype == "auto" and cap.is_family(100):
        s.set(_hook("GlmMoeDsaForCausalLM"), "cache_config.cache_dtype", "cache_dtype", "fp8_e4m3",
              "fp8 KV cache for GLM DSA on SM10x")


def _glm5_next(s: _State, model: ModelFacts, cap: Capability) -> None:
    """Glm5NextModelConfig: "auto" becomes fp8 on SM10x when the text config
    has index_topk."""
    if s.cache_dtype == "auto" and cap.is_family(100) and model.index_topk is not None:
        s.set(_hook("Glm5NextModelConfig"), "cache_config.cache_dtype", "cache_dtype", "fp8",
              "fp8 KV cache for GLM-5.3-Flash on SM10x")


def _gemma4_head_dims(model: ModelFacts) -> tuple[int, ...] | None:
    """The distinct head sizes of the attention layers, or None when the
    parsed facts cannot tell: Gemma4Config compares the per-layer head sizes
    of model_arch_config (global_head_dim on full layers), which the parser
    does not read; equal group head sizes may only mean it collapsed them."""
    dims = tuple(sorted({g.attn.head_size for g in model.groups}))
    return dims if len(dims) > 1 else None


def _gemma4(s: _State, model: ModelFacts, cap: Capability, kernels: Kernels, cls: str) -> bool:
    """Gemma4Config: heterogeneous head dims. With FA4 usable (and heads <=
    512) and no version or backend other than FLASH_ATTN chosen: FA4 for
    every layer, except an fp8 cache on SM90, which keeps the per-layer
    FA3/FA4 choice. Without FA4: TRITON_ATTN unless a backend was given.
    Returns False when the hook was skipped for lack of facts."""
    hook = _hook(cls)
    dims = _gemma4_head_dims(model)
    if dims is None:
        s.note(hook, "skipped: the model parser does not read Gemma-4's per-layer head dims "
                     "(global_head_dim); with heterogeneous dims vLLM sets flash_attn_version=4, "
                     "or backend TRITON_ATTN when FA4 is unavailable")
        return False
    if is_fa_version_supported(4, cap, kernels) and max(dims) <= 512:
        if s.fa_version is None and s.backend in (None, "FLASH_ATTN"):
            if cap.is_family(90) and s.cache_dtype.startswith("fp8"):
                s.note(hook, f"head dims {list(dims)}: per-layer FA3/FA4 for the fp8 cache on SM90")
            else:
                s.set(hook, "attention_config.flash_attn_version", "fa_version", 4,
                      f"head dims {list(dims)}: FA4 for all layers avoids mixing FA3 and FA4")
    elif s.backend is None:
        s.set(hook, "attention_config.backend", "backend", "TRITON_ATTN",
              f"head dims {list(dims)} and FA4 unavailable")
    return True


def _embedding_gemma2(s: _State, model: ModelFacts, cap: Capability, kernels: Kernels) -> None:
    """EmbeddingGemma2ModelConfig: Gemma4Config, then TRITON_ATTN when no
    backend is set."""
    _gemma4(s, model, cap, kernels, "Gemma4Config")
    if s.backend is None:
        s.set(_hook("EmbeddingGemma2ModelConfig"), "attention_config.backend", "backend", "TRITON_ATTN",
              "no backend given: TRITON_ATTN is the validated backend for its head dims")


def _diffusion_gemma(s: _State, model: ModelFacts, cap: Capability, kernels: Kernels) -> None:
    """DiffusionGemmaModelForBlockDiffusionConfig: Gemma4Config; FlashInfer
    refused; with no backend, use_non_causal=True (the SM100 order then
    prefers FlashAttention over FlashInfer)."""
    known = _gemma4(s, model, cap, kernels, "Gemma4Config")
    hook = _hook("DiffusionGemmaModelForBlockDiffusionConfig")
    if s.backend == "FLASHINFER":
        s.error = (f"{hook}: FlashInfer does not support DiffusionGemma's mixed causal/bidirectional "
                   "attention. Use --attention-backend FLASH_ATTN or TRITON_ATTN instead.")
        return
    if s.backend is None and not s.use_non_causal:
        if not known and not is_fa_version_supported(4, cap, kernels):
            s.note(hook, "assumes equal head dims: with heterogeneous ones Gemma4Config would set "
                         "TRITON_ATTN first and use_non_causal would stay False")
        s.set(hook, "attention_config.use_non_causal", "use_non_causal", True,
              "mixed causal/bidirectional batches: prefer FlashAttention over FlashInfer")


def _unlimited_ocr(s: _State, cap: Capability, kernels: Kernels) -> None:
    """UnlimitedOCRForCausalLMConfig: R-SWA needs FA4 (forced) or TRITON_ATTN
    / FLEX_ATTENTION; with no backend, FLASH_ATTN when FA4 is usable."""
    hook = _hook("UnlimitedOCRForCausalLMConfig")
    fa4 = is_fa_version_supported(4, cap, kernels)
    if s.backend is None:
        s.set(hook, "attention_config.backend", "backend", "FLASH_ATTN" if fa4 else "TRITON_ATTN",
              f"no backend given (FA4 {'available' if fa4 else 'unavailable'})")
    if s.backend == "FLASH_ATTN":
        if not fa4:
            s.error = (f"{hook}: Unlimited-OCR: --attention-config backend=FLASH_ATTN requires FA4 "
                       "(rswa_mask_mod), but FA4 is not available on this device/installation. Use "
                       "backend=TRITON_ATTN or FLEX_ATTENTION, or upgrade vllm-flash-attn.")
            return
        if s.fa_version is None or s.fa_version < 4:
            s.set(hook, "attention_config.flash_attn_version", "fa_version", 4,
                  "the R-SWA mask_mod needs FA4")
    elif s.backend not in ("TRITON_ATTN", "FLEX_ATTENTION"):
        s.error = (f"{hook}: Unlimited-OCR: unsupported attention backend {_enum_repr(s.backend)} "
                   "for R-SWA. Use FLASH_ATTN (FA4), TRITON_ATTN or FLEX_ATTENTION.")


def _enum_repr(name: str) -> str:
    """repr() of vLLM's AttentionBackendEnum member, as its error embeds it."""
    from attn_select.backends import registry

    spec = registry.BACKENDS.get(name)
    return f"<AttentionBackendEnum.{name}: {spec.vllm_class if spec else ''!r}>"


# --- after the hooks ----------------------------------------------------------


def _layer_kv_scheme(s: _State, model: ModelFacts) -> None:
    """An llm-compressor checkpoint's kv_cache_scheme turns an "auto" cache
    into fp8 when its Attention layers are built (after the hooks).
    MLAAttention does no such thing: a model whose attention is all MLA
    keeps "auto"."""
    scheme = model.kv_cache_scheme
    has_attention = any(not g.attn.use_mla for g in model.groups)
    if s.cache_dtype == "auto" and scheme and _is_layer_scheme(scheme) and has_attention:
        s.set(LAYER_SCHEME_HOOK, "cache_config.cache_dtype", "cache_dtype", scheme,
              "the checkpoint's llm-compressor KV-cache scheme")
