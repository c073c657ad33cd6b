"""The inputs of one attention-backend selection, as plain hashable values.

Leaf module: imports nothing else from attn_select. Dtypes are strings
("bfloat16"), never torch objects, so the selector never imports torch.

Mirrors vLLM 0.33.0 ``AttentionSelectorConfig`` (vllm/v1/attention/selector.py)
plus the facts vLLM reads from hidden globals (``current_platform``, the
current ``VllmConfig``, ``envs``, which kernels were importable), which here
are explicit fields of ``Capability``, ``Kernels`` and ``EngineContext``.

The selector's value types (here, in ``backends/spec.py`` and the other
``selector/`` modules) are ``NamedTuple``s, not frozen dataclasses: creating a
dataclass execs its generated methods, and for the ~30 classes ``explain``
imports that was ~23 ms of its start-up budget (BENCHMARKS.md), against ~7 ms
as NamedTuples. Being tuples, they equal any tuple of the same values, so
nothing compares or keys them across types, and the JSON renderer writes them
as objects, not lists.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import NamedTuple


class AttentionType(str, Enum):
    """vLLM ``AttentionType`` values (vllm/v1/attention/backend.py)."""

    DECODER = "decoder"
    ENCODER = "encoder"
    ENCODER_ONLY = "encoder_only"
    ENCODER_DECODER = "encoder_decoder"


def attn_type_text(value: str) -> str:
    """How vLLM's texts print an attention type. Its layers pass
    ``AttentionType`` members, and on Python >= 3.11 an f-string of a str
    mixin Enum gives "AttentionType.DECODER", not the value."""
    return f"AttentionType.{AttentionType(value).name}"


# Activation dtypes the selector knows, as vLLM spells them after "torch.".
DTYPES: tuple[str, ...] = ("float16", "bfloat16", "float32")

# vLLM's ``CacheDType`` Literal, in its order (vllm/config/cache.py).
KV_CACHE_DTYPES: tuple[str, ...] = (
    "auto",
    "float16",
    "bfloat16",
    "fp8",
    "fp8_e4m3",
    "fp8_e5m2",
    "fp8_inc",
    "fp8_ds_mla",
    "nvfp4_ds_mla",
    "turboquant_k8v4",
    "turboquant_4bit_nc",
    "turboquant_k3v4_nc",
    "turboquant_3bit_nc",
    "octave_k3v4",
    "octave_k3v3",
    "octave_k3v3_compact",
    "ultraquant_4bit",
    "int4_per_token_head",
    "int8_per_token_head",
    "fp8_per_token_head",
    "nvfp4",
    "nvfp4_4over6",
)


def kv_quant_mode(kv_cache_dtype: str) -> str:
    """Name of vLLM's ``KVQuantMode`` for a cache dtype (``get_kv_quant_mode``).

    The order of the tests matters: ``nvfp4_ds_mla`` before the ``nvfp4``
    prefix, the per-token-head names before the ``fp8`` prefix.
    """
    if kv_cache_dtype in ("int4_per_token_head", "int8_per_token_head", "fp8_per_token_head"):
        return kv_cache_dtype.upper()
    if kv_cache_dtype == "nvfp4_ds_mla":
        return "NVFP4_DS_MLA"
    if kv_cache_dtype.startswith("nvfp4"):
        return "NVFP4"
    if kv_cache_dtype.startswith("turboquant_") or kv_cache_dtype.startswith("octave_"):
        return kv_cache_dtype.upper()
    if kv_cache_dtype == "ultraquant_4bit":
        return "ULTRAQUANT_4BIT"
    if kv_cache_dtype.startswith("fp8"):
        return "FP8_PER_TENSOR"
    return "NONE"


def is_quantized_kv_cache(kv_cache_dtype: str) -> bool:
    """vLLM ``is_quantized_kv_cache``: any quant mode other than NONE."""
    return kv_quant_mode(kv_cache_dtype) != "NONE"


class Capability(NamedTuple):
    """CUDA compute capability, compared as (major, minor) like vLLM's
    ``DeviceCapability``."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str) -> Capability:
        """"9.0", "90", "sm90", "10.3" -> Capability. Raises ValueError."""
        t = text.strip().lower().removeprefix("sm_").removeprefix("sm")
        # ASCII digits only: int() also reads full-width digits and "1_0"
        dotted = re.fullmatch(r"([0-9]{1,2})\.([0-9]{1,2})", t)
        if dotted:
            cap = cls(int(dotted.group(1)), int(dotted.group(2)))
        elif re.fullmatch(r"[0-9]{2,3}", t):
            cap = cls(int(t[:-1]), int(t[-1]))
        else:
            raise ValueError(f"not a compute capability: {text!r}")
        if not (1 <= cap.major <= 20 and 0 <= cap.minor <= 9):
            raise ValueError(f"not a compute capability: {text!r}")
        return cap

    def to_int(self) -> int:
        return self.major * 10 + self.minor

    def is_family(self, capability: int) -> bool:
        """vLLM ``is_device_capability_family``: same major ("10.x")."""
        return self.to_int() // 10 == capability // 10

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"


