"""TRITON_MLA's Gluon decode kernel, warp-specialised form (FlashMLA's idea
for its dense sm90 decode; our own code): each warpgroup scores ITS OWN
64-key block with 64-wide instructions, and the two warpgroups run half a
step apart, so while one waits the other uses the tensor cores.

Why a second form: the shared-dot kernel (``mla_gluon.py``) splits one
64-key tile's scores between the warpgroups, so each warpgroup's score
instructions are 64 x 32 x 16 and re-read the query from shared memory
twice as often per key as 64-wide ones, and both warpgroups stall together
on each copy. Here, at 128 heads the score dot is 64 x 64 x 16 per
warpgroup and the copies are released and issued half a buffer at a time.

The schedule (one program = 64 heads of one request x one KV split, grid
as ``mla_gluon``'s; ``gl.warp_specialize`` with two 4-warp worker
partitions, warpgroups 0 and 1; the default partition's 4 warps issue the
query's and the first pair's copies, then idle at 24 registers: as the
default partition, either warpgroup's code spilled):

- Shared memory: the query [64, 576] (its 512 rank dims as two halves), two
  64-key buffers, each as two value halves [64, 256] (dims 0-255: the half
  warpgroup 0 accumulates, 256-511: warpgroup 1's) and its rope part
  [64, 64]. A step takes a PAIR of blocks: block 2k in buffer 0, scored by
  warpgroup 0; block 2k + 1 in buffer 1, scored by warpgroup 1.
- **P lives in the rope slot of its block's buffer**: once a warpgroup's
  score dot of its block is done, that block's rope part is dead until the
  buffer's refill, and [64 keys, 64] bf16 is exactly P's [64 heads, 64
  keys] tile. So no P buffer is needed (216 KiB + barriers in all).
- Row maxima, rescale factors and row sums go through shared vectors,
  ordered by mbarriers (one arrival a step each):
  warpgroup 0: S0 = Q K0^T; m0 = max(m, rowmax S0), c0 = 2^(m - m0) -> shared,
  "c0 ready"; O_lo = O_lo * c0 + P0 V0_lo (P0 = 2^(S0 - m0) from
  registers, rounded to bf16); waits "c1 ready"; writes that P0 times c1
  (rounded again: the float32 P0 would cost 32 registers more) into buffer
  0's rope slot, "P0 ready"; O_lo *= c1; waits "P1 ready"; O_lo += P1 V1_lo.
  warpgroup 1: S1 = Q K1^T; waits "c0 ready"; m1 = max(m0, rowmax S1),
  c1 = 2^(m0 - m1) -> shared, "c1 ready"; O_hi *= c0 c1; writes P1 =
  2^(S1 - m1) into buffer 1's rope slot, "P1 ready"; O_hi += P1 V1_hi (P1
  from registers: warpgroup 0 refills that slot once its own dot on P1 is
  done); waits "P0 ready"; O_hi += (P0 c1) V0_hi.
  Both accumulators end each step at the scale m1; each warpgroup keeps its
  own row sum at that scale (l0 of P0, l1 of P1), added once at the end.
- **Refills, half a buffer at a time, by the warpgroup that read it last**
  (no producer warp, no "empty" barriers): the value half h of a buffer is
  refilled by warpgroup h once its output dot on it is done; a buffer's
  rope slot (then holding its P) goes with the half of the OTHER
  warpgroup, which reads that P last. In step order: warpgroup 0 refills
  buffer 0's low half after P0 V0_lo, buffer 1's low half and rope slot
  after P1 V1_lo; warpgroup 1 refills buffer 1's high half after P1 V1_hi,
  buffer 0's high half and rope slot after P0 V0_hi. Each half has its own
  mbarrier (``own[b]``, ``late[b * LC + c]``); a warpgroup's score dot starts on the half it
  refilled itself, early in the last step (its OWN half; FlashMLA orders
  its score chunks so too), and waits for the LATE half (and rope), which
  the other warpgroup refilled after its last dot, only then. ``LC`` > 1
  (``GluonTiles(..., schedule="wsc")``: 4) copies a late half in ``LC``
  column chunks with a barrier each (the rope with the first), so the
  score dot takes each chunk as it lands, as FlashMLA's 64-dim ones.
- Ragged ends, stale slots, empty splits, split-KV partials: as
  ``mla_gluon`` (the warpgroup that scores the split's last block zeroes
  its value rows past the split's end in both halves before its score dot;
  an odd block count's last pair has an all-masked second block, still
  copied, clamped to the request's last key).

Only bf16 / fp16 caches, rank 512 (two 256-dim halves), rope 64, 64 heads
a program. ``GluonTiles(64, 2, schedule="ws")`` (or ``"wsc"``) selects it.
"""

