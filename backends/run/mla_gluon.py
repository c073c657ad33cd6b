"""TRITON_MLA's decode kernel for Hopper, in Triton's Gluon dialect (Triton 3.6's API).

Why Gluon: at 64 and 128 query heads MLA decode is compute-bound, and the
``tl`` kernel (``mla_kernel.py``) cannot get both of a program's warpgroups
to share the work: Triton 3.6 puts a score dot whose result feeds another
dot on all 8 warps along M, so with 64 rows both warpgroups compute every
score, and a 128-row group's 128 x 512 float32 accumulator does not fit the
registers (BENCHMARKS.md, "TRITON_MLA decode on the H200"). Gluon lets the
kernel choose the layouts, the shared memory, the asynchronous copies and
the tensor-core instructions itself.

The schedule (the idea of FlashMLA's dense sm90 decode; our own code):

- **One program = 64 query heads of one request x one KV split**, 8 warps =
  two warpgroups. The query tile [64, 512 + 64] is copied once into shared
  memory by TMA; key tiles of ``BLOCK_N`` keys x 576 go into a ring of
  ``STAGES`` shared buffers (``ready`` mbarriers, one per buffer). The value
  is the tile's first 512 dims: K and V are the same shared memory.
- **Every tensor-core FLOP is done once.** Both dots use warpgroup layouts
  ``[4, 2]`` (4 warps along M = 64 rows, the two warpgroups along N): the
  score dot S = Q K^T [64, BLOCK_N] gives warpgroup 0 the first BLOCK_N / 2
  keys and warpgroup 1 the others; the output dot O += P V [64, 512] gives
  each warpgroup 256 of the 512 output dims over all the tile's keys (a
  64 x 256 float32 accumulator: 128 registers a thread). FlashMLA's two
  warpgroups take alternate key blocks and exchange row maxima; here they
  take the two halves of one block, the same split of work. The row maximum
  is reduced across the warpgroups through shared memory (``gl.max`` over
  the [4, 2] layout); row sums stay per warpgroup as a [64, BLOCK_N]
  running sum, reduced once at the end. P (bf16) goes to one shared tile,
  which both warpgroups read as the output dot's A operand.
- **Two step orders** (``OVERLAP``). Overlapped: the next tile's score dot
  is issued before this tile's output dot, both asynchronous (wgmma); the
  next tile's softmax runs while the output dot is on the tensor cores
  (wait for all but one group), then the accumulator is rescaled; but a
  buffer is then held for two steps, so with two buffers the next copy
  starts only when the step that needs it does. One tile at a time: score
  dot, softmax, output dot, and the other buffers' copies run during the
  whole step. A buffer is refilled (TMA) as soon as both warpgroups have
  finished the output dot that read it (a CTA barrier, which also guards
  the single P tile). On the H200 one tile at a time won (2026-12-02, 32 x
  4096, 128 heads, page 64: 100.0 us against 110.0 overlapped; BENCHMARKS.md).
- **Why 64-key tiles at most.** The query (72 KiB), two 64-key tiles (144
  KiB) and P (8 KiB) are 224 KiB of the 227 a block may have; 128-key tiles
  (each warpgroup's score instructions 64 wide, as FlashMLA's) would leave
  no buffer to load into while computing. With 64-key tiles each
  warpgroup's score instructions are 64 x 32 x 16 and re-read the query
  from shared memory twice as often per key as 64-wide ones: the score dot
  is shared-memory bound (FlashMLA avoids it with one 64-key block per
  warpgroup and the two warpgroups half a step apart, which needs
  warp-specialised control flow: ``mla_gluon_ws.py``, the adapter's default
  since it was measured faster at 128 heads; this kernel stays a variant).
- **Paged cache.** The cache [num_pages, PAGE, 576] is viewed as rows
  [num_pages * PAGE, 576]; a tile is ``BLOCK_N / PAGE`` row copies of
  ``PAGE`` keys (page 16 under 64-key tiles: 4) or one copy of ``BLOCK_N``
  keys within a page. Pages are looked up in the block table when the copy
  is issued; a page past the request's last key is clamped to the last one.
- **Ragged ends.** Keys past the split's end are masked to -inf in the
  score; the value rows of such keys are zeroed in shared memory (a stale
  slot may hold NaN, and 0 * NaN would reach the output). An empty split
  runs one all-masked tile and writes lse = -inf (the merge weighs it 0).
- **Split-KV** as the ``tl`` kernel: normalised partial outputs and log2
  log-sum-exps, combined by ``mla_kernel.mla_merge_kernel``; with one split
  the output is written directly.

Only bf16 / fp16 caches, 64 heads a group (the head count a multiple of 64),
rank 512 and rope 64 (powers of two). ``triton_mla.py`` decides when to use
it (``gluon_unavailable``) and falls back to the ``tl`` kernel otherwise.
Nothing here runs under TRITON_INTERPRET (Gluon has no interpreter); the CPU
tests compile it for sm_90 and emulate the schedule in torch.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared, mbarrier, tma, warpgroup_mma, warpgroup_mma_wait,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

LOG2E = gl.constexpr(1.4426950408889634)
BLOCK_H = 64  # query heads a program: one warpgroup's M
NUM_WARPS = 8  # two warpgroups


@dataclass(frozen=True)
class GluonTiles:
    """One launch shape of the Gluon kernel. ``block_h`` / ``ctas_per_sm`` /
    ``min_split_tokens`` have the meaning they have in ``triton_mla.MLATiles``,
    so ``choose_splits`` takes either."""

    block_n: int  # keys a tile (both warpgroups together)
    stages: int  # shared key buffers (TMA ring)
    # True: tile j+1's score dot is issued before tile j's output dot and its softmax runs
    # while that dot does, but a buffer is held for two steps (with 2 buffers the next copy
    # starts only when the step that needs it does). False: one tile at a time, and the
    # other buffers' copies run during the whole step.
    overlap: bool = True
    # "shared": this module's kernel (both warpgroups share each tile's dots);
    # "ws": mla_gluon_ws's warp-specialised pairs (64-key blocks, two buffers; overlap unused);
    # "wsc": the same with each buffer's late half copied in 4 chunks, a barrier each
    schedule: str = "shared"
    block_h: int = BLOCK_H
    num_warps: int = NUM_WARPS
    ctas_per_sm: int = 1
    min_split_tokens: int = 256


def gluon_smem_bytes(t: GluonTiles, rank: int = 512, rope: int = 64, elem: int = 2) -> int:
    """Shared memory of one program (the allocations; barriers and the
    cross-warpgroup reduction's scratch add under 1 KiB): the query tile,
    ``stages`` key tiles, one P tile."""
    lat = rank + rope
    if t.schedule in WS_SCHEDULES:
        from attn_select.backends.run.mla_gluon_ws import ws_smem_bytes

        return ws_smem_bytes(rank, rope, elem)
    return (t.block_h * lat + t.stages * t.block_n * lat + t.block_h * t.block_n) * elem


# The warp-specialised form (mla_gluon_ws): FlashMLA's schedule, each warpgroup
# its own 64-key block. "wsc": each buffer's late half (the one the other
# warpgroup refills) in 4 copies with a barrier each.
WS_SCHEDULES = {"ws": 1, "wsc": 4}  # schedule -> copies a late half comes in
WS_TILES = GluonTiles(64, 2, overlap=False, schedule="ws")
WSC_TILES = GluonTiles(64, 2, overlap=False, schedule="wsc")
SHARED_TILES = GluonTiles(64, 2, overlap=False)

# The launch shapes the GPU driver times (benchmarks/run_gluon_mla.py); the
# first is the adapter's default. Measured twice on an H100 (2026-12-06, 32 x
# 4096, BENCHMARKS.md "Fourth pass"): at 128 heads ws64 is 0.96-0.98x the
# faster of FlashMLA and FA3-MLA at page 64 and 0.93-0.95x at page 16, where
# the shared schedule (this module's kernel, the default before) is 0.87-0.89x
# and 0.83-0.85x; at 64 heads the two are within 1.6 %. 64-key tiles fit two
# buffers (224 KiB with the query and P); 32-key tiles three or four.
GLUON_VARIANTS: tuple[GluonTiles, ...] = (
    WS_TILES,
    SHARED_TILES,
    WSC_TILES,
    GluonTiles(32, 4),
    GluonTiles(64, 2),
    GluonTiles(32, 3),
    GluonTiles(32, 4, overlap=False),
    GluonTiles(32, 3, overlap=False),
)
DEFAULT_GLUON_TILES = GLUON_VARIANTS[0]
# ATTN_SELECT_MLA_KERNEL names a schedule to run instead of the default (the GPU
# driver confirms a variant through `attn-select run` this way before the rule takes it)
FORCED_SCHEDULES = {"ws": WS_TILES, "wsc": WSC_TILES, "shared": SHARED_TILES}


def gluon_tiles_for_run() -> GluonTiles:
    """The Gluon launch shape `run` takes: the default, or the schedule
    ``ATTN_SELECT_MLA_KERNEL`` names (``ws`` / ``wsc`` / ``shared``)."""
    return FORCED_SCHEDULES.get(os.environ.get("ATTN_SELECT_MLA_KERNEL", ""), DEFAULT_GLUON_TILES)


@gluon.jit
def _issue_tile(kn_desc, kp_desc, kn_buf, kp_buf, bar, bt_row, tile, last_key, pred,
                PAGE: gl.constexpr, BLOCK_N: gl.constexpr):
    """TMA copies of key tile ``tile`` (its RANK and ROPE dims) into one ring
    buffer, completing on ``bar``: one copy per page the tile spans, or one
    copy of the tile's slots inside its page."""
    ROWS: gl.constexpr = kn_desc.block_type.shape[0]
    COPIES: gl.constexpr = BLOCK_N // ROWS
    mbarrier.expect(bar, COPIES * (kn_desc.block_type.nbytes + kp_desc.block_type.nbytes), pred=pred)
    t0 = tile * BLOCK_N
    for i in gl.static_range(COPIES):
        key = t0 + i * ROWS
        page = gl.load(bt_row + gl.minimum(key, last_key) // PAGE)
        row = page * PAGE + key % PAGE
        tma.async_copy_global_to_shared(kn_desc, [row, 0], bar, kn_buf.slice(i * ROWS, ROWS), pred=pred)
        tma.async_copy_global_to_shared(kp_desc, [row, 0], bar, kp_buf.slice(i * ROWS, ROWS), pred=pred)


@gluon.jit
def _zero_tail(kn_buf, t0, end, BLOCK_N: gl.constexpr, RANK: gl.constexpr):
    """Zero the value rows of keys at or past ``end`` in a landed tile (only
    the split's last tile has any), in 64-dim chunks to keep registers low.
    The branch is uniform over the CTA, so the barrier in it is safe."""
    if t0 + BLOCK_N > end:
        ZL: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [8, 1], [1, 0])
        rows = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, ZL))
        keep = (t0 + rows < end)[:, None]
        for c in gl.static_range(RANK // 64):
            chunk = kn_buf.slice(c * 64, 64, dim=1)
            v = chunk.load(ZL)
            chunk.store(gl.where(keep, v, gl.zeros_like(v)))
        fence_async_shared()  # generic-proxy stores before the wgmma (async-proxy) reads
        gl.thread_barrier()


@gluon.jit
def _scores(q_nope_s, q_pe_s, kn_buf, kp_buf, S_LAYOUT: gl.constexpr, BLOCK_H: gl.constexpr,
            BLOCK_N: gl.constexpr):
    """Issue S = Q_nope K_nope^T + Q_pe K_pe^T (asynchronous; wgmma, both from shared memory)."""
    zero = gl.zeros([BLOCK_H, BLOCK_N], gl.float32, S_LAYOUT)
    s = warpgroup_mma(q_nope_s, kn_buf.permute((1, 0)), zero, use_acc=False, is_async=True)
    return warpgroup_mma(q_pe_s, kp_buf.permute((1, 0)), s, is_async=True)


@gluon.jit
def _softmax(s, t0, end, m_i, l_acc, qk_scale, cols):
    """Online-softmax step in the log2 domain. ``m_use`` keeps an all-masked
    row (an empty split) at p = 0, alpha = 0 instead of NaN."""
    valid = (t0 + cols) < end
    s = gl.where(valid[None, :], s * qk_scale, float("-inf"))
    m_new = gl.maximum(m_i, gl.max(s, 1))  # across both warpgroups (shared-memory reduction)
    m_use = gl.where(m_new == float("-inf"), 0.0, m_new)
    alpha = gl.exp2(m_i - m_use)
    p = gl.exp2(s - m_use[:, None])
    l_acc = l_acc * alpha[:, None] + p  # per-warpgroup partial row sums, reduced once at the end
    return m_new, alpha, p, l_acc


@gluon.jit
def mla_gluon_decode_kernel(
    q_nope_desc, q_pe_desc, kn_desc, kp_desc,
    out_ptr, lse_ptr, part_o_ptr, part_lse_ptr,
    block_table_ptr, seq_lens_ptr,
    num_heads, num_splits, qk_scale,  # qk_scale: sm_scale * log2(e)
    stride_bt, stride_ot, stride_oh, stride_lt,
    RANK: gl.constexpr, ROPE: gl.constexpr, PAGE: gl.constexpr,
    BLOCK_H: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr,
    DIRECT: gl.constexpr, HAS_LSE: gl.constexpr,
    OVERLAP: gl.constexpr,  # the next tile's score dot overlaps this tile's output dot
):
    """Grid (head groups, splits, requests). Partials: part_o [B, H, splits,
    RANK] float32, part_lse [B, H, splits] (log2 domain), as ``mla_kernel``'s."""
    S_LAYOUT: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 2],
                                                       instr_shape=[16, BLOCK_N // 2, 16])
    O_LAYOUT: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 2],
                                                       instr_shape=[16, RANK // 2, 16])
    P_SHARED: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BLOCK_H, BLOCK_N], gl.bfloat16)
    dt: gl.constexpr = kn_desc.dtype

    hg = gl.program_id(0)
    split = gl.program_id(1)
    req = gl.program_id(2)

    seq_len = gl.load(seq_lens_ptr + req)
    n_all = gl.cdiv(seq_len, BLOCK_N)
    per_split = gl.cdiv(n_all, num_splits)
    t_begin = split * per_split
    t_stop = gl.minimum(t_begin + per_split, n_all)
    end = gl.minimum(t_stop * BLOCK_N, seq_len)
    n = gl.maximum(t_stop - t_begin, 1)  # an empty split runs one all-masked tile
    bt_row = block_table_ptr + req * stride_bt
    last_key = gl.maximum(seq_len - 1, 0)

    q_nope_s = gl.allocate_shared_memory(dt, [BLOCK_H, RANK], q_nope_desc.layout)
    q_pe_s = gl.allocate_shared_memory(dt, [BLOCK_H, ROPE], q_pe_desc.layout)
    kn_s = gl.allocate_shared_memory(dt, [STAGES, BLOCK_N, RANK], kn_desc.layout)
    kp_s = gl.allocate_shared_memory(dt, [STAGES, BLOCK_N, ROPE], kp_desc.layout)
    p_s = gl.allocate_shared_memory(dt, [BLOCK_H, BLOCK_N], P_SHARED)
    q_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    mbarrier.init(q_bar, count=1)
    for i in gl.static_range(STAGES):
        mbarrier.init(ready.index(i), count=1)
    fence_async_shared()

    qrow = req * num_heads + hg * BLOCK_H
    mbarrier.expect(q_bar, q_nope_desc.block_type.nbytes + q_pe_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(q_nope_desc, [qrow, 0], q_bar, q_nope_s)
    tma.async_copy_global_to_shared(q_pe_desc, [qrow, 0], q_bar, q_pe_s)
    for i in gl.static_range(STAGES):
        _issue_tile(kn_desc, kp_desc, kn_s.index(i), kp_s.index(i), ready.index(i), bt_row, t_begin + i, last_key,
                    i < n, PAGE, BLOCK_N)

    cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, S_LAYOUT))
    m_i = gl.full([BLOCK_H], float("-inf"), gl.float32, gl.SliceLayout(1, S_LAYOUT))
    l_acc = gl.zeros([BLOCK_H, BLOCK_N], gl.float32, S_LAYOUT)
    acc = gl.zeros([BLOCK_H, RANK], gl.float32, O_LAYOUT)

    mbarrier.wait(q_bar, 0)
    if OVERLAP:
        # the first tile: its scores and P, no output dot yet
        mbarrier.wait(ready.index(0), 0)
        _zero_tail(kn_s.index(0), t_begin * BLOCK_N, end, BLOCK_N, RANK)
        s = _scores(q_nope_s, q_pe_s, kn_s.index(0), kp_s.index(0), S_LAYOUT, BLOCK_H, BLOCK_N)
        s = warpgroup_mma_wait(0, deps=[s])
        m_i, alpha, p, l_acc = _softmax(s, t_begin * BLOCK_N, end, m_i, l_acc, qk_scale, cols)
        p_s.store(p.to(dt))
        fence_async_shared()
        gl.thread_barrier()

        for j in range(0, n - 1):
            cur = j % STAGES
            nxt = (j + 1) % STAGES
            t_next = (t_begin + j + 1) * BLOCK_N
            mbarrier.wait(ready.index(nxt), ((j + 1) // STAGES) & 1)
            _zero_tail(kn_s.index(nxt), t_next, end, BLOCK_N, RANK)
            s = _scores(q_nope_s, q_pe_s, kn_s.index(nxt), kp_s.index(nxt), S_LAYOUT, BLOCK_H, BLOCK_N)
            acc = warpgroup_mma(p_s, kn_s.index(cur), acc, is_async=True)  # O += P_j V_j, this warpgroup's 256 dims
            s = warpgroup_mma_wait(1, deps=[s])  # the score dot done; the output dot may still run
            m_i, alpha, p, l_acc = _softmax(s, t_next, end, m_i, l_acc, qk_scale, cols)
            acc = warpgroup_mma_wait(0, deps=[acc])
            gl.thread_barrier()  # both warpgroups' output dots are done: P's tile and buffer ``cur`` are free
            _issue_tile(kn_desc, kp_desc, kn_s.index(cur), kp_s.index(cur), ready.index(cur), bt_row,
                        t_begin + j + STAGES, last_key, j + STAGES < n, PAGE, BLOCK_N)
            acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, O_LAYOUT))[:, None]
            p_s.store(p.to(dt))
            fence_async_shared()
            gl.thread_barrier()

        acc = warpgroup_mma(p_s, kn_s.index((n - 1) % STAGES), acc, is_async=True)
        acc = warpgroup_mma_wait(0, deps=[acc])
    else:
        # one tile at a time: S_j, softmax, O += P_j V_j, then buffer j refilled with
        # tile j + STAGES; the other STAGES - 1 buffers load during the whole step
        for j in range(0, n):
            b = j % STAGES
            t0 = (t_begin + j) * BLOCK_N
            mbarrier.wait(ready.index(b), (j // STAGES) & 1)
            _zero_tail(kn_s.index(b), t0, end, BLOCK_N, RANK)
            s = _scores(q_nope_s, q_pe_s, kn_s.index(b), kp_s.index(b), S_LAYOUT, BLOCK_H, BLOCK_N)
            s = warpgroup_mma_wait(0, deps=[s])
            m_i, alpha, p, l_acc = _softmax(s, t0, end, m_i, l_acc, qk_scale, cols)
            acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, O_LAYOUT))[:, None]
            p_s.store(p.to(dt))
            fence_async_shared()
            gl.thread_barrier()  # P complete (both halves); the last step's output dots are done
            acc = warpgroup_mma(p_s, kn_s.index(b), acc, is_async=True)
            acc = warpgroup_mma_wait(0, deps=[acc])
            gl.thread_barrier()  # both warpgroups are done with buffer b and P
            _issue_tile(kn_desc, kp_desc, kn_s.index(b), kp_s.index(b), ready.index(b), bt_row,
                        t_begin + j + STAGES, last_key, j + STAGES < n, PAGE, BLOCK_N)

    mbarrier.invalidate(q_bar)
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(i))

    l_i = gl.sum(l_acc, 1)
    lse2 = gl.where(l_i > 0.0, m_i + gl.log2(gl.where(l_i > 0.0, l_i, 1.0)), float("-inf"))
    l_o = gl.convert_layout(l_i, gl.SliceLayout(1, O_LAYOUT))
    o = acc / gl.where(l_o == 0.0, 1.0, l_o)[:, None]
    heads = hg * BLOCK_H + gl.arange(0, BLOCK_H, layout=gl.SliceLayout(1, O_LAYOUT))
    d = gl.arange(0, RANK, layout=gl.SliceLayout(0, O_LAYOUT))
    h_ok = (heads < num_heads)[:, None] & (d < RANK)[None, :]
    heads_s = hg * BLOCK_H + gl.arange(0, BLOCK_H, layout=gl.SliceLayout(1, S_LAYOUT))
    if DIRECT:
        gl.store(out_ptr + req * stride_ot + heads[:, None] * stride_oh + d[None, :],
                 o.to(out_ptr.dtype.element_ty), mask=h_ok)
        if HAS_LSE:
            gl.store(lse_ptr + req * stride_lt + heads_s, lse2 / LOG2E, mask=heads_s < num_heads)
    else:
        prow = (req.to(gl.int64) * num_heads + heads) * num_splits + split
        gl.store(part_o_ptr + prow[:, None] * RANK + d[None, :], o, mask=h_ok)
        prow_s = (req.to(gl.int64) * num_heads + heads_s) * num_splits + split
        gl.store(part_lse_ptr + prow_s, lse2, mask=heads_s < num_heads)


