"""From model + device + SGLang flags to one ``SGLangExplanation``: the
inputs as SGLang sees them and the ``Resolution`` with its trail. Nothing
here renders; ``cli/formats`` does."""

from __future__ import annotations

from dataclasses import dataclass, field

from attn_select.selector.config import Kernels
from attn_select.selector.device import Device
from attn_select.selector.errors import UserError
from attn_select.selector.model_facts import ModelFacts
from attn_select.selector.sglang import ENGINE, ENGINE_VERSION
from attn_select.selector.sglang.choices import KV_CACHE_DTYPES, SGLANG_TO_VLLM_KV, VLLM_TO_SGLANG_KV
from attn_select.selector.sglang.inputs import ServerFlags
from attn_select.selector.sglang.model import SGLangModel, sglang_model
from attn_select.selector.sglang.model_overrides import NOT_MODELLED
from attn_select.selector.sglang.platform import DEFAULT_CUDA_VERSION, Platform, parse_cuda_version
from attn_select.selector.sglang.resolve import Resolution, resolve


@dataclass(frozen=True)
class SGLangExplanation:
    model: ModelFacts
    device: Device
    kernels: Kernels
    platform: Platform
    sgl_model: SGLangModel
    flags: ServerFlags
    resolution: Resolution
    engine: str = ENGINE
    engine_version: str = ENGINE_VERSION
    notes: tuple[str, ...] = field(default=())
    warnings: tuple = field(default=())  # selector.installed.EngineWarning, attached at the CLI edge

    @property
    def ok(self) -> bool:
        return self.resolution.ok


def platform_for(device: Device, kernels: Kernels, cuda_version: str | None) -> Platform:
    """The machine facts: --cuda-version, else the device profile's, else 12.9."""
    if cuda_version is not None:
        try:
            cuda, source = parse_cuda_version(cuda_version), "--cuda-version"
        except ValueError as exc:
            raise UserError(f"--cuda-version: {exc}") from None
    elif device.cuda_version is not None:
        cuda, source = parse_cuda_version(device.cuda_version), f"device profile {device.profile}"
    else:
        cuda, source = DEFAULT_CUDA_VERSION, "default (no device profile names one)"
    memory = device.memory_gib * 1024 if device.memory_gib is not None else None
    return Platform(device.capability, cuda, kernels.flashinfer_python, memory, source)


def sglang_kv_cache_dtype(value: str | None, engine: str) -> tuple[str, str | None]:
    """--kv-cache-dtype for the SGLang side, and a note when it was mapped.

    With --engine sglang the value is SGLang's. With --engine both one value
    serves both engines: a name of either engine is accepted and mapped to
    the other's name for the same cache (vLLM's fp8 is fp8_e4m3 on CUDA)."""
    if value is None:
        return "auto", None
    if value in KV_CACHE_DTYPES:
        return value, None
    if value in VLLM_TO_SGLANG_KV:
        mapped = VLLM_TO_SGLANG_KV[value]
        return mapped, f"--kv-cache-dtype {value} (vLLM's name) is SGLang's {mapped}"
    raise UserError(f"--kv-cache-dtype {value!r}: SGLang has no such KV-cache dtype "
                    + ("(vLLM's; SGLang has no equivalent); " if engine == "both" else "; ")
                    + f"SGLang's: {', '.join(KV_CACHE_DTYPES)}")


def vllm_kv_cache_dtype(value: str | None) -> tuple[str | None, str | None]:
    """--kv-cache-dtype for the vLLM side of --engine both."""
    from attn_select.selector.config import KV_CACHE_DTYPES as VLLM_KV

    if value is None or value in VLLM_KV:
        return value, None
    if value in SGLANG_TO_VLLM_KV:
        mapped = SGLANG_TO_VLLM_KV[value]
        return mapped, f"--kv-cache-dtype {value} (SGLang's name) is vLLM's {mapped}"
    raise UserError(f"--kv-cache-dtype {value!r} is SGLang's and vLLM has no equivalent; "
                    f"vLLM's: {', '.join(VLLM_KV)}")


def explain_sglang(
    model: ModelFacts | None,
    device: Device,
    kernels: Kernels,
    flags: ServerFlags,
    cuda_version: str | None = None,
    notes: tuple[str, ...] = (),
) -> SGLangExplanation:
    if model is None:
        raise UserError("--engine sglang needs a MODEL: SGLang resolves one backend per server from the "
                        "model's config (a raw selector config is vLLM's)")
    flags.validate()
    sgl = sglang_model(model)
    if sgl.arch in NOT_MODELLED:
        raise UserError(f"{sgl.arch}: attn-select does not model SGLang's rules for this architecture "
                        f"({NOT_MODELLED[sgl.arch]})")
    platform = platform_for(device, kernels, cuda_version)
    resolution = resolve(flags, platform, sgl)
    return SGLangExplanation(model=model, device=device, kernels=kernels, platform=platform, sgl_model=sgl,
                             flags=flags, resolution=resolution, notes=tuple(notes))