from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (
    fence_async_shared, mbarrier, tma, warpgroup_mma, warpgroup_mma_wait,
)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

LOG2E = gl.constexpr(1.4426950408889634)
BLOCK_H = 64
BLOCK_N = 64  # keys a block (one warpgroup's score dot)
WG_WARPS = gl.constexpr(4)  # warps a partition (one warpgroup)
# Three warpgroups (the idle default partition, warpgroups 0 and 1) share the
# SM's 64 Ki registers: launched at MAXNREG a thread (168 x 384 threads), then
# setmaxnreg gives the idle one 24 and the two working ones these (24 + 232 +
# 248 <= 512). Warpgroup 1 gets more: at 240 each it spilled.
WG0_REGS = gl.constexpr(232)
WG1_REGS = gl.constexpr(248)
MAXNREG = 168


def ws_smem_bytes(rank: int = 512, rope: int = 64, elem: int = 2) -> int:
    """The query and two 64-key buffers (P lives in the rope slots)."""
    return (BLOCK_H + 2 * BLOCK_N) * (rank + rope) * elem


@gluon.jit
def _issue_own(kv_desc, kv_buf, bar, bt_row, block, last_key, half, pred, PAGE: gl.constexpr, HALF: gl.constexpr):
    """TMA copies of a buffer's OWN value half (dims [half * HALF, (half + 1) *
    HALF), refilled by the warpgroup that scores the buffer; never the rope)
    of block ``block``, completing on ``bar``: one copy per page the block
    spans (or one inside its page)."""
    ROWS: gl.constexpr = kv_desc.block_type.shape[0]
    COPIES: gl.constexpr = 64 // ROWS
    mbarrier.expect(bar, COPIES * kv_desc.block_type.nbytes, pred=pred)
    k0 = block * 64
    for i in gl.static_range(COPIES):
        key = k0 + i * ROWS
        page = gl.load(bt_row + gl.minimum(key, last_key) // PAGE)
        row = page * PAGE + key % PAGE
        tma.async_copy_global_to_shared(kv_desc, [row, half * HALF], bar, kv_buf.slice(i * ROWS, ROWS), pred=pred)


@gluon.jit
def _issue_late(kc_desc, kp_desc, kv_buf, kp_buf, late, b: gl.constexpr, bt_row, block, last_key, half, pred,
                PAGE: gl.constexpr, HALF: gl.constexpr, LC: gl.constexpr):
    """TMA copies of a buffer's LATE half (refilled by the warpgroup that does
    not score it) and its rope part, in ``LC`` column chunks of ``HALF / LC``
    dims, each completing on its own barrier ``late[b * LC + c]`` (the rope
    with chunk 0), so the score dot can take each chunk as it lands."""
    ROWS: gl.constexpr = kc_desc.block_type.shape[0]
    CW: gl.constexpr = kc_desc.block_type.shape[1]
    COPIES: gl.constexpr = 64 // ROWS
    k0 = block * 64
    for c in gl.static_range(LC):
        bar = late.index(b * LC + c)
        mbarrier.expect(bar, COPIES * (kc_desc.block_type.nbytes + (kp_desc.block_type.nbytes if c == 0 else 0)),
                        pred=pred)
        dst = kv_buf.slice(c * CW, CW, dim=1)
        for i in gl.static_range(COPIES):
            key = k0 + i * ROWS
            page = gl.load(bt_row + gl.minimum(key, last_key) // PAGE)
            row = page * PAGE + key % PAGE
            tma.async_copy_global_to_shared(kc_desc, [row, half * HALF + c * CW], bar, dst.slice(i * ROWS, ROWS),
                                            pred=pred)
            if c == 0:
                tma.async_copy_global_to_shared(kp_desc, [row, 0], bar, kp_buf.slice(i * ROWS, ROWS), pred=pred)


@gluon.jit
def _zero_tail_half(v_buf, k0, end, HALF: gl.constexpr):
    """Zero the rows of keys at or past ``end`` in one landed value half
    (stale slots may hold NaN; 0 * NaN would reach the output). Uniform
    over the partition, so its barrier is safe."""
    if k0 + 64 > end:
        ZL: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [4, 1], [1, 0])
        rows = gl.arange(0, 64, layout=gl.SliceLayout(1, ZL))
        keep = (k0 + rows < end)[:, None]
        for c in gl.static_range(HALF // 64):
            chunk = v_buf.slice(c * 64, 64, dim=1)
            v = chunk.load(ZL)
            chunk.store(gl.where(keep, v, gl.zeros_like(v)))
        fence_async_shared()  # generic-proxy stores before the wgmma (async proxy) reads them
        gl.thread_barrier()


@gluon.jit
def _score(q_s, q_pe, kv_s, kp_s, own, late, b: gl.constexpr, phase, k0, end, S_L: gl.constexpr,
           HALF: gl.constexpr, LC: gl.constexpr):
    """S = Q K^T for block buffer ``b`` (scored by warpgroup ``b``): first the
    value half this warpgroup refilled itself, early in the last step (its
    own half, h = b), then, once it has landed, the half and rope part the
    other warpgroup refilled after its last dot. The split's last block first
    has the value rows past ``end`` zeroed in both halves (here, where only
    the accumulator is live; the other warpgroup reads its half only after
    this one's P is ready)."""
    OWN: gl.constexpr = 2 * b + b
    LATE: gl.constexpr = 2 * b + 1 - b
    CW: gl.constexpr = HALF // LC
    if k0 + 64 > end:
        mbarrier.wait(own.index(b), phase)
        for c in gl.static_range(LC):
            mbarrier.wait(late.index(b * LC + c), phase)
        _zero_tail_half(kv_s.index(OWN), k0, end, HALF)
        _zero_tail_half(kv_s.index(LATE), k0, end, HALF)
    zero = gl.zeros([64, 64], gl.float32, S_L)
    # an opaque 0 (volatile asm): the wgmma descriptors are then computed in the
    # loop instead of hoisted out of it into 64+ registers a thread, which spilled
    z = gl.inline_asm_elementwise("mov.u32 $0, 0;", "=r", [], dtype=gl.int32, is_pure=False, pack=1)
    mbarrier.wait(own.index(b), phase)
    s = warpgroup_mma(q_s.index(b + z), kv_s.index(OWN + z).permute((1, 0)), zero, use_acc=False, is_async=True)
    for c in gl.static_range(LC):  # the late half a chunk at a time, as its copies land
        mbarrier.wait(late.index(b * LC + c), phase)
        s = warpgroup_mma(q_s.index(1 - b + z).slice(c * CW, CW, dim=1),
                          kv_s.index(LATE + z).slice(c * CW, CW, dim=1).permute((1, 0)), s, is_async=True)
    s = warpgroup_mma(q_pe, kp_s.index(b + z).permute((1, 0)), s, is_async=True)  # the rope came with chunk 0
    return warpgroup_mma_wait(0, deps=[s])


@gluon.jit
def _signal(bar):
    """Every thread of the partition has done its shared-memory writes, then
    one arrival (release) on ``bar``."""
    gl.thread_barrier()
    mbarrier.arrive(bar, count=1)


@gluon.jit
def _epilogue(acc, m_i, l_own, sl_s, l_bar, me: gl.constexpr, hg, req, split, num_heads, num_splits,
              out_ptr, lse_ptr, part_o_ptr, part_lse_ptr, stride_ot, stride_oh, stride_lt,
              S_L: gl.constexpr, O_L: gl.constexpr, HALF: gl.constexpr, RANK: gl.constexpr,
              DIRECT: gl.constexpr, HAS_LSE: gl.constexpr):
    """Row sums added across the warpgroups (shared), this warpgroup's 256
    output dims normalised and written; warpgroup 0 writes the lse."""
    ROW: gl.constexpr = gl.SliceLayout(1, S_L)
    sl_s.slice(me * 64, 64).store(l_own)
    _signal(l_bar)
    mbarrier.wait(l_bar, 0)
    l_i = sl_s.slice(0, 64).load(ROW) + sl_s.slice(64, 64).load(ROW)
    lse2 = gl.where(l_i > 0.0, m_i + gl.log2(gl.where(l_i > 0.0, l_i, 1.0)), float("-inf"))
    l_o = gl.convert_layout(l_i, gl.SliceLayout(1, O_L))
    o = acc / gl.where(l_o == 0.0, 1.0, l_o)[:, None]
    heads = hg * 64 + gl.arange(0, 64, layout=gl.SliceLayout(1, O_L))
    d = me * HALF + gl.arange(0, HALF, layout=gl.SliceLayout(0, O_L))
    h_ok = (heads < num_heads)[:, None] & (d < RANK)[None, :]
    heads_s = hg * 64 + gl.arange(0, 64, layout=ROW)
    if DIRECT:
        gl.store(out_ptr + req * stride_ot + heads[:, None] * stride_oh + d[None, :],
                 o.to(out_ptr.dtype.element_ty), mask=h_ok)
        if HAS_LSE and me == 0:
            gl.store(lse_ptr + req * stride_lt + heads_s, lse2 / LOG2E, mask=heads_s < num_heads)
    else:
        prow = (req.to(gl.int64) * num_heads + heads) * num_splits + split
        gl.store(part_o_ptr + prow[:, None] * RANK + d[None, :], o, mask=h_ok)
        if me == 0:
            prow_s = (req.to(gl.int64) * num_heads + heads_s) * num_splits + split
            gl.store(part_lse_ptr + prow_s, lse2, mask=heads_s < num_heads)


@gluon.jit
def _wg0(rt, PAGE: gl.constexpr, RANK: gl.constexpr, DIRECT: gl.constexpr, HAS_LSE: gl.constexpr, LC: gl.constexpr):
    """Warpgroup 0: scores block 2k (buffer 0), accumulates output dims 0-255."""
    (q_s, q_pe, kv_s, kp_s, sm_s, sc_s, sl_s, q_bar, own, late, sync, kv_desc, kc_desc, kp_desc, bt_row, last_key,
     t_begin,
     end, n_pairs, qk_scale, hg, req, split, num_heads, num_splits, out_ptr, lse_ptr, part_o_ptr, part_lse_ptr,
     stride_ot, stride_oh, stride_lt) = rt
    HALF: gl.constexpr = RANK // 2
    S_L: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    O_L: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                  instr_shape=[16, HALF, 16])
    P_A: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=O_L, k_width=2)
    ROW: gl.constexpr = gl.SliceLayout(1, S_L)
    ORow: gl.constexpr = gl.SliceLayout(1, O_L)
    dt: gl.constexpr = kv_desc.dtype
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, S_L))
    m_i = gl.full([64], float("-inf"), gl.float32, ROW)
    l0 = gl.zeros([64], gl.float32, ROW)
    acc = gl.zeros([64, HALF], gl.float32, O_L)
    mbarrier.wait(q_bar, 0)  # each partition waits for the query's copy itself
    for k in range(0, n_pairs):
        ph = k & 1
        k0 = (t_begin + 2 * k) * 64
        s = _score(q_s, q_pe, kv_s, kp_s, own, late, 0, ph, k0, end, S_L, HALF, LC)
        s = gl.where(((k0 + cols) < end)[None, :], s * qk_scale, float("-inf"))
        m0 = gl.maximum(m_i, gl.max(s, 1))
        m0_use = gl.where(m0 == float("-inf"), 0.0, m0)
        c0 = gl.exp2(m_i - m0_use)
        p0 = gl.exp2(s - m0_use[:, None])
        l0 = l0 * c0 + gl.sum(p0, 1)
        sm_s.store(m0)
        sc_s.slice(0, 64).store(c0)
        _signal(sync.index(0))  # "c0 ready"
        acc = acc * gl.convert_layout(c0, ORow)[:, None]
        p0b = p0.to(dt)  # only the rounded P0 stays live (its rescale below rounds again: registers)
        acc = warpgroup_mma(gl.convert_layout(p0b, P_A), kv_s.index(0), acc, is_async=True)  # O_lo += P0 V0_lo
        mbarrier.wait(sync.index(1), ph)  # "c1 ready"
        c1 = sc_s.slice(64, 64).load(ROW)
        m_i = sm_s.load(ROW)  # m1: both warpgroups end the step at this scale
        acc = warpgroup_mma_wait(0, deps=[acc])
        gl.thread_barrier()  # every warp's part of the dot is done: buffer 0's low half is free
        nxt = k + 1 < n_pairs
        _issue_own(kv_desc, kv_s.index(0), own.index(0), bt_row, t_begin + 2 * k + 2, last_key, 0, nxt, PAGE, HALF)
        kp_s.index(0).store((p0b.to(gl.float32) * c1[:, None]).to(dt))  # P0 at m1, in block 0's (dead) rope slot
        fence_async_shared()
        _signal(sync.index(2))  # "P0 ready"
        acc = acc * gl.convert_layout(c1, ORow)[:, None]
        l0 = l0 * c1
        mbarrier.wait(sync.index(3), ph)  # "P1 ready"
        acc = warpgroup_mma(kp_s.index(1), kv_s.index(2), acc, is_async=True)  # O_lo += P1 V1_lo
        acc = warpgroup_mma_wait(0, deps=[acc])
        gl.thread_barrier()  # buffer 1's low half and its rope slot (P1) are free
        _issue_late(kc_desc, kp_desc, kv_s.index(2), kp_s.index(1), late, 1, bt_row, t_begin + 2 * k + 3, last_key, 0,
                    nxt, PAGE, HALF, LC)
    _epilogue(acc, m_i, l0, sl_s, sync.index(4), 0, hg, req, split, num_heads, num_splits,
              out_ptr, lse_ptr, part_o_ptr, part_lse_ptr, stride_ot, stride_oh, stride_lt,
              S_L, O_L, HALF, RANK, DIRECT, HAS_LSE)