class Kernels(NamedTuple):
    """What is installed besides vLLM's Python code: the inputs vLLM probes
    at import time. Never probed inside a predicate; built once at the CLI edge
    (a profile default, ``--kernels``, or a live probe) and printed.

    The default is what vLLM's CUDA wheel ships with FlashInfer and its
    cubins reachable: everything present.
    """

    fa2: bool = True  # vllm.vllm_flash_attn._vllm_fa2_C importable
    fa3: bool = True  # vllm.vllm_flash_attn._vllm_fa3_C importable
    fa4: bool = True  # vllm.vllm_flash_attn/cute/interface.py present
    flashinfer: bool = True  # vllm.utils.flashinfer.has_flashinfer()
    trtllm_cubins: bool = True  # has_nvidia_artifactory(): cubins downloadable or flashinfer-cubin
    flashmla: bool = True  # vllm._flashmla_C importable (FlashMLA dense and sparse kernels)
    source: str = "default"  # where these values came from, for the report
    # The flashinfer package is importable (find_spec). A module-level
    # ``import flashinfer`` in vLLM's backends needs only this, while
    # has_flashinfer() (``flashinfer`` above) also needs cubins or nvcc+ninja.
    flashinfer_python: bool = True
    tokenspeed_mla: bool = True  # ``import tokenspeed_mla`` succeeds (a vLLM dependency)

    # Names for --kernels and reports. "flashinfer" implies the package;
    # "flashinfer-python" alone is the package without cubins or a JIT
    # toolchain (has_flashinfer() False, the backend modules still import).
    NAMES = ("fa2", "fa3", "fa4", "flashinfer", "trtllm-cubins", "flashmla",
             "flashinfer-python", "tokenspeed-mla")

    @classmethod
    def from_names(cls, names: list[str] | tuple[str, ...], source: str) -> Kernels:
        """Exactly the listed kernels present; the rest absent."""
        present = {n.strip().lower().replace("_", "-") for n in names if n.strip()}
        unknown = present - set(cls.NAMES) - {"none"}
        if unknown:
            raise ValueError(
                f"unknown kernel name(s) {', '.join(sorted(unknown))}; "
                f"choose from {', '.join(cls.NAMES)} or none"
            )
        flags = {n.replace("-", "_"): n in present for n in cls.NAMES}
        flags["flashinfer_python"] = flags["flashinfer_python"] or flags["flashinfer"]
        return cls(**flags, source=source)

    def present(self) -> list[str]:
        """Names that are present; the package alone is listed only when
        has_flashinfer() is False."""
        out = [n for n in self.NAMES if getattr(self, n.replace("-", "_"))]
        if self.flashinfer and "flashinfer-python" in out:
            out.remove("flashinfer-python")
        return out

    def key(self) -> tuple[bool, ...]:
        """Identity for caching and comparison: the flags, not the source."""
        return tuple(getattr(self, n.replace("-", "_")) for n in self.NAMES)


class SelectorConfig(NamedTuple):
    """vLLM 0.33.0 ``AttentionSelectorConfig``: same 18 fields, same order,
    same defaults. ``dtype`` is the torch dtype's name without "torch."."""

    head_size: int
    dtype: str
    kv_cache_dtype: str | None
    block_size: int | None
    use_mla: bool = False
    has_sink: bool = False
    use_sparse: bool = False
    use_mm_prefix: bool = False
    use_per_head_quant_scales: bool = False
    attn_type: str = AttentionType.DECODER.value
    has_sliding_window: bool = False
    use_non_causal: bool = False
    use_batch_invariant: bool = False
    use_kv_connector: bool = False
    use_pcp: bool = False
    use_adaptive_verification: bool = False
    use_dcp: bool = False
    use_rswa: bool = False

    def vllm_repr(self) -> str:
        """The text of vLLM's hand-written ``AttentionSelectorConfig.__repr__``.

        Its field order differs from the declaration (use_adaptive_verification
        comes before use_pcp) and vLLM's error messages embed it, so it is
        reproduced exactly. ``attn_type`` prints as the enum member
        ("AttentionType.DECODER"), see ``attn_type_text``.
        """
        return (
            f"AttentionSelectorConfig(head_size={self.head_size}, "
            f"dtype=torch.{self.dtype}, "
            f"kv_cache_dtype={self.kv_cache_dtype}, "
            f"block_size={self.block_size}, "
            f"use_mla={self.use_mla}, "
            f"has_sink={self.has_sink}, "
            f"use_sparse={self.use_sparse}, "
            f"use_mm_prefix={self.use_mm_prefix}, "
            f"use_per_head_quant_scales={self.use_per_head_quant_scales}, "
            f"attn_type={attn_type_text(self.attn_type)}, "
            f"has_sliding_window={self.has_sliding_window}, "
            f"use_non_causal={self.use_non_causal}, "
            f"use_batch_invariant={self.use_batch_invariant}, "
            f"use_kv_connector={self.use_kv_connector}, "
            f"use_adaptive_verification={self.use_adaptive_verification}, "
            f"use_pcp={self.use_pcp}, "
            f"use_dcp={self.use_dcp}, "
            f"use_rswa={self.use_rswa})"
        )


