"""TRITON_MLA run adapter: our own Triton MLA decode kernel (``mla_kernel.py``).

Cache layout: vLLM's MLA one, [num_pages, page_size, kv_lora_rank + rope]
(one latent vector per token, no K/V axis, no head axis), bf16/fp16 or
float8_e4m3fn holding ``latent / kv_scale``.

``build(batch)`` is what vLLM's TritonMLA builder and ``forward_mqa`` settle
once per step: the decode rows' block table and sequence lengths (views of
the batch's device tensors, as ``MLACommonMetadataBuilder._build_decode``
keeps them), the split count, and the partial buffers (vLLM: its workspace);
no host-to-device copy. ``run`` launches the split pass and, with more than
one split, the merge; both are reused by every layer of the step.

Two kernels: on an sm_90 GPU with Triton 3.6's Gluon API, a 16-bit cache,
a head count that is a multiple of 64 and a page of 8k slots, the Gluon
kernel (``mla_gluon.py``: both warpgroups share the dots, which ``tl``
cannot express); otherwise the ``tl`` kernel (``mla_kernel.py``). The rule is
``gluon_unavailable``; the row's kernel name says which ran and why.
``tl`` launch choices come from a small table (``TILES``) keyed by the
head-group size and the cache element size, and the split count from the
occupancy rule in ``choose_splits``: nothing is tuned on the user's machine.

Only decode rows (one new token per request) run here: vLLM's TritonMLA
builder (reorder_batch_threshold 1) sends every other request to its MLA
prefill backend, never to ``decode_attention_fwd``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import torch

from attn_select.backends.run.adapter import Adapter, Unsupported, cache_dtype
from attn_select.backends.run.batch import Batch
from attn_select.backends.run.gluon_gate import gluon_hopper_unavailable
from attn_select.backends.run.mla_reference import MLAParams
from attn_select.backends.run.mla_routing import require_all_decodes

if TYPE_CHECKING:  # mla_gluon imports Gluon: only where the rule takes it
    from attn_select.backends.run.mla_gluon import GluonTiles

# The cache dtypes our kernel stores: 16-bit, or fp8 e4m3 widened in registers.
# (vLLM's TritonMLABackend accepts the same list; the run plan has already
# skipped a row whose dtype vLLM rejects, so this guards standalone use.)
SUPPORTED_KV_CACHE_DTYPES = ("auto", "float16", "bfloat16", "fp8", "fp8_e4m3")
# Shared memory one H100/H200 block may use (227 KiB of the SM's 228).
SMEM_LIMIT = 227 * 1024
MAX_SPLITS = 128
# Under the interpreter every program runs in turn: pretend to a small GPU so
# that the split rule does not multiply the programs.
INTERPRETER_SM_COUNT = 4


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


@dataclass(frozen=True)
class MLATiles:
    """One launch shape. ``ctas_per_sm``: programs one SM holds at once (set by
    the shared memory of ``smem_bytes``), used by the split rule."""

    block_h: int  # query heads per program (rows of both dots)
    block_n: int  # keys per inner step
    num_stages: int  # Triton's software-pipeline depth (key buffers: ``key_buffers``)
    num_warps: int
    ctas_per_sm: int
    min_split_tokens: int  # a split shorter than this costs more in partials than it gains
    # the value tile loaded a second time (an L2 hit) so each load has one use
    # and Triton pipelines both: the fp8 cache on mma.sync
    split_v: bool = False
    # keys-major scores S^T = K Q^T and dims-major output O^T += V^T P^T (mla_kernel's
    # _attend_tile_t): on 64-row groups each score is computed once (the head-major form has
    # both warpgroups compute all of them), P^T goes through shared memory; 16-bit caches
    transposed: bool = False


def uses_wgmma(t: MLATiles) -> bool:
    """Triton emits Hopper's wgmma for a dot of 64 or more rows (one warpgroup's
    M); below that, mma.sync."""
    return t.block_h >= 64


def key_buffers(t: MLATiles, kv_elem: int) -> int:
    """Key-tile buffers in the cache's dtype that Triton's pipeliner allocates
    for ``num_stages`` (read off sm_90 compiles with Triton 3.6 and 3.9):
    the block-table read and the key load it addresses are a chain of two
    loads, which share the stages, so ``(num_stages - 1) // 2`` buffers; on
    wgmma a 16-bit tile gets one more, still read by the asynchronous value
    dot while the next tile's score runs (an fp8 tile is widened into a
    16-bit copy first, and that copy is the one the dot holds). Tiles in
    flight during a tile's dots: one fewer than the buffers."""
    if t.num_stages == 1:
        return 0  # loaded through registers into one 16-bit shared tile
    n = max(1, (t.num_stages - 1) // 2)
    # transposed, the score dot is on mma.sync (BLOCK_N keys are its rows) and holds no buffer
    return n + 1 if uses_wgmma(t) and kv_elem == 2 and not t.transposed else n


def smem_bytes(t: MLATiles, latent_dim: int, kv_elem: int, q_elem: int = 2, rank: int = 512) -> int:
    """Shared memory of one program, as Triton lays it out for sm_90
    (``metadata.shared`` of benchmarks/mla_aot_report.py's compiles with
    Triton 3.6, the H200 image's, is within 2 KiB of this for every table
    and sweep entry):

    - the query tile [BLOCK_H, 576], a dot operand re-read every step;
    - ``key_buffers`` key tiles in the cache's dtype (with ``split_v`` each
      buffer also holds the second copy of the tile's first ``rank`` dims);
    - fp8 on wgmma, and ``num_stages`` 1 (no pipeline: the loads go through
      registers): the 16-bit tile the dots read;
    - ``transposed``: P^T [BLOCK_N, BLOCK_H], the output dot's shared operand."""
    tile = t.block_n * latent_dim
    q = t.block_h * latent_dim * q_elem
    p_t = t.block_n * t.block_h * q_elem if t.transposed else 0
    if t.num_stages == 1:
        return q + tile * q_elem + p_t
    per_buffer = (tile + (t.block_n * rank if t.split_v else 0)) * kv_elem
    widened = tile * q_elem if uses_wgmma(t) and kv_elem == 1 else 0
    return q + key_buffers(t, kv_elem) * per_buffer + widened + p_t


# (head-group size, cache element bytes) -> tiles, for 576 latent dims,
# chosen by the H200 sweep of benchmarks/run_triton_mla.py (Triton 3.6; 32
# requests x 4096 tokens, page 64; numbers in BENCHMARKS.md). Every entry
# compiles for sm_90 within shared memory (``smem_bytes``, checked by the
# tests against SMEM_LIMIT) with its loads pipelined (mla_aot_report.py).
#
# 16 heads (DeepSeek-V3 at tp 8) is memory-bound, on mma.sync (16 rows).
# 16-bit cache: 64-key tiles, 8 warps, num_stages 5 = two 72 KiB buffers,
# one tile in flight while the dots read the other; 164 KiB, one program
# per SM, 4 splits: 49.5 us, 3.05 TB/s. Two programs per SM with 32-key
# tiles (8 splits) ran 51.0; 3 buffers of 32 keys at 4 warps 56.0. The
# same entry at page 16 (`run`'s default; four pages a tile, their
# block-table entries read as one vector): 51.2 us, 2.95 TB/s (one entry
# per key: 63.8).
#
# fp8 cache: 32-key tiles with the value loaded apart (two 34 KiB buffers),
# 4 warps, two programs per SM, 8 splits: 57.6 us. Deeper pipelines (three
# 64-key or four 32-key buffers, one program per SM) ran 67 to 80 us, so
# bytes in flight are not the limit; the likely one is the value dot's
# operand, gathered byte by byte from the 8-bit tile in shared memory
# (mma.sync wants pairs along the key axis: 128 byte loads per warp per
# 32-key tile in the SASS). Still slower than the 16-bit cache. Widening
# the value tile to fp16 by an opaque conversion, so that Triton reads it
# back with ldmatrix.trans instead of byte by byte, lost: 72-125 us (the
# extra shared-memory round trip and barrier per tile cost more).
#
# 32 heads: 32-key tiles, 2 buffers, 8 warps (not measured on the H200).
#
# 64 heads per group (64 heads, and 128 as 2 groups: DeepSeek-V3 at tp 1)
# is compute-bound, on wgmma. Triton keeps a chained dot's 8 warps on M,
# so both warpgroups compute the same 64 x BLOCK_N scores, with N / 2 wide
# instructions that re-read the query from shared memory: the score dot is
# bound by shared memory. 32-key tiles, num_stages 7 = 4 buffers (two in
# flight), 216 KiB: 174 us; 64-key tiles fit only 2 buffers (no tile in
# flight): 189. fp8 cache: 64-key tiles, two fp8 buffers and the fp16 copy
# the dots read, 216 KiB: 189 us. Measured and lost on the H200 (code in
# git history, numbers in BENCHMARKS.md): 128-row groups with the output
# dims in two launches (177-248 us: the scores computed twice again), P
# staged through memory so the score dot spreads over both warpgroups
# (216-296 us: the round trip costs more than the halved score work).
TILES: dict[tuple[int, int], MLATiles] = {
    (16, 2): MLATiles(16, 64, 5, 8, 1, 256),
    (16, 1): MLATiles(16, 32, 5, 4, 2, 256, split_v=True),
    (32, 2): MLATiles(32, 32, 5, 8, 1, 256),
    (32, 1): MLATiles(32, 32, 5, 8, 1, 256, split_v=True),
    (64, 2): MLATiles(64, 32, 7, 8, 1, 256),
    (64, 1): MLATiles(64, 64, 5, 8, 1, 256),
}


def choose_tiles(num_heads: int, kv_elem: int) -> MLATiles:
    """The table's entry for this head count: the smallest group holding all
    heads (so the latent is read once per request), 64 above that (two or
    more groups; the later ones re-read it from L2)."""
    group = 16 if num_heads <= 16 else 32 if num_heads <= 32 else 64
    return TILES[(group, 1 if kv_elem == 1 else 2)]


def gluon_unavailable(is_cuda: bool, capability, kv_elem: int, num_heads: int, page_size: int, rank: int,
                      rope: int) -> str | None:
    """Why the Gluon kernel does not take this shape (None: it does). Its
    program is 64 heads of one request on two Hopper warpgroups (wgmma, TMA),
    so: an sm_90 GPU, Triton 3.6's Gluon, a 16-bit cache, heads a multiple
    of 64, power-of-two rank and rope, and pages of a multiple of 8 slots (a
    TMA copy lands on whole 8-row swizzle atoms)."""
    if os.environ.get("ATTN_SELECT_MLA_KERNEL", "") == "tl":
        return "ATTN_SELECT_MLA_KERNEL=tl"
    why = gluon_hopper_unavailable(is_cuda, capability, "mla_gluon")
    if why:
        return why
    if kv_elem != 2:
        return "fp8 cache (the Gluon kernel takes 16-bit caches)"
    if num_heads % 64:
        return f"{num_heads} heads (the Gluon kernel takes multiples of 64)"
    if rank & (rank - 1) or rope & (rope - 1) or rope < 8:
        return f"rank {rank} / rope {rope} (the Gluon kernel needs powers of two)"
    if page_size % 8:
        return f"page {page_size} (the Gluon kernel needs a multiple of 8)"
    return None


def choose_splits(batch_size: int, head_groups: int, max_seq_len: int, tiles: MLATiles, sm_count: int,
                  max_splits: int = MAX_SPLITS) -> int:
    """Split count: the fewest splits that fill the GPU's program slots about as
    well as any split count can (a rule, not a table: it follows from the
    batch shape and ``ctas_per_sm``).

    Programs = requests x head groups x splits, run in waves of
    ``sm_count x ctas_per_sm``; the share of busy slots over the waves is
    the efficiency. The rule takes the smallest split count within 5 points
    of the best efficiency reachable, since each split adds a partial (2 KiB
    per head) and merge work. A split never goes below ``min_split_tokens``
    keys. 32 x 4096 on an H200 (132 SMs): 16 heads, 1 group, 2 programs per
    SM -> 8 splits (256 programs); 128 heads, 2 groups, 1 per SM -> 2 splits
    (128 programs)."""
    slots = max(1, sm_count * tiles.ctas_per_sm)
    base = max(1, batch_size * head_groups)
    cap = max(1, min(max_splits, max_seq_len // max(1, tiles.min_split_tokens)))

    def efficiency(s: int) -> float:
        n = base * s
        return n / (math.ceil(n / slots) * slots)

    best = max(efficiency(s) for s in range(1, cap + 1))
    return next(s for s in range(1, cap + 1) if efficiency(s) >= best - 0.05)


@dataclass
class MLAPlan:
    """Per-step metadata (device tensors are views of the batch's, or the
    adapter's partial workspace)."""

    batch: Batch
    tiles: "MLATiles | GluonTiles"  # a GluonTiles: the Gluon kernel runs
    num_rows: int  # decode rows (= requests)
    head_groups: int
    num_splits: int
    block_table: torch.Tensor  # int32 [B, P]
    seq_lens: torch.Tensor  # int32 [B]
    part_o: torch.Tensor | None  # float32 [B, H, num_splits, RANK_PAD]
    part_lse: torch.Tensor | None  # float32 [B, H, num_splits]
    tiles_given: bool = False  # the caller's tiles, not the rule's: a failure is raised, not fallen back from


class TritonMLAAdapter(Adapter):
    name = "TRITON_MLA"

    def __init__(self, env, p: MLAParams, row=None, sm_count: int | None = None):
        super().__init__(env, p, row)
        self._sm = sm_count
        self.kv_scale: torch.Tensor | None = None  # device float32 [1], made by the first build
        self._workspace: torch.Tensor | None = None
        self._q_stage: torch.Tensor | None = None
        self._fallback: dict[MLATiles, MLATiles] = {}  # tiles that did not fit -> what ran
        self._gluon_failed: str | None = None  # why the rule's Gluon launch failed (then tl runs)
        self.why_not_gluon: str | None = None  # the rule's reason of the last build (None: Gluon)

    @property
    def sm_count(self) -> int:
        """The split rule's SM count (asked of the GPU once; a fixed small one under the interpreter)."""
        if self._sm is None:
            self._sm = (torch.cuda.get_device_properties(self.env.device).multi_processor_count
                        if self.env.is_cuda else INTERPRETER_SM_COUNT)
        return self._sm

    def unavailable(self) -> str | None:
        try:
            import triton  # noqa: F401
        except Exception as e:  # pragma: no cover - triton is a test dependency
            return f"triton not importable: {type(e).__name__}: {e}"
        kvd = self.env.kv_cache_dtype
        if kvd not in SUPPORTED_KV_CACHE_DTYPES:
            return f"our Triton MLA kernel stores no kv-cache dtype {kvd!r} (it takes {', '.join(SUPPORTED_KV_CACHE_DTYPES)})"
        if not self.env.is_cuda:
            if os.environ.get("TRITON_INTERPRET") != "1":
                return "Triton needs a GPU, or TRITON_INTERPRET=1 on CPU"
            return None
        cap = self.env.capability
        if self.fp8_cache and cap is not None and cap < (8, 9):
            return (f"FP8 KV cache is not supported by the Triton MLA backend on compute capability "
                    f"{cap[0]}.{cap[1]}; native FP8 (fp8e4nv) requires SM89+ (vLLM's check)")
        return None

    # -- cache ---------------------------------------------------------------

    def alloc_cache(self, num_pages: int, page_size: int) -> torch.Tensor:
        """vLLM's MLA layout: [num_pages, page_size, kv_lora_rank + rope]."""
        return torch.empty(num_pages, page_size, self.p.latent_dim, dtype=self.cache_torch_dtype(),
                           device=self.env.device)

    def kv_views(self, cache: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """[num_pages, page_size, 1, D] views: K is the whole latent vector, V its
        first kv_lora_rank dims (the same memory)."""
        lat = cache.unsqueeze(2)
        return lat, lat[..., :self.p.kv_lora_rank]

    def kv_elem(self) -> int:
        return torch.empty(0, dtype=self.cache_torch_dtype()).element_size()

    def cache_torch_dtype(self) -> torch.dtype:
        return cache_dtype(self.env.kv_cache_dtype, self.env.dtype)

    # -- per step ------------------------------------------------------------

    def build(self, batch: Batch, tiles=None, num_splits: int | None = None) -> MLAPlan:
        """``tiles`` / ``num_splits`` override the rule and the table (tests,
        the benchmark sweep): an ``MLATiles`` runs the tl kernel, a
        ``GluonTiles`` the Gluon one."""
        p = self.p
        rows = batch.num_requests
        require_all_decodes(batch, "TRITON_MLA", threshold=1, require_uniform=True)
        if batch.num_tokens != rows:
            raise Unsupported("TRITON_MLA's decode kernel takes one new token per request")
        if self.kv_scale is None:  # a device scalar, as vLLM's layer._k_scale: read by the kernel, no recompile
            self.kv_scale = torch.tensor([float(p.kv_scale)], dtype=torch.float32, device=self.env.device)
        given = tiles is not None
        if tiles is None:
            self.why_not_gluon = self._gluon_failed or gluon_unavailable(
                self.env.is_cuda, self.env.capability, self.kv_elem(), p.num_heads, batch.page_size,
                p.kv_lora_rank, p.qk_rope_head_dim)
            if self.why_not_gluon is None:
                from attn_select.backends.run.mla_gluon import gluon_tiles_for_run

                tiles = gluon_tiles_for_run()
            else:
                tiles = choose_tiles(p.num_heads, self.kv_elem())
        groups = -(-p.num_heads // tiles.block_h)
        ns = num_splits or choose_splits(rows, groups, batch.max_seq_len, tiles, self.sm_count)
        part_o = part_lse = None
        if ns > 1:
            rank_pad = _next_pow2(p.kv_lora_rank)
            n_o = rows * p.num_heads * ns * rank_pad
            n_lse = rows * p.num_heads * ns
            ws = self._partials(n_o + n_lse)
            part_o = ws[:n_o].view(rows, p.num_heads, ns, rank_pad)
            part_lse = ws[n_o:n_o + n_lse].view(rows, p.num_heads, ns)
        return MLAPlan(batch, tiles, rows, groups, ns, batch.block_table[:rows], batch.seq_lens[:rows],
                       part_o, part_lse, tiles_given=given)

    def _query_stage(self, n: int, dtype: torch.dtype) -> torch.Tensor:
        """Grow-only buffer for the kernel's scaled query (``STAGE_Q``), in the
        dots' dtype: fp16 on the GPU, float32 under the interpreter."""
        if self._q_stage is None or self._q_stage.numel() < n or self._q_stage.dtype != dtype:
            self._q_stage = torch.empty(n, dtype=dtype, device=self.env.device)
        return self._q_stage

    def _partials(self, n: int) -> torch.Tensor:
        """A grow-only float32 workspace (vLLM serves its split logits from one
        too): a step's build allocates nothing once it is large enough. A plan
        keeps the views it was given, so growing never pulls a buffer from
        under an older plan."""
        if self._workspace is None or self._workspace.numel() < n:
            self._workspace = torch.empty(n, dtype=torch.float32, device=self.env.device)
        return self._workspace

    def run(self, plan: MLAPlan, q: torch.Tensor, cache: torch.Tensor, sinks: torch.Tensor | None,
            out: torch.Tensor, lse: torch.Tensor | None = None) -> None:
        """``q`` [T, H, rank + rope] (the absorbed query; last dim contiguous),
        ``out`` [T, H, rank]; ``lse`` float32 [T, H] (natural log) when given."""
        if sinks is not None:
            raise Unsupported("MLA attention has no sinks")
        if not isinstance(plan.tiles, MLATiles):
            try:
                self._launch_gluon(plan, q, cache, out, lse)
                return
            except Exception as e:
                if plan.tiles_given:
                    raise
                # the rule chose Gluon and it does not compile or launch here:
                # this plan and every later build take the tl kernel
                text = str(e).strip().splitlines()
                self._gluon_failed = f"its launch failed ({type(e).__name__}: {text[0][:160] if text else ''})"
                self.why_not_gluon = self._gluon_failed
                plan.tiles = choose_tiles(self.p.num_heads, self.kv_elem())
        tiles = self._fallback.get(plan.tiles, plan.tiles)
        try:
            self._launch(plan, tiles, q, cache, out, lse)
            return
        except Exception as e:
            if not _out_of_resources(e):
                raise
        # A launch that does not fit this GPU's shared memory or registers
        # fails at compile time, before any work: run the same split plan
        # with shallower pipelines, then smaller key tiles.
        for smaller in _smaller(tiles):
            try:
                self._launch(plan, smaller, q, cache, out, lse)
            except Exception as e:
                if _out_of_resources(e):
                    continue
                raise
            self._fallback[plan.tiles] = smaller
            return
        raise RuntimeError(f"no MLA decode launch fits this GPU (down from {tiles})")

    def _launch(self, plan: MLAPlan, tiles: MLATiles, q: torch.Tensor, cache: torch.Tensor, out: torch.Tensor,
                lse: torch.Tensor | None) -> None:
        from attn_select.backends.run import mla_kernel as mk

        p = self.p
        rank, rope = p.kv_lora_rank, p.qk_rope_head_dim
        lat = cache.reshape(cache.shape[0], cache.shape[1], -1) if cache.dim() == 4 else cache
        if lat.shape[-1] != p.latent_dim or lat.stride(-1) != 1:
            raise ValueError(f"latent cache must be [pages, page_size, {p.latent_dim}] with a contiguous last dim")
        if q.stride(-1) != 1 or out.stride(-1) != 1:
            raise ValueError("q and out need a contiguous last dim")
        q_nope, q_pe = q[..., :rank], q[..., rank:]
        direct = plan.num_splits == 1
        dummy = out  # never read when its flag is off
        part_o = plan.part_o if plan.part_o is not None else dummy
        part_lse = plan.part_lse if plan.part_lse is not None else dummy
        lse_t = lse if lse is not None else dummy
        rank_pad = _next_pow2(rank)
        fp8 = lat.element_size() == 1
        stage_q = fp8 and uses_wgmma(tiles)
        q_stage = self._query_stage(plan.num_rows * p.num_heads * (rank_pad + max(16, _next_pow2(rope))),
                                    torch.float16 if q.is_cuda else torch.float32) if stage_q else dummy
        mk.mla_decode_kernel[(plan.head_groups, plan.num_splits, plan.num_rows)](
            q_nope, q_pe, lat, out, lse_t, part_o, part_lse,
            plan.block_table, plan.seq_lens, self.kv_scale, q_stage,
            p.num_heads, plan.num_splits, p.scale,
            q_nope.stride(0), q_nope.stride(1), q_pe.stride(0), q_pe.stride(1),
            lat.stride(0), lat.stride(1),
            plan.block_table.stride(0),
            out.stride(0), out.stride(1),
            lse.stride(0) if lse is not None else 0,
            RANK=rank, RANK_PAD=rank_pad, ROPE=rope, ROPE_PAD=max(16, _next_pow2(rope)),
            PAGE=plan.batch.page_size, BLOCK_H=tiles.block_h, BLOCK_N=tiles.block_n, NUM_STAGES=tiles.num_stages,
            DIRECT=direct, HAS_LSE=lse is not None, FP8_KV=fp8,
            SPLIT_V=tiles.split_v, STAGE_Q=stage_q, TRANSPOSED=tiles.transposed,
            DOT_F32=not q.is_cuda,
            num_warps=tiles.num_warps, num_stages=tiles.num_stages,
        )
        if not direct:
            self._merge(plan, out, lse)

    def _merge(self, plan: MLAPlan, out: torch.Tensor, lse: torch.Tensor | None) -> None:
        from attn_select.backends.run import mla_kernel as mk

        p = self.p
        dummy = out
        lse_t = lse if lse is not None else dummy
        # GPU: 4 heads per program (hundreds of programs, each one round
        # trip per chunk of splits); interpreter: 16 (its cost is per program)
        merge_h = 4 if out.is_cuda else 16
        split_block = min(16 if out.is_cuda else 64, _next_pow2(plan.num_splits))
        mk.mla_merge_kernel[(-(-p.num_heads // merge_h), plan.num_rows)](
            out, lse_t, plan.part_o, plan.part_lse,
            p.num_heads, plan.num_splits,
            out.stride(0), out.stride(1), lse.stride(0) if lse is not None else 0,
            RANK=p.kv_lora_rank, RANK_PAD=_next_pow2(p.kv_lora_rank), MERGE_H=merge_h, SPLIT_BLOCK=split_block,
            HAS_LSE=lse is not None,
            num_warps=4,
        )

    def _launch_gluon(self, plan: MLAPlan, q: torch.Tensor, cache: torch.Tensor, out: torch.Tensor,
                      lse: torch.Tensor | None) -> None:
        from attn_select.backends.run import mla_gluon

        p = self.p
        lat = cache.reshape(cache.shape[0], cache.shape[1], -1) if cache.dim() == 4 else cache
        if lat.shape[-1] != p.latent_dim or not lat.is_contiguous():
            raise ValueError(f"latent cache must be a contiguous [pages, page_size, {p.latent_dim}]")
        if q.stride(-1) != 1 or out.stride(-1) != 1:
            raise ValueError("q and out need a contiguous last dim")
        if q.stride(0) != q.shape[1] * q.stride(1) or q.stride(1) % 8:
            q = q.contiguous()  # the query's TMA view is rows of T * H heads
        mla_gluon.launch(q, lat, out, lse, plan.part_o, plan.part_lse, plan.block_table, plan.seq_lens,
                         p.num_heads, plan.num_splits, p.scale, plan.batch.page_size, p.kv_lora_rank, plan.tiles)
        if plan.num_splits > 1:
            self._merge(plan, out, lse)

    def kernel_name(self, plan: MLAPlan) -> str:
        splits = f"split-KV {plan.num_splits} + merge" if plan.num_splits > 1 else "one split"
        if not isinstance(plan.tiles, MLATiles):
            t = plan.tiles
            if t.schedule in ("ws", "wsc"):
                late = ", late halves in 4 copies" if t.schedule == "wsc" else ""
                return (f"attn-select Gluon MLA decode kernel (sm_90, warp-specialised: {t.block_h} heads, a "
                        f"{t.block_n}-key block per warpgroup, 2 TMA buffers in halves{late}, {splits}, 16-bit "
                        f"cache, page {plan.batch.page_size})")
            return (f"attn-select Gluon MLA decode kernel (sm_90: {t.block_h} heads x {t.block_n} keys per tile, "
                    f"{t.stages} TMA buffers, 2 warpgroups, {splits}, 16-bit cache, page {plan.batch.page_size})")
        why = f"; Gluon not used: {self.why_not_gluon}" if self.why_not_gluon else ""
        t = self._fallback.get(plan.tiles, plan.tiles)
        splits = f"split-KV {plan.num_splits} + merge" if plan.num_splits > 1 else "one split"
        cache = "fp8 cache" if self.kv_elem() == 1 else "16-bit cache"
        how = ", value loaded apart" if t.split_v else ""
        return (f"attn-select MLA decode kernel ({t.block_h} heads x {t.block_n} keys per tile, "
                f"{t.num_stages} stages, {t.num_warps} warps{how}, {splits}, {cache}, page {plan.batch.page_size}"
                f"{why})")

    def close(self) -> None:
        self._workspace = None
        self._q_stage = None


def _out_of_resources(e: BaseException) -> bool:
    try:
        from triton.runtime.errors import OutOfResources
    except Exception:  # pragma: no cover - older Triton
        OutOfResources = ()  # noqa: N806
    return isinstance(e, OutOfResources) or "out of resource" in str(e).lower()


def _smaller(t: MLATiles):
    """Launches that need less shared memory than ``t``, most similar first:
    shallower pipelines (two stages less is one key buffer less), then
    smaller key tiles."""
    depths = list(range(t.num_stages, 0, -2))
    for s in depths[1:]:
        yield replace(t, num_stages=s)
    n = t.block_n // 2
    while n >= 16:
        for s in depths:
            yield replace(t, block_n=n, num_stages=s)
        n //= 2