@gluon.jit
def _wg1(rt, PAGE: gl.constexpr, RANK: gl.constexpr, DIRECT: gl.constexpr, HAS_LSE: gl.constexpr, LC: gl.constexpr):
    """Warpgroup 1: scores block 2k + 1 (buffer 1), accumulates output dims 256-511."""
    (q_s, q_pe, kv_s, kp_s, sm_s, sc_s, sl_s, q_bar, own, late, sync, kv_desc, kc_desc, kp_desc, bt_row, last_key,
     t_begin,
     end, n_pairs, qk_scale, hg, req, split, num_heads, num_splits, out_ptr, lse_ptr, part_o_ptr, part_lse_ptr,
     stride_ot, stride_oh, stride_lt) = rt
    HALF: gl.constexpr = RANK // 2
    S_L: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1], instr_shape=[16, 64, 16])
    O_L: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[4, 1],
                                                  instr_shape=[16, HALF, 16])
    P_A: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=O_L, k_width=2)
    ROW: gl.constexpr = gl.SliceLayout(1, S_L)
    ORow: gl.constexpr = gl.SliceLayout(1, O_L)
    dt: gl.constexpr = kv_desc.dtype
    cols = gl.arange(0, 64, layout=gl.SliceLayout(0, S_L))
    m1 = gl.full([64], float("-inf"), gl.float32, ROW)
    l1 = gl.zeros([64], gl.float32, ROW)
    acc = gl.zeros([64, HALF], gl.float32, O_L)
    mbarrier.wait(q_bar, 0)  # each partition waits for the query's copy itself
    for k in range(0, n_pairs):
        ph = k & 1
        k1 = (t_begin + 2 * k + 1) * 64
        # its own (high) half first; the low half carries the rope part (both refilled by warpgroup 0)
        s = _score(q_s, q_pe, kv_s, kp_s, own, late, 1, ph, k1, end, S_L, HALF, LC)
        s = gl.where(((k1 + cols) < end)[None, :], s * qk_scale, float("-inf"))
        mbarrier.wait(sync.index(0), ph)  # "c0 ready"
        m0 = sm_s.load(ROW)
        c0 = sc_s.slice(0, 64).load(ROW)
        m1 = gl.maximum(m0, gl.max(s, 1))
        m1_use = gl.where(m1 == float("-inf"), 0.0, m1)
        c1 = gl.exp2(m0 - m1_use)
        gl.thread_barrier()  # every thread has read m0 before it is overwritten
        sm_s.store(m1)
        sc_s.slice(64, 64).store(c1)
        _signal(sync.index(1))  # "c1 ready"
        p1 = gl.exp2(s - m1_use[:, None])
        c01 = c0 * c1
        l1 = l1 * c01 + gl.sum(p1, 1)
        acc = acc * gl.convert_layout(c01, ORow)[:, None]
        p1b = p1.to(dt)
        kp_s.index(1).store(p1b)  # P1 in block 1's (dead) rope slot, for warpgroup 0
        fence_async_shared()
        _signal(sync.index(3))  # "P1 ready"
        # O_hi += P1 V1_hi with P1 from registers: warpgroup 0 refills this rope slot once ITS dot
        # on P1 is done, which says nothing about this one
        acc = warpgroup_mma(gl.convert_layout(p1b, P_A), kv_s.index(3), acc, is_async=True)
        mbarrier.wait(sync.index(2), ph)  # "P0 ready"
        acc = warpgroup_mma(kp_s.index(0), kv_s.index(1), acc, is_async=True)  # O_hi += (P0 c1) V0_hi
        nxt = k + 1 < n_pairs
        acc = warpgroup_mma_wait(1, deps=[acc])
        gl.thread_barrier()  # P1 V1_hi done: buffer 1's high half is free
        _issue_own(kv_desc, kv_s.index(3), own.index(1), bt_row, t_begin + 2 * k + 3, last_key, 1, nxt, PAGE, HALF)
        acc = warpgroup_mma_wait(0, deps=[acc])
        gl.thread_barrier()  # P0 V0_hi done: buffer 0's high half and its rope slot (P0) are free
        _issue_late(kc_desc, kp_desc, kv_s.index(1), kp_s.index(0), late, 0, bt_row, t_begin + 2 * k + 2, last_key, 1,
                    nxt, PAGE, HALF, LC)
    _epilogue(acc, m1, l1, sl_s, sync.index(4), 1, hg, req, split, num_heads, num_splits,
              out_ptr, lse_ptr, part_o_ptr, part_lse_ptr, stride_ot, stride_oh, stride_lt,
              S_L, O_L, HALF, RANK, DIRECT, HAS_LSE)