SELECTOR_FIELDS: tuple[str, ...] = SelectorConfig._fields


class EngineContext(NamedTuple):
    """Facts vLLM's predicates read from the current ``VllmConfig`` (and env)
    rather than from their arguments. ``has_model`` False means vLLM would
    see ``model_config is None`` (a raw selector config with no model), and
    every model-dependent check then takes its no-model branch.
    """

    has_model: bool = False
    # model_config.get_head_size() / head_size_v of the model's main attention
    model_head_size: int | None = None
    model_head_size_v: int | None = None
    # model_config.get_num_attention_heads(parallel_config) / get_num_kv_heads(...)
    model_num_heads: int | None = None
    model_num_kv_heads: int | None = None
    # cache_config.cache_dtype: the run-wide KV-cache dtype
    cache_dtype: str = "auto"
    # attention_config.flash_attn_version (--attention-config.flash_attn_version)
    flash_attn_version: int | None = None
    # attention_config.use_trtllm_attention (None = auto)
    use_trtllm_attention: bool | None = None
    # hf_text_config.attn_logit_softcapping is set (Gemma-2)
    attn_logit_softcapping: bool = False
    # model_config.is_mm_prefix_lm
    is_mm_prefix_lm: bool = False
    # model_config.rswa_window
    rswa_window: int | None = None
    # model_config.is_diffusion
    is_diffusion: bool = False
    # parallel_config.decode_context_parallel_size
    dcp_size: int = 1
    # envs.VLLM_BATCH_INVARIANT
    batch_invariant: bool = False
    # parallel_config.prefill_context_parallel_size
    pcp_size: int = 1
    # MLA dims as attributes of hf_text_config, read by MLA backends'
    # supports_combination. None = the attribute is absent (each backend then
    # applies its own getattr default).
    mla_qk_nope_head_dim: int | None = None
    mla_qk_rope_head_dim: int | None = None
    mla_v_head_dim: int | None = None
    mla_kv_lora_rank: int | None = None
    # hf_text_config.index_topk (sparse MLA, DeepSeek-V3.2); None = absent
    mla_index_topk: int | None = None
    # the MLA dims hf_text_config has no attribute for, and its class name
    # (a check reading one as a plain attribute raises AttributeError)
    mla_dims_absent: tuple[str, ...] = ()
    text_config_class: str = ""
    # attention_config.disable_flashinfer_q_quantization: FlashInfer keeps the
    # model dtype for Q with an fp8/nvfp4 cache (get_q_data_type)
    disable_flashinfer_q_quantization: bool = False
    # Some attention layer of the model has a sliding window and no
    # mm_prefix_clamp_sliding_window: MMPrefixAttentionRouting (the
    # TRITON_FLASH_ATTN / TRITON_FLASHINFER composites) then reports NEVER
    # for CUDA graphs instead of UNIFORM_SINGLE_TOKEN_DECODE.
    unclamped_sliding_window: bool = False

    def changed(self) -> dict[str, object]:
        """Fields that differ from the defaults, for reports (not the config
        object's bookkeeping, which no VllmConfig field holds)."""
        default = EngineContext()
        return {
            name: value
            for name, value, default_value in zip(self._fields, self, default)
            if value != default_value and name not in _BOOKKEEPING
        }


_BOOKKEEPING = frozenset({"mla_dims_absent", "text_config_class"})


class Query(NamedTuple):
    """Everything one predicate may look at. Backend rules take a Query and
    nothing else, so every input of a decision is visible and hashable."""

    cfg: SelectorConfig
    cap: Capability
    kernels: Kernels
    ctx: EngineContext
