"""What the MLA adapters of vLLM's own kernels share: vLLM's latent cache
layout, the layer's quantization scales, lazy imports that turn a missing
module into a reason, and the per-row page size.

Cache layout (``MLACommonBackend.get_kv_cache_shape``): one tensor per layer,
[num_blocks, block_size, kv_lora_rank + qk_rope_head_dim], one latent vector
per token (no K/V axis, no head axis), 16-bit or fp8 e4m3 holding
``latent / k_scale`` (``concat_and_cache_mla``). The attention layer binds it
squeezed of its head axis; the kernels get ``unsqueeze`` views of it.

Scales: the layer's ``_q_scale`` and ``_k_scale`` are float32 device scalars,
1.0 without calibrated scales (``kv_scale`` of MLAParams for k). With an fp8
cache, ``MLAAttention.forward_impl`` quantizes the absorbed decode query to
fp8 with ``_q_scale`` (a static per-tensor ``QuantFP8``, fused in vLLM) for
every impl whose ``supports_quant_query_input`` is set (MLACommonImpl's
default: FLASHMLA, FLASHINFER_MLA, CUTLASS_MLA).

vLLM's modules are imported only when the row runs, through ``importer`` (a
test hands in fakes with vLLM 0.33.0's signatures); a module that does not
import is the row's reason, never a crash.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable

import torch

from attn_select.backends.run.adapter import Adapter, Unsupported, cache_dtype, quantize_fp8
from attn_select.backends.run.mla_reference import MLAParams


def _import(name: str) -> Any:
    return importlib.import_module(name)


def why_not(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:200]


class VllmMLAAdapter(Adapter):
    """Base of the adapters that call vLLM's MLA kernels."""

    name = "?"
    label = "?"  # "vLLM's FlashMLA", for the reasons
    cuda_only = True  # unless a test's importer stands in for vLLM

    def __init__(self, env, p: MLAParams, row=None, importer: Callable[[str], Any] = _import):
        super().__init__(env, p, row)
        self.importer = importer
        self._modules: dict[str, Any] = {}
        self._scales: dict[str, torch.Tensor] = {}

    @property
    def faked(self) -> bool:
        """A test's importer stands in for vLLM: the CPU may run the call path."""
        return self.importer is not _import

    def module(self, name: str) -> Any:
        if name not in self._modules:
            self._modules[name] = self.importer(name)
        return self._modules[name]

    def import_reason(self, name: str) -> str | None:
        """None when ``name`` imports, else the row's reason."""
        try:
            self.module(name)
        except Exception as e:  # ImportError, OSError from a broken build, ...
            return f"{self.label} is not importable: {name}: {why_not(e)}"
        return None

    def needs_gpu(self) -> str | None:
        if not self.env.is_cuda and not self.faked:
            return f"{self.label} needs a CUDA GPU"
        return None

    # -- cache ---------------------------------------------------------------

    def alloc_cache(self, num_pages: int, page_size: int) -> torch.Tensor:
        return torch.empty(num_pages, page_size, self.p.latent_dim, dtype=self.cache_torch_dtype(),
                           device=self.env.device)

    def kv_views(self, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        lat = cache.unsqueeze(2)
        return lat, lat[..., :self.p.kv_lora_rank]

    def cache_torch_dtype(self) -> torch.dtype:
        return cache_dtype(self.env.kv_cache_dtype, self.env.dtype)

    def kv_elem(self) -> int:
        return torch.empty(0, dtype=self.cache_torch_dtype()).element_size()

    # -- the layer's scales ----------------------------------------------------

    def scale(self, which: str) -> torch.Tensor:
        """layer._q_scale / _k_scale: a 0-dim float32 device tensor."""
        t = self._scales.get(which)
        if t is None:
            value = self.p.kv_scale if which == "k" else 1.0
            t = self._scales[which] = torch.tensor(value, dtype=torch.float32, device=self.env.device)
        return t

    def quant_query(self, q: torch.Tensor) -> torch.Tensor:
        """The attention layer's fp8 decode query (``_decode_concat_quant_fp8_op`` with ``_q_scale``)."""
        return quantize_fp8(q, torch.float8_e4m3fn, 1.0)

    def check_page(self, page_size: int, sizes: tuple[int, ...]) -> None:
        if page_size not in sizes:
            raise Unsupported(f"{self.label} reads pages of {' or '.join(map(str, sizes))} tokens "
                              f"(got {page_size}; vLLM's kernel block size for {self.name})")

    def close(self) -> None:
        self._scales.clear()


def sm_count(env) -> int:
    """The GPU's SM count (an H200's 132 on a CPU run with fakes)."""
    if env.is_cuda:
        return torch.cuda.get_device_properties(env.device).multi_processor_count
    return 132


def total_memory_gib(env) -> tuple[float | None, str]:
    if env.is_cuda:
        props = torch.cuda.get_device_properties(env.device)
        return props.total_memory / 2 ** 30, props.name
    return None, ""