@gluon.jit
def _idle():
    """The default partition: nothing (it issued the prologue's copies)."""
    pass


@gluon.jit
def mla_gluon_ws_decode_kernel(
    q_half_desc, q_pe_desc, kv_desc, kc_desc, kp_desc,  # kc_desc: the late halves' chunks
    out_ptr, lse_ptr, part_o_ptr, part_lse_ptr,
    block_table_ptr, seq_lens_ptr,
    num_heads, num_splits, qk_scale,  # qk_scale: sm_scale * log2(e)
    stride_bt, stride_ot, stride_oh, stride_lt,
    RANK: gl.constexpr, ROPE: gl.constexpr, PAGE: gl.constexpr,
    DIRECT: gl.constexpr, HAS_LSE: gl.constexpr,
    LC: gl.constexpr,  # copies (and barriers) a late half comes in
):
    """Grid (head groups, splits, requests); partials as ``mla_gluon``'s."""
    HALF: gl.constexpr = RANK // 2
    dt: gl.constexpr = kv_desc.dtype
    VEC: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])

    hg = gl.program_id(0)
    split = gl.program_id(1)
    req = gl.program_id(2)
    seq_len = gl.load(seq_lens_ptr + req)
    n_all = gl.cdiv(seq_len, 64)
    per_split = gl.cdiv(n_all, num_splits)
    t_begin = split * per_split
    t_stop = gl.minimum(t_begin + per_split, n_all)
    end = gl.minimum(t_stop * 64, seq_len)
    n_pairs = gl.cdiv(gl.maximum(t_stop - t_begin, 1), 2)  # an empty split runs one all-masked pair
    bt_row = block_table_ptr + req * stride_bt
    last_key = gl.maximum(seq_len - 1, 0)

    q_s = gl.allocate_shared_memory(dt, [2, 64, HALF], q_half_desc.layout)
    q_pe = gl.allocate_shared_memory(dt, [64, ROPE], q_pe_desc.layout)
    kv_s = gl.allocate_shared_memory(dt, [4, 64, HALF], kv_desc.layout)  # index 2 * buffer + half
    kp_s = gl.allocate_shared_memory(dt, [2, 64, ROPE], kp_desc.layout)  # rope parts, then P
    sm_s = gl.allocate_shared_memory(gl.float32, [64], VEC)  # the running row maximum
    sc_s = gl.allocate_shared_memory(gl.float32, [128], VEC)  # c0, c1
    sl_s = gl.allocate_shared_memory(gl.float32, [128], VEC)  # the final row sums of both warpgroups
    q_bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    own = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())  # buffer b's own half
    late = gl.allocate_shared_memory(gl.int64, [2 * LC, 1], mbarrier.MBarrierLayout())  # its late half's chunks
    # c0 ready, c1 ready, P0 ready, P1 ready (one arrival a step), row sums (one arrival a warpgroup)
    sync = gl.allocate_shared_memory(gl.int64, [5, 1], mbarrier.MBarrierLayout())
    mbarrier.init(q_bar, count=1)
    for i in gl.static_range(2):
        mbarrier.init(own.index(i), count=1)
    for i in gl.static_range(2 * LC):
        mbarrier.init(late.index(i), count=1)
    for i in gl.static_range(4):
        mbarrier.init(sync.index(i), count=1)
    mbarrier.init(sync.index(4), count=2)
    fence_async_shared()

    qrow = req * num_heads + hg * 64
    mbarrier.expect(q_bar, 2 * q_half_desc.block_type.nbytes + q_pe_desc.block_type.nbytes)
    tma.async_copy_global_to_shared(q_half_desc, [qrow, 0], q_bar, q_s.index(0))
    tma.async_copy_global_to_shared(q_half_desc, [qrow, HALF], q_bar, q_s.index(1))
    tma.async_copy_global_to_shared(q_pe_desc, [qrow, 0], q_bar, q_pe)
    # the first pair: own halves (buffer 0's low, buffer 1's high), late halves with the rope parts
    _issue_own(kv_desc, kv_s.index(0), own.index(0), bt_row, t_begin, last_key, 0, True, PAGE, HALF)
    _issue_own(kv_desc, kv_s.index(3), own.index(1), bt_row, t_begin + 1, last_key, 1, True, PAGE, HALF)
    _issue_late(kc_desc, kp_desc, kv_s.index(1), kp_s.index(0), late, 0, bt_row, t_begin, last_key, 1, True, PAGE,
                HALF, LC)
    _issue_late(kc_desc, kp_desc, kv_s.index(2), kp_s.index(1), late, 1, bt_row, t_begin + 1, last_key, 0, True, PAGE,
                HALF, LC)

    rt = (q_s, q_pe, kv_s, kp_s, sm_s, sc_s, sl_s, q_bar, own, late, sync, kv_desc, kc_desc, kp_desc,
          bt_row, last_key, t_begin, end, n_pairs, qk_scale, hg, req, split, num_heads, num_splits,
          out_ptr, lse_ptr, part_o_ptr, part_lse_ptr, stride_ot, stride_oh, stride_lt)
    # the constexprs inline: Triton 3.6 turns the constexprs of a tuple held in a variable into tensors
    gl.warp_specialize([(_idle, ()), (_wg0, (rt, PAGE, RANK, DIRECT, HAS_LSE, LC)),
                        (_wg1, (rt, PAGE, RANK, DIRECT, HAS_LSE, LC))],
                       [WG_WARPS, WG_WARPS], [WG0_REGS, WG1_REGS])


