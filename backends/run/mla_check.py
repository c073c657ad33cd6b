"""One checked MLA decode step, self-contained: allocate the backend's latent
cache, fill it, write the new tokens through ``slot_mapping``, build, run
into a poisoned output, compare with the float32 latent reference.

This is what ``attn-select run`` does per MLA row (the runner will call the
same pieces); tests and the benchmark call ``check_mla_decode`` directly.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

from attn_select.backends.run.adapter import RunEnv, quantize_fp8
from attn_select.backends.run.batch import Batch, fill_random_
from attn_select.backends.run.mla_reference import MLAParams, reference_mla_attention
from attn_select.backends.run.reference import relative_error, tolerance


@dataclass
class MLAInputs:
    """One MLA layer's per-step tensors: the absorbed query and the new tokens' latents."""

    q: torch.Tensor  # [T, H, rank + rope], activation dtype
    latent_new: torch.Tensor  # [T, rank + rope], activation dtype (kv_c then k_pe)


def random_mla_inputs(batch: Batch, p: MLAParams, dtype: torch.dtype,
                      generator: torch.Generator | None = None) -> MLAInputs:
    """Fresh N(0, 1) query and new latents (never zeros: they hide unwritten outputs)."""
    t, dev = batch.num_tokens, batch.device

    def rnd(*shape):
        return torch.randn(*shape, generator=generator, dtype=torch.float32).to(dev, dtype)

    return MLAInputs(rnd(t, p.num_heads, p.latent_dim), rnd(t, p.latent_dim))


def write_latents(cache: torch.Tensor, batch: Batch, latent_new: torch.Tensor, kv_scale: float = 1.0) -> None:
    """Write the new tokens' latents into a [num_pages, page_size, D] cache, as
    vLLM's ``concat_and_cache_mla`` does: an fp8 cache stores latent / kv_scale."""
    page = batch.slot_mapping // batch.page_size
    off = batch.slot_mapping % batch.page_size
    if cache.element_size() == 1:
        cache[page, off] = quantize_fp8(latent_new, cache.dtype, kv_scale)
    else:
        cache[page, off] = latent_new.to(cache.dtype)


@dataclass
class MLACheck:
    errors: list[float]
    tolerance: float
    unwritten: int  # output elements still NaN after the run
    kernel: str = ""
    plan: object = field(default=None, repr=False)

    @property
    def ok(self) -> bool:
        return self.unwritten == 0 and all(e <= self.tolerance for e in self.errors)


def check_mla_decode(batch: Batch, params: MLAParams, device: torch.device | str, dtype: torch.dtype,
                     kv_cache_dtype: str = "auto", *, checks: int = 1, seed: int = 0, adapter=None,
                     tolerance_override: float | None = None, **build_kw) -> MLACheck:
    """Run TRITON_MLA's decode ``checks`` times on fresh inputs and compare each
    with the float32 reference. ``build_kw`` reaches ``build`` (``tiles=``,
    ``num_splits=`` force the table's choices); ``adapter`` may be any MLA
    adapter with the same contract."""
    dev = torch.device(device)
    if adapter is None:
        from attn_select.backends.run.triton_mla import TritonMLAAdapter

        cap = torch.cuda.get_device_capability(dev) if dev.type == "cuda" else None
        adapter = TritonMLAAdapter(RunEnv(dev, cap, dtype, kv_cache_dtype), params)
    missing = adapter.unavailable()
    if missing:
        raise RuntimeError(missing)
    tol = tolerance_override if tolerance_override is not None else tolerance(
        str(dtype).removeprefix("torch."), kv_cache_dtype)
    errors, unwritten, plan = [], 0, None
    for c in range(max(1, checks)):
        gen = torch.Generator().manual_seed(seed * 1000 + c)
        cache = adapter.alloc_cache(batch.num_pages, batch.page_size)
        fill_random_(cache, gen)
        inp = random_mla_inputs(batch, params, dtype, gen)
        write_latents(cache, batch, inp.latent_new, params.kv_scale)
        out = torch.full((batch.num_tokens, params.num_heads, params.kv_lora_rank), float("nan"), dtype=dtype,
                         device=dev)
        plan = adapter.build(batch, **build_kw)
        adapter.run(plan, inp.q, cache, None, out)
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)
        unwritten += int(torch.isnan(out).sum())
        ref = reference_mla_attention(inp.q, cache, batch, params)
        errors.append(relative_error(out, ref))
    return MLACheck(errors, tol, unwritten, adapter.kernel_name(plan), plan)
