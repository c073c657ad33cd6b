"""The contract every run adapter follows, and what it is told about the run.

An adapter runs one backend's attention over a paged KV cache in the
backend's own layout, as a serving engine does it:

1. ``alloc_cache`` once per layer: the backend's cache tensor(s);
   ``kv_views`` exposes them as [num_pages, page_size, Hkv, D] views so the
   engine-neutral writer and the reference can read/write any layout;
2. ``build(batch)`` once per step: the backend's own metadata (FlashInfer's
   indptr/indices/last_page_len + plan(), our Triton work list, flex's block
   mask, ...), timed on the host as the build cost c;
3. ``run(plan, q, cache, sinks, out)`` once per layer, reusing the plan,
   writing [T, Hq, Dv] into ``out``.

``unavailable(env)`` says why the backend cannot execute here (not
installed, not runnable on this GPU) or None.

What vLLM would run for the row (the FlashAttention version, FlashInfer's
trtllm-API decode kernel and context choice) comes in ``row``, the row of
the selector's run plan; ``RunEnv`` holds only what is true of this
process and GPU.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import torch

from attn_select.backends.run.batch import Batch
from attn_select.backends.run.reference import AttnParams
from attn_select.selector.run_plan import RowPlan


@dataclass(frozen=True)
class RunEnv:
    """This process's device and dtypes; built once by the runner, never changed."""

    device: torch.device
    capability: tuple[int, int] | None  # (9, 0) on an H200; None on CPU
    dtype: torch.dtype  # activations
    kv_cache_dtype: str  # "auto" or "fp8..." (vLLM spelling)
    progress: Callable[[str], None] = field(default=lambda msg: None)
    # Device buffers kept across rows and backends (FlashInfer's workspaces),
    # as vLLM's runner shares one workspace between attention groups.
    workspace: dict[str, Any] = field(default_factory=dict)

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"


class Adapter:
    """Base class; see the module docstring for the call order."""

    name = "?"
    # Its kernels exist only for CUDA GPUs: on a CPU it is skipped, and a
    # CPU run cannot confirm a selection of it (cli/run.py's exit status).
    cuda_only = False
    # Allocates its own cache layout [num_pages, 2, page_size, Hkv, D] unless overridden.

    def __init__(self, env: RunEnv, p: AttnParams, row: RowPlan | None = None):
        self.env = env
        self.p = p
        self.row = row if row is not None else RowPlan(self.name)

    def unavailable(self) -> str | None:
        return None

    def alloc_cache(self, num_pages: int, page_size: int) -> torch.Tensor:
        """Default layout (vLLM's FlashInfer/Triton NHD): [num_pages, 2, page_size, Hkv, D]."""
        p = self.p
        if p.head_size != p.head_size_v:
            raise ValueError("this cache layout needs head_size == head_size_v")
        return torch.empty(num_pages, 2, page_size, p.num_kv_heads, p.head_size,
                           dtype=self.cache_torch_dtype(), device=self.env.device)

    def kv_views(self, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return cache[:, 0], cache[:, 1]

    def cache_torch_dtype(self) -> torch.dtype:
        return cache_dtype(self.env.kv_cache_dtype, self.env.dtype)

    @property
    def fp8_cache(self) -> bool:
        """The KV cache is fp8 (--kv-cache-dtype fp8*, vLLM's spelling)."""
        return self.env.kv_cache_dtype.startswith("fp8")

    def build(self, batch: Batch) -> Any:
        raise NotImplementedError

    def run(self, plan: Any, q: torch.Tensor, cache: Any, sinks: torch.Tensor | None, out: torch.Tensor) -> None:
        raise NotImplementedError

    def kernel_name(self, plan: Any) -> str:
        return ""

    def close(self) -> None:
        """Drop references to device buffers (the runner frees memory between backends)."""


def runs_on_cpu(adapter: str | None) -> bool:
    """Whether the adapter ``module:Class`` (a spec's ``run_adapter``; None:
    attn-select run has none) executes on a CPU."""
    import importlib

    if adapter is None:
        return False
    module, cls = adapter.split(":")
    return not getattr(importlib.import_module(module), cls).cuda_only


def quantize_fp8(x: torch.Tensor, dtype: torch.dtype = torch.float8_e4m3fn, scale: float = 1.0) -> torch.Tensor:
    """vLLM's static per-tensor ``scaled_fp8_quant`` of a query: x / scale,
    clamped to the format's range, rounded to ``dtype``."""
    limit = torch.finfo(dtype).max
    return (x.float() / scale).clamp_(-limit, limit).to(dtype)


def cache_dtype(kv_cache_dtype: str, act: torch.dtype) -> torch.dtype:
    if kv_cache_dtype in ("auto", None):
        return act
    if kv_cache_dtype in ("fp8", "fp8_e4m3"):
        return torch.float8_e4m3fn
    if kv_cache_dtype == "fp8_e5m2":
        return torch.float8_e5m2
    if kv_cache_dtype in ("float16", "half"):
        return torch.float16
    if kv_cache_dtype == "bfloat16":
        return torch.bfloat16
    raise ValueError(f"kv cache dtype {kv_cache_dtype!r} is not supported by attn-select run")


class HostStaging:
    """One reusable pinned host buffer for the per-step metadata upload.

    ``upload`` packs int32 CPU tensors into it and issues one async copy to the
    device; pinning fresh memory every step would cost more than the build
    itself. Before the buffer is rewritten, the previous copy is waited for."""

    def __init__(self) -> None:
        self.buf: torch.Tensor | None = None
        self.done: Any = None

    def upload(self, parts: list[torch.Tensor], device: torch.device) -> list[torch.Tensor]:
        flat = [t.reshape(-1).to(torch.int32) for t in parts]
        if device.type != "cuda":
            return [f.view(t.shape) for f, t in zip(flat, parts)]
        n = sum(f.numel() for f in flat)
        if self.done is not None:
            self.done.synchronize()
        if self.buf is None or self.buf.numel() < n:
            self.buf = torch.empty(max(n, 2 * (self.buf.numel() if self.buf is not None else 0), 1024),
                                   dtype=torch.int32, pin_memory=True)
        at = 0
        for f in flat:
            self.buf[at:at + f.numel()].copy_(f)
            at += f.numel()
        dev = self.buf[:n].to(device, non_blocking=True)
        self.done = torch.cuda.Event()
        self.done.record()
        out, at = [], 0
        for f, t in zip(flat, parts):
            out.append(dev[at:at + f.numel()].view(t.shape))
            at += f.numel()
        return out


class Unsupported(Exception):
    """Raised by an adapter for a configuration it cannot run (reported as skipped)."""


class RoutedElsewhere(Unsupported):
    """Raised by an adapter whose backend vLLM would not give (all of) this
    batch: an MLA builder sends requests above its decode threshold to the
    MLA prefill backend. Reported as skipped, and not held against the
    backend's verdict (the MLA prefill row runs those tokens)."""


class SeparateKVAdapter(Adapter):
    """Backends whose kernels take K and V as two paged tensors (FlashAttention's
    and flex's layout): one allocation [2, num_pages, page_size, Hkv, D]."""

    def alloc_cache(self, num_pages: int, page_size: int) -> torch.Tensor:
        p = self.p
        if p.head_size != p.head_size_v:
            raise ValueError("this cache layout needs head_size == head_size_v")
        return torch.empty(2, num_pages, page_size, p.num_kv_heads, p.head_size,
                           dtype=self.cache_torch_dtype(), device=self.env.device)

    def kv_views(self, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return cache[0], cache[1]