def _gl_dtype(torch_dtype):
    import torch

    return {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16}[torch_dtype]


def descriptors(q, lat, page: int, rank: int, late_chunks: int = 1):
    """TMA descriptors: the query rows [T * H, 576] in blocks of 64 heads x
    256 rank dims and 64 heads x rope; the cache rows [num_pages * page, 576]
    in blocks of ``min(page, 64)`` keys x 256 rank dims, x 256 / late_chunks
    (a late half's chunk) and x rope."""
    t, h, lat_dim = q.shape
    q2 = q.view(t * h, lat_dim)
    c2 = lat.view(lat.shape[0] * lat.shape[1], lat_dim)
    rows = min(page, BLOCK_N)
    g = _gl_dtype(lat.dtype)
    rope = lat_dim - rank
    half = rank // 2

    def desc(x, block):
        return TensorDescriptor(x, list(x.shape), list(x.stride()), block,
                                gl.NVMMASharedLayout.get_default_for(block, g))

    return (desc(q2[:, :rank], [BLOCK_H, half]), desc(q2[:, rank:], [BLOCK_H, rope]),
            desc(c2[:, :rank], [rows, half]), desc(c2[:, :rank], [rows, half // late_chunks]),
            desc(c2[:, rank:], [rows, rope]))


def launch(q, lat, out, lse, part_o, part_lse, block_table, seq_lens, num_heads: int, num_splits: int,
           sm_scale: float, page: int, rank: int, late_chunks: int = 1) -> None:
    """``mla_gluon.launch``'s contract for the warp-specialised form."""
    if (rank, lat.shape[-1] - rank) != (512, 64):
        # P's [64 heads, 64 keys] tile lives in a block's [64 keys, rope] slot; 2 x 256-dim halves
        raise ValueError(f"the warp-specialised Gluon kernel takes rank 512 / rope 64, not {rank} / "
                         f"{lat.shape[-1] - rank}")
    t = q.shape[0]
    if late_chunks not in (1, 2, 4):
        raise ValueError(f"a late half comes in 1, 2 or 4 chunks, not {late_chunks}")
    qh, qp, kv, kc, kp = descriptors(q, lat, page, rank, late_chunks)
    dummy = out
    mla_gluon_ws_decode_kernel[(-(-num_heads // BLOCK_H), num_splits, t)](
        qh, qp, kv, kc, kp,
        out, lse if lse is not None else dummy, part_o if part_o is not None else dummy,
        part_lse if part_lse is not None else dummy,
        block_table, seq_lens,
        num_heads, num_splits, sm_scale * 1.4426950408889634,
        block_table.stride(0), out.stride(0), out.stride(1), lse.stride(0) if lse is not None else 0,
        RANK=rank, ROPE=lat.shape[-1] - rank, PAGE=page, DIRECT=num_splits == 1, HAS_LSE=lse is not None,
        LC=late_chunks,
        num_warps=int(WG_WARPS), maxnreg=MAXNREG,
    )


__all__ = ["BLOCK_N", "MAXNREG", "WG0_REGS", "WG1_REGS", "launch", "mla_gluon_ws_decode_kernel", "ws_smem_bytes"]
