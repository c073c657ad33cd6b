"""Options shared by explain, run and lock: the what-if flags are named after
vLLM's fields and flags, and each maps one for one onto ``Overrides``."""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Optional

import typer


class Format(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


class Engine(str, Enum):
    vllm = "vllm"
    sglang = "sglang"
    both = "both"


_WHAT_IF = "What-if overrides (vLLM's names)"
_RAW = "Raw AttentionSelectorConfig fields"
_IN = "Inputs"

DeviceOpt = Annotated[Optional[str], typer.Option("--device", help="Device profile (h100, b200, a100, ...). Default: the visible GPU.", rich_help_panel=_IN)]
CapabilityOpt = Annotated[Optional[str], typer.Option("--capability", help="Compute capability X.Y instead of a device profile.", rich_help_panel=_IN)]
KernelsOpt = Annotated[Optional[str], typer.Option("--kernels", help="Installed kernels, comma-separated, from fa2,fa3,fa4,flashinfer,trtllm-cubins,flashmla,flashinfer-python,tokenspeed-mla (or none). Default with --device/--capability: all that vLLM's wheel ships; on a live GPU: probed.", rich_help_panel=_IN)]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]

DtypeOpt = Annotated[Optional[str], typer.Option("--dtype", help="Activation dtype: bfloat16, float16, float32.", rich_help_panel=_WHAT_IF)]
KvDtypeOpt = Annotated[Optional[str], typer.Option("--kv-cache-dtype", help="vLLM --kv-cache-dtype (auto, fp8, fp8_e4m3, fp8_e5m2, nvfp4, ...).", rich_help_panel=_WHAT_IF)]
BlockSizeOpt = Annotated[Optional[int], typer.Option("--block-size", help="vLLM --block-size (user-specified, so it takes part in selection).", rich_help_panel=_WHAT_IF)]
BackendOpt = Annotated[Optional[str], typer.Option("--backend", help="vLLM --attention-backend: validate this backend only, no fallback.", rich_help_panel=_WHAT_IF)]
TpOpt = Annotated[int, typer.Option("--tp", min=1, help="Tensor-parallel size: heads per rank.", rich_help_panel=_WHAT_IF)]
NumHeadsOpt = Annotated[Optional[int], typer.Option("--num-heads", help="Per-rank query heads passed to the MLA priority list.", rich_help_panel=_WHAT_IF)]
FaVersionOpt = Annotated[Optional[int], typer.Option("--flash-attn-version", help="attention_config.flash_attn_version override (2, 3 or 4).", rich_help_panel=_WHAT_IF)]
TrtllmOpt = Annotated[Optional[bool], typer.Option("--use-trtllm-attention/--no-use-trtllm-attention", help="attention_config.use_trtllm_attention (default: auto).", rich_help_panel=_WHAT_IF)]
DcpOpt = Annotated[Optional[int], typer.Option("--dcp-size", help="Decode context parallel size.", rich_help_panel=_WHAT_IF)]
MlaPrefillBackendOpt = Annotated[Optional[str], typer.Option("--mla-prefill-backend", help="attention_config.mla_prefill_backend: validate this MLA prefill backend only, no fallback (FLASH_ATTN, FLASHINFER, TRTLLM_RAGGED, TOKENSPEED_MLA, ROCM_AITER_FA, CPU, ZEN_CPU, CUSTOM).", rich_help_panel=_WHAT_IF)]

# --engine sglang|both: SGLang 0.5.23's server flags, under SGLang's names.
_SGL = "SGLang server flags (--engine sglang|both)"
EngineOpt = Annotated[Engine, typer.Option("--engine", help="Which engine's selection: vllm (0.33.0), sglang (0.5.23), or both side by side.")]
AttentionBackendOpt = Annotated[Optional[str], typer.Option("--attention-backend", help="SGLang --attention-backend (fa3, fa4, flashinfer, triton, trtllm_mha, trtllm_mla, flashmla, ...).", rich_help_panel=_SGL)]
PrefillBackendOpt = Annotated[Optional[str], typer.Option("--prefill-attention-backend", help="SGLang --prefill-attention-backend.", rich_help_panel=_SGL)]
DecodeBackendOpt = Annotated[Optional[str], typer.Option("--decode-attention-backend", help="SGLang --decode-attention-backend.", rich_help_panel=_SGL)]
PageSizeOpt = Annotated[Optional[int], typer.Option("--page-size", help="SGLang --page-size.", rich_help_panel=_SGL)]
SpecAlgoOpt = Annotated[Optional[str], typer.Option("--speculative-algorithm", help="SGLang --speculative-algorithm: EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM.", rich_help_panel=_SGL)]
SpecTopkOpt = Annotated[Optional[int], typer.Option("--speculative-eagle-topk", help="SGLang --speculative-eagle-topk.", rich_help_panel=_SGL)]
SpecStepsOpt = Annotated[Optional[int], typer.Option("--speculative-num-steps", help="SGLang --speculative-num-steps.", rich_help_panel=_SGL)]
SpecDraftOpt = Annotated[Optional[int], typer.Option("--speculative-num-draft-tokens", help="SGLang --speculative-num-draft-tokens.", rich_help_panel=_SGL)]
DeterministicOpt = Annotated[bool, typer.Option("--enable-deterministic-inference", help="SGLang --enable-deterministic-inference.", rich_help_panel=_SGL)]
CudaVersionOpt = Annotated[Optional[str], typer.Option("--cuda-version", help="CUDA version SGLang's torch was built with (its Hopper and Blackwell rules read it). Default: the device profile's, else 12.9.", rich_help_panel=_SGL)]


def _flag(name: str) -> object:
    return Annotated[Optional[bool], typer.Option(f"--{name}/--no-{name}", rich_help_panel=_RAW, show_default=False)]


HeadSizeOpt = Annotated[Optional[int], typer.Option("--head-size", help="head_size.", rich_help_panel=_RAW)]
AttnTypeOpt = Annotated[Optional[str], typer.Option("--attn-type", help="decoder, encoder, encoder_only, encoder_decoder.", rich_help_panel=_RAW)]
UseMla = _flag("use-mla")
HasSink = _flag("has-sink")
UseSparse = _flag("use-sparse")
UseMmPrefix = _flag("use-mm-prefix")
UsePerHead = _flag("use-per-head-quant-scales")
HasSlidingWindow = _flag("has-sliding-window")
UseNonCausal = _flag("use-non-causal")
UseBatchInvariant = _flag("use-batch-invariant")
UseKvConnector = _flag("use-kv-connector")
UsePcp = _flag("use-pcp")
UseAdaptiveVerification = _flag("use-adaptive-verification")
UseDcp = _flag("use-dcp")
UseRswa = _flag("use-rswa")