def _gl_dtype(torch_dtype):
    import torch

    return {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[torch_dtype]


def descriptors(q, lat, tiles: GluonTiles, page: int, rank: int):
    """TMA descriptors: the query as rows [T * H, 576] (its RANK and ROPE dims
    apart), the cache as rows [num_pages * page, 576]; blocks of 64 heads and
    of ``min(page, block_n)`` keys."""
    t, h, lat_dim = q.shape
    q2 = q.view(t * h, lat_dim)
    c2 = lat.view(lat.shape[0] * lat.shape[1], lat_dim)
    rows = min(page, tiles.block_n)
    g = _gl_dtype(lat.dtype)
    rope = lat_dim - rank

    def desc(x, block):
        return TensorDescriptor(x, list(x.shape), list(x.stride()), block,
                                gl.NVMMASharedLayout.get_default_for(block, g))

    return (desc(q2[:, :rank], [tiles.block_h, rank]), desc(q2[:, rank:], [tiles.block_h, rope]),
            desc(c2[:, :rank], [rows, rank]), desc(c2[:, rank:], [rows, rope]))


def launch(q, lat, out, lse, part_o, part_lse, block_table, seq_lens, num_heads: int, num_splits: int,
           sm_scale: float, page: int, rank: int, tiles: GluonTiles) -> None:
    """The split pass (the caller runs the merge when ``num_splits`` > 1).
    ``q`` [T, H, 576] with rows of heads contiguous (T * H rows of 576),
    ``lat`` [num_pages, page, 576] contiguous."""
    if tiles.schedule in WS_SCHEDULES:
        from attn_select.backends.run import mla_gluon_ws

        if (tiles.block_n, tiles.stages, tiles.block_h) != (mla_gluon_ws.BLOCK_N, 2, mla_gluon_ws.BLOCK_H):
            raise ValueError(f"the warp-specialised Gluon kernel takes 64-key blocks in 2 buffers, not {tiles}")
        mla_gluon_ws.launch(q, lat, out, lse, part_o, part_lse, block_table, seq_lens, num_heads, num_splits,
                            sm_scale, page, rank, WS_SCHEDULES[tiles.schedule])
        return
    t = q.shape[0]
    qn, qp, kn, kp = descriptors(q, lat, tiles, page, rank)
    direct = num_splits == 1
    dummy = out
    mla_gluon_decode_kernel[(-(-num_heads // tiles.block_h), num_splits, t)](
        qn, qp, kn, kp,
        out, lse if lse is not None else dummy, part_o if part_o is not None else dummy,
        part_lse if part_lse is not None else dummy,
        block_table, seq_lens,
        num_heads, num_splits, sm_scale * 1.4426950408889634,
        block_table.stride(0), out.stride(0), out.stride(1), lse.stride(0) if lse is not None else 0,
        RANK=rank, ROPE=lat.shape[-1] - rank, PAGE=page, BLOCK_H=tiles.block_h, BLOCK_N=tiles.block_n,
        STAGES=tiles.stages, DIRECT=direct, HAS_LSE=lse is not None, OVERLAP=tiles.overlap,
        num_warps=tiles.num_warps,
    )


__all__ = ["GluonTiles", "GLUON_VARIANTS", "DEFAULT_GLUON_TILES", "gluon_tiles_for_run", "WS_SCHEDULES", "WS_TILES",
           "WSC_TILES", "SHARED_TILES", "gluon_smem_bytes", "launch",
           "mla_gluon_decode_kernel", "triton"]
