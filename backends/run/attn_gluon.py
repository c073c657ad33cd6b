"""TRITON_ATTN's paged prefill kernel for Hopper, in Triton's Gluon dialect (Triton 3.6's API).

Why Gluon: the ``tl`` kernel (``triton_kernel.py``) lets Triton's pipeliner
choose the copies and the order of the two dots, and on the H200 it stays at
about 0.65-0.72x of vLLM's FA3 on prefill (BENCHMARKS.md, "Triton sweep").
Gluon lets the kernel choose the shared buffers, the asynchronous copies,
the tensor-core instructions and their order itself, as FA3 does (the idea
of FA3's sm90 forward pass; our own code).

The schedule:

- **One program = one work item x one KV head**, the work item and the row
  packing being the ``tl`` kernel's (``triton_attn.plan_work``: the host
  build is unchanged): ``BLOCK_M`` rows = ``BLOCK_Q`` consecutive new tokens
  of one request x the ``G_PAD`` query heads sharing the KV head (row r:
  token r // G_PAD, head r % G_PAD). Packed this way each K/V tile is read
  once for the G heads (one head a program would read it G times, from L2),
  and a block's keys end at its last token, so the causal diagonal of a
  32-token block is at most one or two 128-key tiles.
- **Two consumer warpgroups** (8 warps; 4 warps for 64-row tiles): both dots
  use the wgmma layout with the warps along M, so warpgroup w owns rows
  [64 w, 64 w + 64) and the softmax of a row stays in its warpgroup (no
  cross-warpgroup reduction). S = Q K^T reads the query and the key tile
  from shared memory; P stays in registers (bf16, the wgmma A-operand
  layout, which is the score accumulator's own) for O += P V, whose B
  operand is the value tile in shared memory.
- **Keys by TMA.** The cache [pages, 2, PAGE, Hkv, D] is viewed as rows
  [pages * 2 * PAGE, Hkv * D]: a key of page p, slot s is row
  ``p * 2 PAGE + s`` (its value ``+ PAGE``), the KV head a column block. A
  tile of BLOCK_N keys is ``BLOCK_N / min(PAGE, BLOCK_N)`` boxes of
  ``min(PAGE, BLOCK_N)`` rows x D (page 16 under 128-key tiles: 8 boxes of
  4 KiB for K and 8 for V); each box's page is read from the block table
  when it is issued, a key past the request's last clamped to the last one.
  Why TMA and not cp.async gathers at page 16: a 128-key tile is 32 TMA
  instructions from one thread (each 4 KiB box goes as two 64-dim halves
  under the 128-byte swizzle: UTMALDG in the sm_90 SASS), where cp.async
  would be 4096 16-byte copies a tile (128 per lane of a producer warp) and
  the consumers' registers or issue slots for their addresses.
  K and V of a tile complete on their own mbarriers, so the score dot starts
  before the value tile has landed. A ring of ``STAGES`` K/V buffers.
- **Who issues the copies.** ``warp_spec`` False: the consumers refill a
  buffer themselves once both warpgroups are done with it (a CTA barrier,
  then the elected thread issues the boxes). True: ``gl.warp_specialize``
  with one producer warp (24 registers) that waits on the buffer's ``empty``
  mbarrier and issues the boxes; the consumers arrive on it after their
  P V dot. Which is faster is the H200's call.
- **Two step orders** (``overlap``). True, FA3's intra-warpgroup overlap: the
  next tile's score dot is issued before this tile's P V dot, both
  asynchronous; the next softmax runs while P V is on the tensor cores, then
  the accumulator is rescaled. False: one tile at a time.
- **Masks only where needed.** Tiles whose keys every row of the block sees
  (keys at or before the block's first query position: the cached context
  and the earlier new tokens) run without the causal / in-sequence mask;
  only the tiles past that (the diagonal, the split's ragged end) pay for it.
  Keys are tiles from 0 (the context first, then the new tokens, as the
  ``tl`` kernel's visible range; ``_visible_range``).
- **Stale slots.** Slots past the request's last key in its last page may
  hold anything (NaN): their scores are masked to -inf, and their value
  rows are zeroed in shared memory before the P V dot (0 * NaN would reach
  the output); only a request's last tile has any.
- **Splits** as the ``tl`` kernel's: a split block writes the unnormalised
  partial (acc, running max in log2, running sum) where the ``tl`` merge
  kernel reads it; one split writes the output directly.

Only 16-bit caches, head size = value head size in {64, 128}, no soft cap,
sliding window or sinks: ``triton_attn.gluon_prefill_unavailable`` is the
rule, and the ``tl`` kernel runs otherwise. Nothing here runs under
TRITON_INTERPRET (Gluon has no interpreter); the CPU tests compile it for
sm_90 (test_attn_gluon_sm90_codegen.py) and emulate the schedule in torch
(tests/backends/run/attn_gluon_emulation.py).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import triton
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared, mbarrier, tma, warpgroup_mma, warpgroup_mma_wait,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

LOG2E = gl.constexpr(1.4426950408889634)
# Ping-pong registers: 12 warps share the 64 K registers (at most 168 a thread at launch); the
# producer partition drops to 24 by setmaxnreg, each consumer half rises to 240 (24 + 2 x 240 warps' worth
# = 504 x 128 threads <= 65,536)
PINGPONG_REGS = gl.constexpr(240)
PINGPONG_MAXNREG = 168


@dataclass(frozen=True)
class PrefillTiles:
    """One launch shape of the Gluon prefill kernel."""

    block_m: int  # query rows a program (tokens x G_PAD heads): 128 (two warpgroups) or 64 (one)
    block_n: int  # keys a tile
    stages: int  # K/V buffers in the TMA ring
    overlap: bool = True  # the next score dot issued before this P V dot (see the module docstring)
    warp_spec: bool = False  # a producer warp issues the copies (gl.warp_specialize)
    # the two consumer warpgroups as partitions of their own taking turns at the tensor cores
    # (FA3's ping-pong; needs warp_spec, overlap and 128 rows); the producer is then 4 warps
    pingpong: bool = False

    def __post_init__(self):
        if self.pingpong and not (self.warp_spec and self.overlap and self.block_m == 128):
            raise ValueError("ping-pong consumers need the producer warp, overlapped dots and 128-row tiles")

    @property
    def num_warps(self) -> int:
        if self.pingpong:
            return 4  # the default partition (the producer); each consumer partition adds 4
        return self.block_m // 16  # 16 rows a warp: the wgmma M of 64 a warpgroup

    @property
    def label(self) -> str:
        return (f"g{self.block_m}x{self.block_n}x{self.stages}{'o' if self.overlap else 's'}"
                f"{'w' if self.warp_spec else ''}{'p' if self.pingpong else ''}")


def prefill_smem_bytes(t: PrefillTiles, head: int = 128, elem: int = 2) -> int:
    """Shared memory of one program's allocations (the query tile and
    ``stages`` K and V tiles; the mbarriers add 24 B a stage and 8 B)."""
    return (t.block_m * head + 2 * t.stages * t.block_n * head) * elem


# The launch shapes the GPU driver checks and times (benchmarks/run_gluon_prefill.py); the first is
# the adapter's default. FA3's shape (128 x 128 tiles, a producer, the consumers at 240 registers by
# setmaxnreg) with 3 buffers (224 KiB: one program an SM). On an H100 (2026-12-06, BENCHMARKS.md "A
# Gluon prefill kernel"), two runs: with one producer warp and both warpgroups in one partition,
# 0.77-0.85 of FA3's speed, against 0.60-0.72 with 2 buffers and 0.63-0.81 for the tl kernel; a third
# run: the ping-pong halves 0.78 / 0.87 (page 16: 4 x 512 on 1024 / 1 x 8192) and 0.91 / 1.01 (page
# 64), 2-19 % faster than the one-partition shape on all four; two more runs on another H100: 0.81 /
# 0.88 and 0.83 / 0.88 at page 16. Tried there and slower: the work list longest first with a
# heads-first grid (0.79-0.80 at page 16), and the first tiles' copies issued before the query load
# (0.77-0.80). A ping-pong half takes half the block's tokens: a block of one token (a group of more
# than 64 heads) runs the one-partition shape (``rule_tiles``). 64-key tiles fit 3-4 buffers. Without
# the producer warp, 128 x 128 with overlapped dots needs more than 255 registers (ptxas spills 8
# bytes around the loop): one tile at a time, or 64-key tiles, instead.
PREFILL_VARIANTS: tuple[PrefillTiles, ...] = (
    PrefillTiles(128, 128, 3, warp_spec=True, pingpong=True),
    PrefillTiles(128, 128, 3, warp_spec=True),
    PrefillTiles(128, 128, 2, warp_spec=True),
    PrefillTiles(128, 64, 3),
    PrefillTiles(128, 128, 2, overlap=False),
    PrefillTiles(64, 64, 3),
)
DEFAULT_PREFILL_TILES = PREFILL_VARIANTS[0]


def rule_tiles(g_pad: int) -> PrefillTiles:
    """The default tiles for a group padded to ``g_pad`` heads: without ping-pong where a
    block's tokens (``block_m / g_pad``) do not halve."""
    t = DEFAULT_PREFILL_TILES
    if t.pingpong and (t.block_m // g_pad) % 2:
        return replace(t, pingpong=False)
    return t


@gluon.jit
def _visible_range(q_first, q_len, ctx_len, split, nsplit, BLOCK_Q: gl.constexpr, BLOCK_N: gl.constexpr):
    """The ``tl`` kernel's visible key range of a block without a window
    (triton_kernel._attend_block): [start, end) of this split, and
    ``full_end``, where the tiles every row sees in full stop."""
    last_tok = gl.minimum(q_first + BLOCK_Q, q_len) - 1
    hi = ctx_len + last_tok + 1
    span = gl.cdiv(gl.cdiv(hi, nsplit), BLOCK_N) * BLOCK_N
    start = split * span
    end = gl.minimum(start + span, hi)
    full_end = gl.maximum(start, start + (gl.minimum(end, ctx_len + q_first + 1) - start) // BLOCK_N * BLOCK_N)
    return start, end, full_end


@gluon.jit
def _tile_pages(kv_desc, bt_row, t0, last_key, PAGE: gl.constexpr, BLOCK_N: gl.constexpr):
    """The physical page of each TMA box of the tile of keys [t0, t0 + BLOCK_N)
    (a key past the request's last clamped to it), as one short vector: read
    before the producer waits for the buffer, so the block-table latency is
    off the copy's path."""
    ROWS: gl.constexpr = kv_desc.block_type.shape[0]
    COPIES: gl.constexpr = BLOCK_N // ROWS
    PL: gl.constexpr = gl.BlockedLayout([1], [32], [gl.num_warps()], [0])
    box = gl.arange(0, COPIES, layout=PL)
    return gl.load(bt_row + gl.minimum(t0 + box * ROWS, last_key) // PAGE), box


@gluon.jit
def _issue_kv(kv_desc, k_buf, v_buf, k_bar, v_bar, bt_row, t0, last_key, col, pred,
              PAGE: gl.constexpr, BLOCK_N: gl.constexpr):
    """TMA boxes of the tile of keys [t0, t0 + BLOCK_N): K into ``k_buf``
    (completing ``k_bar``), V into ``v_buf`` (``v_bar``); one block-table
    read a box, at the copy."""
    ROWS: gl.constexpr = kv_desc.block_type.shape[0]
    COPIES: gl.constexpr = BLOCK_N // ROWS
    mbarrier.expect(k_bar, COPIES * kv_desc.block_type.nbytes, pred=pred)
    mbarrier.expect(v_bar, COPIES * kv_desc.block_type.nbytes, pred=pred)
    for i in gl.static_range(COPIES):
        key = t0 + i * ROWS
        page = gl.load(bt_row + gl.minimum(key, last_key) // PAGE)
        row = page * (2 * PAGE) + key % PAGE
        tma.async_copy_global_to_shared(kv_desc, [row, col], k_bar, k_buf.slice(i * ROWS, ROWS), pred=pred)
        tma.async_copy_global_to_shared(kv_desc, [row + PAGE, col], v_bar, v_buf.slice(i * ROWS, ROWS), pred=pred)


@gluon.jit
def _issue_kv_pages(kv_desc, k_buf, v_buf, k_bar, v_bar, pages, box, t0, col,
                    PAGE: gl.constexpr, BLOCK_N: gl.constexpr):
    """``_issue_kv`` with the boxes' pages read before (``_tile_pages``)."""
    ROWS: gl.constexpr = kv_desc.block_type.shape[0]
    COPIES: gl.constexpr = BLOCK_N // ROWS
    mbarrier.expect(k_bar, COPIES * kv_desc.block_type.nbytes)
    mbarrier.expect(v_bar, COPIES * kv_desc.block_type.nbytes)
    for i in gl.static_range(COPIES):
        key = t0 + i * ROWS
        page = gl.max(gl.where(box == i, pages, 0), 0)  # box i's entry (pages are >= 0)
        row = page * (2 * PAGE) + key % PAGE
        tma.async_copy_global_to_shared(kv_desc, [row, col], k_bar, k_buf.slice(i * ROWS, ROWS))
        tma.async_copy_global_to_shared(kv_desc, [row + PAGE, col], v_bar, v_buf.slice(i * ROWS, ROWS))


@gluon.jit
def _zero_stale_values(v_buf, t0, kv_len, BLOCK_N: gl.constexpr, HEAD: gl.constexpr, NUM_WARPS: gl.constexpr):
    """Zero the value rows of keys at or past ``kv_len`` in a landed tile
    (only a request's last tile has any), 64 dims at a time. The branch is
    uniform over the consumer warps, so the barrier in it is safe."""
    if t0 + BLOCK_N > kv_len:
        ZL: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [NUM_WARPS, 1], [1, 0])
        rows = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, ZL))
        keep = (t0 + rows < kv_len)[:, None]
        for c in gl.static_range(HEAD // 64):
            chunk = v_buf.slice(c * 64, 64, dim=1)
            v = chunk.load(ZL)
            chunk.store(gl.where(keep, v, gl.zeros_like(v)))
        fence_async_shared()  # generic-proxy stores before the wgmma (async-proxy) reads
        gl.thread_barrier()


@gluon.jit
def _scores(q_s, k_buf, S_LAYOUT: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
    """Issue S = Q K^T (asynchronous wgmma, both operands in shared memory)."""
    zero = gl.zeros([BLOCK_M, BLOCK_N], gl.float32, S_LAYOUT)
    return warpgroup_mma(q_s, k_buf.permute((1, 0)), zero, use_acc=False, is_async=True)


@gluon.jit
def _softmax(s, t0, end, row_pos, m_i, l_i, qk_scale, cols, MASKED: gl.constexpr, P_DTYPE: gl.constexpr,
             P_OPERAND: gl.constexpr):
    """Online-softmax step in the log2 domain. Masked tiles: keys past the
    split's end or after the row's position get -inf, and ``m_use`` keeps a
    row that sees no key yet at p = 0, alpha = 0 instead of NaN."""
    s = s * qk_scale
    if MASKED:
        pos = t0 + cols
        visible = (pos < end)[None, :] & (pos[None, :] <= row_pos[:, None])
        s = gl.where(visible, s, float("-inf"))
        m_new = gl.maximum(m_i, gl.max(s, 1))
        m_use = gl.where(m_new == float("-inf"), 0.0, m_new)
    else:  # every key visible to every row: the maxima are finite
        m_new = gl.maximum(m_i, gl.max(s, 1))
        m_use = m_new
    alpha = gl.exp2(m_i - m_use)
    p = gl.exp2(s - m_use[:, None])
    l_i = l_i * alpha + gl.sum(p, 1)
    # P leaves in the P V dot's A-operand layout and dtype (the score accumulator's registers,
    # halved): a tile carried over a step costs 32 registers a thread, not 64
    return m_new, l_i, gl.convert_layout(p.to(P_DTYPE), P_OPERAND), alpha


@gluon.jit
def _release(kv_desc, k_s, v_s, k_ready, v_ready, empty, bt_row, j, start, n, last_key, col,
             PAGE: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr, WARP_SPEC: gl.constexpr):
    """Both warpgroups are done with tile j's buffer: hand it to the producer
    warp, or refill it with tile j + STAGES here."""
    b = j % STAGES
    gl.thread_barrier()
    if WARP_SPEC:
        mbarrier.arrive(empty.index(b))
    else:
        _issue_kv(kv_desc, k_s.index(b), v_s.index(b), k_ready.index(b), v_ready.index(b), bt_row,
                  start + (j + STAGES) * BLOCK_N, last_key, col, j + STAGES < n, PAGE, BLOCK_N)


@gluon.jit
def _consume(q_s, k_s, v_s, k_ready, v_ready, empty, kv_desc,
             out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, bt_row,
             kvh, q_first, split, nsplit, prow0, tok0, q_len, ctx_len, start, end, full_end, qk_scale,
             stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
             G: gl.constexpr, G_PAD: gl.constexpr, BLOCK_Q: gl.constexpr, HEAD: gl.constexpr,
             PAGE: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr, NUM_WARPS: gl.constexpr,
             OVERLAP: gl.constexpr, WARP_SPEC: gl.constexpr, turn=None, ME: gl.constexpr = -1):
    """The consumer warpgroups: the key loop and the epilogue. ``ME`` 0 / 1:
    this is one ping-pong half (its own 64 rows); before issuing a step's two
    dots it waits for its turn on ``turn[ME]``, and after issuing them hands
    the turn to the other half, so one half's softmax runs under the other's
    dots (half 0 goes first: its first wait is on the phase before a fresh
    barrier's first, which passes)."""
    BLOCK_M: gl.constexpr = BLOCK_Q * G_PAD
    S_LAYOUT: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[NUM_WARPS, 1],
                                                       instr_shape=[16, BLOCK_N, 16])
    O_LAYOUT: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[NUM_WARPS, 1],
                                                       instr_shape=[16, HEAD, 16])
    P_OPERAND: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=O_LAYOUT, k_width=2)
    dt: gl.constexpr = kv_desc.dtype

    kv_len = ctx_len + q_len
    last_key = gl.maximum(kv_len - 1, 0)
    col = kvh * HEAD
    n = gl.maximum(gl.cdiv(end - start, BLOCK_N), 0)
    n_full = (full_end - start) // BLOCK_N
    rows_s = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, S_LAYOUT))
    row_pos = ctx_len + q_first + rows_s // G_PAD
    cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, S_LAYOUT))
    m_i = gl.full([BLOCK_M], float("-inf"), gl.float32, gl.SliceLayout(1, S_LAYOUT))
    l_i = gl.zeros([BLOCK_M], gl.float32, gl.SliceLayout(1, S_LAYOUT))
    acc = gl.zeros([BLOCK_M, HEAD], gl.float32, O_LAYOUT)

    if OVERLAP:
        if n > 0:
            mbarrier.wait(k_ready.index(0), 0)
            s = _scores(q_s, k_s.index(0), S_LAYOUT, BLOCK_M, BLOCK_N)
            s = warpgroup_mma_wait(0, deps=[s])
            if n_full > 0:
                m_i, l_i, p, alpha = _softmax(s, start, end, row_pos, m_i, l_i, qk_scale, cols, False, dt, P_OPERAND)
            else:
                m_i, l_i, p, alpha = _softmax(s, start, end, row_pos, m_i, l_i, qk_scale, cols, True, dt, P_OPERAND)
            for j in range(0, n - 1):
                cur = j % STAGES
                nxt = (j + 1) % STAGES
                t_next = start + (j + 1) * BLOCK_N
                mbarrier.wait(k_ready.index(nxt), ((j + 1) // STAGES) & 1)
                if ME >= 0:
                    mbarrier.wait(turn.index(ME), (j & 1) ^ (1 - ME))
                s = _scores(q_s, k_s.index(nxt), S_LAYOUT, BLOCK_M, BLOCK_N)
                # no stale value rows here: only the split's last tile (n - 1) reaches past kv_len
                mbarrier.wait(v_ready.index(cur), (j // STAGES) & 1)
                acc = warpgroup_mma(p, v_s.index(cur), acc, is_async=True)  # O += P_j V_j
                if ME >= 0:
                    mbarrier.arrive(turn.index(1 - ME), count=1)
                s = warpgroup_mma_wait(1, deps=[s])  # the score dot done; P_j V_j may still run
                if j + 1 < n_full:
                    m_i, l_i, p, alpha = _softmax(s, t_next, end, row_pos, m_i, l_i, qk_scale, cols, False, dt, P_OPERAND)
                else:
                    m_i, l_i, p, alpha = _softmax(s, t_next, end, row_pos, m_i, l_i, qk_scale, cols, True, dt, P_OPERAND)
                acc = warpgroup_mma_wait(0, deps=[acc])
                _release(kv_desc, k_s, v_s, k_ready, v_ready, empty, bt_row, j, start, n, last_key, col,
                         PAGE, BLOCK_N, STAGES, WARP_SPEC)
                acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, O_LAYOUT))[:, None]
            last = (n - 1) % STAGES
            mbarrier.wait(v_ready.index(last), ((n - 1) // STAGES) & 1)
            _zero_stale_values(v_s.index(last), start + (n - 1) * BLOCK_N, kv_len, BLOCK_N, HEAD, NUM_WARPS)
            acc = warpgroup_mma(p, v_s.index(last), acc, is_async=True)
            acc = warpgroup_mma_wait(0, deps=[acc])
            _release(kv_desc, k_s, v_s, k_ready, v_ready, empty, bt_row, n - 1, start, n, last_key, col,
                     PAGE, BLOCK_N, STAGES, WARP_SPEC)
    else:
        # one tile at a time: S_j, softmax, rescale, O += P_j V_j, release the buffer
        for j in range(0, n):
            b = j % STAGES
            t0 = start + j * BLOCK_N
            mbarrier.wait(k_ready.index(b), (j // STAGES) & 1)
            s = _scores(q_s, k_s.index(b), S_LAYOUT, BLOCK_M, BLOCK_N)
            s = warpgroup_mma_wait(0, deps=[s])
            if j < n_full:
                m_i, l_i, p, alpha = _softmax(s, t0, end, row_pos, m_i, l_i, qk_scale, cols, False, dt, P_OPERAND)
            else:
                m_i, l_i, p, alpha = _softmax(s, t0, end, row_pos, m_i, l_i, qk_scale, cols, True, dt, P_OPERAND)
            acc = acc * gl.convert_layout(alpha, gl.SliceLayout(1, O_LAYOUT))[:, None]
            mbarrier.wait(v_ready.index(b), (j // STAGES) & 1)
            _zero_stale_values(v_s.index(b), t0, kv_len, BLOCK_N, HEAD, NUM_WARPS)
            acc = warpgroup_mma(p, v_s.index(b), acc, is_async=True)
            acc = warpgroup_mma_wait(0, deps=[acc])
            _release(kv_desc, k_s, v_s, k_ready, v_ready, empty, bt_row, j, start, n, last_key, col,
                     PAGE, BLOCK_N, STAGES, WARP_SPEC)

    # epilogue: the tl kernel's output / partial layout
    rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, O_LAYOUT))
    row_tok = q_first + rows // G_PAD
    row_g = rows % G_PAD
    row_valid = (row_g < G) & (row_tok < q_len)
    row_head = kvh * G + row_g
    d = gl.arange(0, HEAD, layout=gl.SliceLayout(0, O_LAYOUT))
    ok = row_valid[:, None] & (d < HEAD)[None, :]
    if nsplit == 1:
        l_o = gl.convert_layout(l_i, gl.SliceLayout(1, O_LAYOUT))
        o = acc / gl.where(l_o == 0.0, 1.0, l_o)[:, None]
        o_ptrs = out_ptr + (tok0 + row_tok)[:, None] * stride_ot + row_head[:, None] * stride_oh + d[None, :]
        gl.store(o_ptrs, o.to(out_ptr.dtype.element_ty), mask=ok)
    else:
        prow = prow0 + row_tok - q_first
        base = split * stride_ps + prow * stride_pt + row_head * stride_ph
        gl.store(part_acc_ptr + base[:, None] + d[None, :], acc, mask=ok)
        rows_m = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, S_LAYOUT))
        tok_m = q_first + rows_m // G_PAD
        g_m = rows_m % G_PAD
        base_m = split * stride_ps + (prow0 + tok_m - q_first) * stride_pt + (kvh * G + g_m) * stride_ph
        valid_m = (g_m < G) & (tok_m < q_len)
        gl.store(part_m_ptr + base_m // HEAD, m_i, mask=valid_m)
        gl.store(part_l_ptr + base_m // HEAD, l_i, mask=valid_m)


@gluon.jit
def _consume_half(q_s, k_s, v_s, k_ready, v_ready, empty, turn, kv_desc,
                  out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, bt_row,
                  kvh, q_first, split, nsplit, prow0, tok0, q_len, ctx_len, start, end, full_end, qk_scale,
                  stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
                  G: gl.constexpr, G_PAD: gl.constexpr, BLOCK_Q: gl.constexpr, HEAD: gl.constexpr,
                  PAGE: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr, ME: gl.constexpr):
    """One ping-pong consumer partition (4 warps): rows [64 ME, 64 ME + 64) of
    the 128-row tile, i.e. the block's tokens from q_first + ME * BLOCK_Q / 2,
    over the same key tiles (start / end / full_end are the whole block's)."""
    HALF_Q: gl.constexpr = BLOCK_Q // 2
    _consume(q_s.slice(ME * HALF_Q * G_PAD, HALF_Q * G_PAD), k_s, v_s, k_ready, v_ready, empty, kv_desc,
             out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, bt_row,
             kvh, q_first + ME * HALF_Q, split, nsplit, prow0 + ME * HALF_Q, tok0, q_len, ctx_len, start, end,
             full_end, qk_scale, stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
             G, G_PAD, HALF_Q, HEAD, PAGE, BLOCK_N, STAGES, 4, True, True, turn, ME)


@gluon.jit
def _produce(kv_desc, k_s, v_s, k_ready, v_ready, empty, bt_row, start, n, last_key, col,
             PAGE: gl.constexpr, BLOCK_N: gl.constexpr, STAGES: gl.constexpr):
    """The producer warp: tile j into buffer j % STAGES once the consumers
    have released it (a fresh barrier passes the wait on the phase before
    its first, hence the ``^ 1``); the tile's pages are read before the wait."""
    for j in range(0, n):
        b = j % STAGES
        t0 = start + j * BLOCK_N
        pages, box = _tile_pages(kv_desc, bt_row, t0, last_key, PAGE, BLOCK_N)
        mbarrier.wait(empty.index(b), ((j // STAGES) & 1) ^ 1)
        _issue_kv_pages(kv_desc, k_s.index(b), v_s.index(b), k_ready.index(b), v_ready.index(b), pages, box, t0,
                        col, PAGE, BLOCK_N)


@gluon.jit(do_not_specialize=["stride_w"])
def attn_gluon_prefill_kernel(
    q_ptr, kv_desc, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr,
    block_table_ptr, work_ptr, stride_w,  # work list [8, W] (triton_attn.plan_work's rows)
    stride_qt, stride_qh, stride_ot, stride_oh, stride_bt,
    stride_ps, stride_pt, stride_ph,  # partial acc [S, Ns, Hq, D] (m / l: [S, Ns, Hq], same first 3 strides / D)
    qk_scale,  # sm_scale * log2(e)
    G: gl.constexpr, G_PAD: gl.constexpr, BLOCK_Q: gl.constexpr, HEAD: gl.constexpr, PAGE: gl.constexpr,
    BLOCK_N: gl.constexpr, STAGES: gl.constexpr, OVERLAP: gl.constexpr, WARP_SPEC: gl.constexpr,
    PINGPONG: gl.constexpr = False,
):
    """Grid (work items, KV heads), as ``triton_kernel.paged_attention_kernel``'s large-tile path."""
    NUM_WARPS: gl.constexpr = gl.num_warps()
    BLOCK_M: gl.constexpr = BLOCK_Q * G_PAD
    dt: gl.constexpr = kv_desc.dtype
    item = gl.program_id(0)
    kvh = gl.program_id(1)

    w = work_ptr + item
    req = gl.load(w)
    q_first = gl.load(w + stride_w)
    split = gl.load(w + 2 * stride_w)
    nsplit = gl.load(w + 3 * stride_w)
    prow0 = gl.load(w + 4 * stride_w)
    tok0 = gl.load(w + 5 * stride_w)
    q_len = gl.load(w + 6 * stride_w)
    ctx_len = gl.load(w + 7 * stride_w)
    start, end, full_end = _visible_range(q_first, q_len, ctx_len, split, nsplit, BLOCK_Q, BLOCK_N)
    n = gl.maximum(gl.cdiv(end - start, BLOCK_N), 0)
    bt_row = block_table_ptr + req * stride_bt
    last_key = gl.maximum(ctx_len + q_len - 1, 0)
    col = kvh * HEAD

    q_s = gl.allocate_shared_memory(dt, [BLOCK_M, HEAD], gl.NVMMASharedLayout.get_default_for([BLOCK_M, HEAD], dt))
    k_s = gl.allocate_shared_memory(dt, [STAGES, BLOCK_N, HEAD], kv_desc.layout)
    v_s = gl.allocate_shared_memory(dt, [STAGES, BLOCK_N, HEAD], kv_desc.layout)
    k_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    v_ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    empty = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    turn = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # ping-pong only
    for i in gl.static_range(STAGES):
        mbarrier.init(k_ready.index(i), count=1)
        mbarrier.init(v_ready.index(i), count=1)
        mbarrier.init(empty.index(i), count=2 if PINGPONG else 1)  # ping-pong: each half releases
    for i in gl.static_range(2):
        mbarrier.init(turn.index(i), count=1)
    fence_async_shared()

    if not WARP_SPEC:  # the first STAGES tiles, before the query (their copies run meanwhile)
        for i in gl.static_range(STAGES):
            _issue_kv(kv_desc, k_s.index(i), v_s.index(i), k_ready.index(i), v_ready.index(i), bt_row,
                      start + i * BLOCK_N, last_key, col, i < n, PAGE, BLOCK_N)

    # the query tile: rows of tokens x heads gathered with plain loads (the G heads of a token are
    # contiguous, the tokens a row of heads apart: no single TMA box), stored once into shared memory
    QL: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [NUM_WARPS, 1], [1, 0])
    rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, QL))
    d = gl.arange(0, HEAD, layout=gl.SliceLayout(0, QL))
    row_tok = q_first + rows // G_PAD
    row_g = rows % G_PAD
    q_ok = ((row_g < G) & (row_tok < q_len))[:, None] & (d < HEAD)[None, :]
    q_ptrs = q_ptr + (tok0 + row_tok)[:, None] * stride_qt + (kvh * G + row_g)[:, None] * stride_qh + d[None, :]
    q_s.store(gl.load(q_ptrs, mask=q_ok, other=0.0))
    fence_async_shared()
    gl.thread_barrier()

    if PINGPONG:
        # the default partition (4 warps, the launch's) produces; each half is a 4-warp worker. The two
        # argument tuples differ only in ME, yet stay written out: Triton 3.6's Gluon frontend does not
        # build one tuple of these (shared-memory and barrier handles) to extend (the sm_90 compile fails)
        gl.warp_specialize([
            (_produce, (kv_desc, k_s, v_s, k_ready, v_ready, empty, bt_row, start, n, last_key, col,
                        PAGE, BLOCK_N, STAGES)),
            (_consume_half, (q_s, k_s, v_s, k_ready, v_ready, empty, turn, kv_desc,
                             out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, bt_row,
                             kvh, q_first, split, nsplit, prow0, tok0, q_len, ctx_len, start, end, full_end,
                             qk_scale, stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
                             G, G_PAD, BLOCK_Q, HEAD, PAGE, BLOCK_N, STAGES, 0)),
            (_consume_half, (q_s, k_s, v_s, k_ready, v_ready, empty, turn, kv_desc,
                             out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, bt_row,
                             kvh, q_first, split, nsplit, prow0, tok0, q_len, ctx_len, start, end, full_end,
                             qk_scale, stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
                             G, G_PAD, BLOCK_Q, HEAD, PAGE, BLOCK_N, STAGES, 1)),
        ], [4, 4], [PINGPONG_REGS, PINGPONG_REGS])
    elif WARP_SPEC:
        gl.warp_specialize([
            (_consume, (q_s, k_s, v_s, k_ready, v_ready, empty, kv_desc,
                        out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, bt_row,
                        kvh, q_first, split, nsplit, prow0, tok0, q_len, ctx_len, start, end, full_end, qk_scale,
                        stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
                        G, G_PAD, BLOCK_Q, HEAD, PAGE, BLOCK_N, STAGES, NUM_WARPS, OVERLAP, WARP_SPEC)),
            (_produce, (kv_desc, k_s, v_s, k_ready, v_ready, empty, bt_row, start, n, last_key, col,
                        PAGE, BLOCK_N, STAGES)),
        ], [1], [24])
    else:
        _consume(q_s, k_s, v_s, k_ready, v_ready, empty, kv_desc,
                 out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, bt_row,
                 kvh, q_first, split, nsplit, prow0, tok0, q_len, ctx_len, start, end, full_end, qk_scale,
                 stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
                 G, G_PAD, BLOCK_Q, HEAD, PAGE, BLOCK_N, STAGES, NUM_WARPS, OVERLAP, WARP_SPEC)
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(k_ready.index(i))
        mbarrier.invalidate(v_ready.index(i))
        mbarrier.invalidate(empty.index(i))
    for i in gl.static_range(2):
        mbarrier.invalidate(turn.index(i))


def _gl_dtype(torch_dtype):
    import torch

    return {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[torch_dtype]


def kv_descriptor(cache, tiles: PrefillTiles, page: int, head: int) -> TensorDescriptor:
    """The TMA descriptor of the cache [pages, 2, page, Hkv, D] (contiguous)
    viewed as rows [pages * 2 * page, Hkv * D]; boxes of min(page, block_n)
    rows x D."""
    c2 = cache.view(cache.shape[0] * 2 * page, cache.shape[3] * cache.shape[4])
    block = [min(page, tiles.block_n), head]
    return TensorDescriptor(c2, list(c2.shape), list(c2.stride()), block,
                            gl.NVMMASharedLayout.get_default_for(block, _gl_dtype(cache.dtype)))


def launch(q, cache, out, part_acc, part_m, part_l, block_table, work, num_items: int, num_kv_heads: int,
           group: int, g_pad: int, block_q: int, sm_scale: float, page: int, tiles: PrefillTiles) -> None:
    """One launch over the work list (``plan_work``'s, built for ``block_q``
    tokens a block); the caller runs the ``tl`` merge kernel for split blocks.
    ``q`` / ``out`` [T, Hq, D] with a contiguous last dim, ``cache``
    contiguous [pages, 2, page, Hkv, D]."""
    head = q.shape[-1]
    if block_q * g_pad != tiles.block_m:
        raise ValueError(f"{block_q} tokens x {g_pad} heads is not the tiles' {tiles.block_m} rows")
    if tiles.pingpong and block_q % 2:
        raise ValueError(f"ping-pong halves split the block's tokens: {block_q} token(s) a block do not halve")
    desc = kv_descriptor(cache, tiles, page, head)
    dummy = out
    ps = part_acc.stride()[:3] if part_acc is not None else (0, 0, 0)
    attn_gluon_prefill_kernel[(num_items, num_kv_heads)](
        q, desc, out, part_acc if part_acc is not None else dummy, part_m if part_m is not None else dummy,
        part_l if part_l is not None else dummy,
        block_table, work, work.stride(0),
        q.stride(0), q.stride(1), out.stride(0), out.stride(1), block_table.stride(0),
        ps[0], ps[1], ps[2],
        sm_scale * 1.4426950408889634,
        G=group, G_PAD=g_pad, BLOCK_Q=block_q, HEAD=head, PAGE=page, BLOCK_N=tiles.block_n, STAGES=tiles.stages,
        OVERLAP=tiles.overlap, WARP_SPEC=tiles.warp_spec, PINGPONG=tiles.pingpong,
        num_warps=tiles.num_warps, **({"maxnreg": PINGPONG_MAXNREG} if tiles.pingpong else {}),
    )


__all__ = ["PrefillTiles", "PREFILL_VARIANTS", "DEFAULT_PREFILL_TILES", "prefill_smem_bytes", "launch",
           "rule_tiles", "kv_descriptor", "attn_gluon_prefill_kernel", "triton"]
