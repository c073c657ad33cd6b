"""Our own Triton MLA decode kernel (TRITON_MLA's run path).

MLA decode in the absorbed form is MQA with one latent KV head: each token's
cached vector (``RANK`` = kv_lora_rank dims, then ``ROPE`` rotary dims) is the
key, its first ``RANK`` dims are the value, and every query head reads it.
The cost is the same bytes for 16 heads and for 128, and 8x the FLOPs: on an
H200, 16 heads per rank (DeepSeek-V3 at tp 8) is memory-bound and 128 heads
(tp 1) compute-bound, so the design serves both:

- **Head groups.** One program takes ``BLOCK_H`` query heads of one request,
  so a latent tile loaded once feeds ``BLOCK_H`` rows of tensor-core work:
  ``S = Q_nope K_nope^T + Q_pe K_pe^T`` is [BLOCK_H, BLOCK_N], then
  ``O += P K_nope`` is [BLOCK_H, RANK]. K_nope is loaded once and used by both
  dots (as K^T, then as V): the same shared-memory tile, never read twice
  from HBM. Heads past ``num_heads`` (16 heads in a 32-row group) are masked
  rows: loaded as zero, never stored.
- **576 = 512 + 64.** The score is two dots, one over the RANK dims and one
  over the ROPE dims, both powers of two; padding 576 to 1024 would add 78%
  dead work and shared memory.
- **Split-KV.** A request's context is cut into ``num_splits`` slices of
  whole ``BLOCK_N`` tiles; each (head group, split, request) program writes a
  normalised partial output and its log-sum-exp, and ``mla_merge_kernel``
  combines them. With one split the first pass writes the output directly
  (no partials, no second launch).
- **Grid order.** Axis 0 is the head group, so the programs that read the
  same latent tiles (128 heads = 2 groups of 64) are launched next to each
  other and the second reads it from L2.
- **Any page size.** Each key's page comes from the block table inside the
  loop (pages may lie anywhere in the pool). When a tile can never cross a
  page (PAGE a multiple of BLOCK_N; tiles start at multiples of BLOCK_N) one
  block-table entry is read per tile; when it spans whole pages (BLOCK_N a
  multiple of PAGE) its BLOCK_N / PAGE entries are read as one vector (page
  16 under 64-key tiles: 4 entries, not 64, and a quarter of the address
  work: 63.8 -> 51.2 us on the H200); otherwise one entry per key.
- **fp8 cache.** vLLM stores ``latent / k_scale`` in e4m3. The dots run
  in fp16: an e4m3 tile widens to fp16 exactly in one instruction per pair
  (to bf16 it took several per element, and that conversion bound the fp8
  loop at 1 TB/s on the H200). The query is scaled into fp16's range by a
  power of two (exact, from its largest magnitude) whose inverse joins the
  softmax scale, as does the per-tensor k_scale; the value side's k_scale
  goes into the final normalisation. So dequantisation costs no multiply
  per element and no extra rounding, and P in [0, 1] is finer in fp16 than
  in bf16.
- **Pipelining.** The key loop is software-pipelined by Triton
  (``NUM_STAGES``): the memory-bound case needs bytes in flight, the
  compute-bound one needs the next tile ready when the dots finish. Each
  tile's block-table entry is read in the iteration whose key loads it
  addresses, so the pipeliner issues both ahead together (a page carried
  over from the previous iteration made Triton 3.6 wait on every copy as
  soon as it was issued: no overlap at all, 2 TB/s on the H200). That chain
  of two loads shares the stages: on mma.sync the key tile gets
  ``(NUM_STAGES - 1) // 2`` buffers, on wgmma one more (held by the
  asynchronous value dot). Triton pipelines a load with a single use, and
  the two dots want different layouts of an 8-bit tile, so on mma.sync an
  fp8 tile's first RANK dims are loaded a second time for the value dot
  (``SPLIT_V``; an L2 hit). On wgmma Triton reads an operand computed in
  registers from registers, so the scaled fp16 query makes a round trip
  through memory (``STAGE_Q``) to be a shared-memory operand like a loaded
  one. Tile sizes and depths per case come from the table in
  ``triton_mla.py``, measured on the H200 (BENCHMARKS.md).
- **Transposed dots** (``TRANSPOSED``, a launch option the table does not use
  yet): keys-major scores S^T = K Q^T and a dims-major output O^T += V^T P^T,
  so that on 64-row groups no score is computed twice and P^T is a
  shared-memory operand (the score dot lands on mma.sync for 32-key tiles).
  Not measured on a GPU.

Only ``attn_select.backends.run.triton_mla`` imports this module.
"""

from __future__ import annotations

import triton
import triton.language as tl

from attn_select.backends.run.paged_keys import key_pages

# a constexpr global: jit code may read it (a plain float global it may not)
LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _tile_rows(bt_row, t0, n_off, last, stride_kp, stride_kt, PAGE: tl.constexpr, BLOCK_N: tl.constexpr):
    """Cache offsets of the keys of the tile starting at key ``t0`` (``key_pages``)."""
    page, slot = key_pages(bt_row, t0, n_off, last, PAGE, BLOCK_N)
    return page * stride_kp + slot * stride_kt


@triton.jit
def _load_latent(kv_ptr, rows, valid, d, r, d_ok, r_ok, RANK: tl.constexpr):
    """One tile's K_nope [BLOCK_N, RANK_PAD] and K_pe [BLOCK_N, ROPE_PAD] in the
    cache's dtype. Keys past the split read as 0 (a stale page may hold NaN,
    and 0 * NaN would reach the output); ``.cg``: streamed through L2 only."""
    k_nope = tl.load(kv_ptr + rows[:, None] + d[None, :], mask=valid[:, None] & d_ok[None, :], other=0.0,
                     cache_modifier=".cg")
    k_pe = tl.load(kv_ptr + rows[:, None] + RANK + r[None, :], mask=valid[:, None] & r_ok[None, :], other=0.0,
                   cache_modifier=".cg")
    return k_nope, k_pe


@triton.jit
def _attend_tile(q_nope, q_pe, k_nope, k_pe, v, valid, m_i, l_i, acc, qk_scale):
    """Online-softmax update of BLOCK_H heads with one tile of keys (``v``:
    the tile's first RANK dims, ``k_nope`` itself or a second load of it)."""
    k_nope = k_nope.to(q_nope.dtype)  # fp8: exact widening; the scale is in qk_scale / the final divide
    k_pe = k_pe.to(q_pe.dtype)
    v = v.to(q_nope.dtype)
    s = tl.dot(q_nope, tl.trans(k_nope))
    s = tl.dot(q_pe, tl.trans(k_pe), s)
    s = tl.where(valid[None, :], s * qk_scale, float("-inf"))
    # every tile has at least one valid key (its first), so m_new is finite
    m_new = tl.maximum(m_i, tl.max(s, 1))
    alpha = tl.exp2(m_i - m_new)
    p = tl.exp2(s - m_new[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return m_new, l_i, acc


@triton.jit
def _attend_tile_t(q_nope_t, q_pe_t, k_nope, k_pe, valid, m_i, l_i, acc_t, qk_scale):
    """The same update with both dots transposed (``TRANSPOSED``): scores
    S^T = K Q^T [BLOCK_N, BLOCK_H] and output O^T += V^T P^T [RANK_PAD,
    BLOCK_H]. The output's 512 dims are the rows, so two warpgroups take 256
    each and P^T is the shared-memory operand both read, where in the
    head-major form each warpgroup needs all of P in its registers and
    Triton has both compute every score."""
    k_nope = k_nope.to(q_nope_t.dtype)
    k_pe = k_pe.to(q_pe_t.dtype)
    s_t = tl.dot(k_nope, q_nope_t)
    s_t = tl.dot(k_pe, q_pe_t, s_t)
    s_t = tl.where(valid[:, None], s_t * qk_scale, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s_t, 0))  # every tile has a valid key: finite
    alpha = tl.exp2(m_i - m_new)
    p_t = tl.exp2(s_t - m_new[None, :])
    l_i = l_i * alpha + tl.sum(p_t, 0)
    acc_t = tl.dot(tl.trans(k_nope), p_t.to(k_nope.dtype), acc_t * alpha[None, :])
    return m_new, l_i, acc_t


@triton.jit
def _pow2_into_fp16_range(q_nope, q_pe):
    """2^e with the tile's largest |q| times 2^e in [2^14, 2^15): the query
    then sits in fp16's range with its bf16 bits intact (a power of two
    scales exactly), and 1 / 2^e is exact too. From the float32 exponent
    field, so no rounding of a log."""
    amax = tl.maximum(tl.max(tl.abs(q_nope.to(tl.float32))), tl.max(tl.abs(q_pe.to(tl.float32))))
    e_field = (amax.to(tl.int32, bitcast=True) >> 23) & 0xFF
    e = tl.where(e_field == 0, 0, 141 - e_field)  # an all-zero (or subnormal) query: scale 1
    e = tl.minimum(tl.maximum(e, -100), 100)
    return ((e + 127) << 23).to(tl.float32, bitcast=True), ((127 - e) << 23).to(tl.float32, bitcast=True)


@triton.jit
def mla_decode_kernel(
    q_nope_ptr, q_pe_ptr, kv_ptr, out_ptr, lse_ptr,
    part_o_ptr, part_lse_ptr,
    block_table_ptr, seq_lens_ptr, kv_scale_ptr,
    q_stage_ptr,  # [T, H, RANK_PAD + ROPE_PAD] in the dots' dtype (STAGE_Q)
    num_heads, num_splits, sm_scale,
    stride_qt, stride_qh, stride_pt, stride_ph,  # q_nope [T, H, RANK], q_pe [T, H, ROPE] (last dim contiguous)
    stride_kp, stride_kt,  # latent cache [num_pages, PAGE, RANK + ROPE]
    stride_bt,  # block table [B, max_pages]
    stride_ot, stride_oh,  # out [T, H, RANK]
    stride_lt,  # lse [T, H] (HAS_LSE)
    RANK: tl.constexpr, RANK_PAD: tl.constexpr, ROPE: tl.constexpr, ROPE_PAD: tl.constexpr,
    PAGE: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_N: tl.constexpr, NUM_STAGES: tl.constexpr,
    DIRECT: tl.constexpr,  # one split: write the output here, no partials
    HAS_LSE: tl.constexpr,  # also write the log-sum-exp (natural log), as vLLM's kernel returns it
    FP8_KV: tl.constexpr,
    SPLIT_V: tl.constexpr,  # the value tile is a second load of K_nope's addresses (fp8 on mma.sync)
    STAGE_Q: tl.constexpr,  # the scaled query goes through q_stage and is loaded back (fp8 on wgmma)
    DOT_F32: tl.constexpr,  # True only under TRITON_INTERPRET: the interpreter gets 16-bit tl.dot wrong
    TRANSPOSED: tl.constexpr = False,  # keys-major scores, dims-major output (_attend_tile_t)
):
    """Grid (head groups, splits, requests): BLOCK_H heads of one decode row
    over one split of its context. Partials go to part_o [B, H, num_splits,
    RANK_PAD] and part_lse [B, H, num_splits] (log2 domain), contiguous."""
    hg = tl.program_id(0)
    split = tl.program_id(1)
    req = tl.program_id(2)

    seq_len = tl.load(seq_lens_ptr + req)
    n_tiles = tl.cdiv(seq_len, BLOCK_N)
    per_split = tl.cdiv(n_tiles, num_splits)
    start = split * per_split * BLOCK_N
    end = tl.minimum(start + per_split * BLOCK_N, seq_len)  # start >= end: an empty split

    heads = hg * BLOCK_H + tl.arange(0, BLOCK_H)
    h_ok = heads < num_heads
    d = tl.arange(0, RANK_PAD)
    r = tl.arange(0, ROPE_PAD)
    d_ok = d < RANK
    r_ok = r < ROPE

    q_nope = tl.load(q_nope_ptr + req * stride_qt + heads[:, None] * stride_qh + d[None, :],
                     mask=h_ok[:, None] & d_ok[None, :], other=0.0)
    q_pe = tl.load(q_pe_ptr + req * stride_pt + heads[:, None] * stride_ph + r[None, :],
                   mask=h_ok[:, None] & r_ok[None, :], other=0.0)
    kv_scale = 1.0
    if FP8_KV:
        kv_scale = tl.load(kv_scale_ptr)
    qk_scale = sm_scale * kv_scale * LOG2E  # scores in the log2 domain (exp2 is the native op)
    if FP8_KV:
        # fp8 tiles widen to fp16 in one instruction per pair (to bf16 it takes
        # several, which bound the fp8 loop on the H200), so the dots run in
        # fp16: the query scaled by a power of two into fp16's range (exact),
        # its inverse folded into the score scale; P in [0, 1] is finer in fp16
        up, down = _pow2_into_fp16_range(q_nope, q_pe)
        q_nope = (q_nope.to(tl.float32) * up).to(tl.float32 if DOT_F32 else tl.float16)
        q_pe = (q_pe.to(tl.float32) * up).to(tl.float32 if DOT_F32 else tl.float16)
        qk_scale = qk_scale * down
        if STAGE_Q:
            # wgmma reads an operand computed in registers from registers: for a
            # query that lives through the whole loop that is 144 registers a
            # thread (spills, and every wgmma waited on); one loaded from memory
            # goes to shared memory. So the scaled query makes a round trip
            # through global memory (an L2 hit; splits of a row write the same bits).
            stage = q_stage_ptr + (req * num_heads + heads).to(tl.int64)[:, None] * (RANK_PAD + ROPE_PAD)
            tl.store(stage + d[None, :], q_nope, mask=h_ok[:, None])
            tl.store(stage + RANK_PAD + r[None, :], q_pe, mask=h_ok[:, None])
            tl.debug_barrier()
            q_nope = tl.load(stage + d[None, :], mask=h_ok[:, None], other=0.0)
            q_pe = tl.load(stage + RANK_PAD + r[None, :], mask=h_ok[:, None], other=0.0)
    elif DOT_F32:
        q_nope = q_nope.to(tl.float32)
        q_pe = q_pe.to(tl.float32)

    m_i = tl.full([BLOCK_H], float("-inf"), tl.float32)
    l_i = tl.zeros([BLOCK_H], tl.float32)

    n_off = tl.arange(0, BLOCK_N)
    bt_row = block_table_ptr + req * stride_bt
    last = tl.maximum(end - 1, 0)
    if TRANSPOSED:
        q_nope_t = tl.trans(q_nope)
        q_pe_t = tl.trans(q_pe)
        acc_t = tl.zeros([RANK_PAD, BLOCK_H], tl.float32)
        for n0 in tl.range(start, end, BLOCK_N, num_stages=NUM_STAGES):
            rows = _tile_rows(bt_row, n0, n_off, last, stride_kp, stride_kt, PAGE, BLOCK_N)
            valid = n0 + n_off < end
            k_nope, k_pe = _load_latent(kv_ptr, rows, valid, d, r, d_ok, r_ok, RANK)
            m_i, l_i, acc_t = _attend_tile_t(q_nope_t, q_pe_t, k_nope, k_pe, valid, m_i, l_i, acc_t, qk_scale)
        acc = tl.trans(acc_t)
    else:
        acc = tl.zeros([BLOCK_H, RANK_PAD], tl.float32)
        for n0 in tl.range(start, end, BLOCK_N, num_stages=NUM_STAGES):
            rows = _tile_rows(bt_row, n0, n_off, last, stride_kp, stride_kt, PAGE, BLOCK_N)
            valid = n0 + n_off < end
            k_nope, k_pe = _load_latent(kv_ptr, rows, valid, d, r, d_ok, r_ok, RANK)
            if SPLIT_V:
                v = tl.load(kv_ptr + rows[:, None] + d[None, :], mask=valid[:, None] & d_ok[None, :], other=0.0)
            else:
                v = k_nope
            m_i, l_i, acc = _attend_tile(q_nope, q_pe, k_nope, k_pe, v, valid, m_i, l_i, acc, qk_scale)

    norm = kv_scale / tl.where(l_i == 0.0, 1.0, l_i)  # V = kv_scale * stored value
    o = acc * norm[:, None]
    lse2 = tl.where(l_i > 0.0, m_i + tl.log2(tl.where(l_i > 0.0, l_i, 1.0)), float("-inf"))  # no log2(0)
    if DIRECT:
        tl.store(out_ptr + req * stride_ot + heads[:, None] * stride_oh + d[None, :],
                 o.to(out_ptr.dtype.element_ty), mask=h_ok[:, None] & d_ok[None, :])
        if HAS_LSE:
            tl.store(lse_ptr + req * stride_lt + heads, lse2 / LOG2E, mask=h_ok)
    else:
        prow = (req.to(tl.int64) * num_heads + heads) * num_splits + split
        tl.store(part_o_ptr + prow[:, None] * RANK_PAD + d[None, :], o, mask=h_ok[:, None])
        tl.store(part_lse_ptr + prow, lse2, mask=h_ok)


@triton.jit
def mla_merge_kernel(
    out_ptr, lse_ptr, part_o_ptr, part_lse_ptr,
    num_heads, num_splits,
    stride_ot, stride_oh, stride_lt,
    RANK: tl.constexpr, RANK_PAD: tl.constexpr, MERGE_H: tl.constexpr, SPLIT_BLOCK: tl.constexpr,
    HAS_LSE: tl.constexpr,
):
    """Grid (head blocks, requests): combine the split partials of MERGE_H
    heads of one row by their log-sum-exp. Two passes over the splits (max,
    then weighted sum) in chunks of SPLIT_BLOCK, so any split count fits in
    registers; a chunk's partials are loaded in one go (one memory round trip
    per chunk). Empty splits carry lse = -inf and weigh 0."""
    hb = tl.program_id(0)
    req = tl.program_id(1)
    heads = hb * MERGE_H + tl.arange(0, MERGE_H)
    h_ok = heads < num_heads
    row0 = (req.to(tl.int64) * num_heads + heads) * num_splits  # [MERGE_H]
    s_off = tl.arange(0, SPLIT_BLOCK)
    d = tl.arange(0, RANK_PAD)

    m = tl.full([MERGE_H], float("-inf"), tl.float32)
    for s0 in range(0, num_splits, SPLIT_BLOCK):
        ok = h_ok[:, None] & (s0 + s_off < num_splits)[None, :]
        lse = tl.load(part_lse_ptr + row0[:, None] + s0 + s_off[None, :], mask=ok, other=float("-inf"))
        m = tl.maximum(m, tl.max(lse, 1))
    m = tl.where(m == float("-inf"), 0.0, m)  # no key at all: output 0

    total = tl.zeros([MERGE_H], tl.float32)
    acc = tl.zeros([MERGE_H, RANK_PAD], tl.float32)
    for s0 in range(0, num_splits, SPLIT_BLOCK):
        ok = h_ok[:, None] & (s0 + s_off < num_splits)[None, :]
        prow = row0[:, None] + s0 + s_off[None, :]  # [MERGE_H, SPLIT_BLOCK]
        lse = tl.load(part_lse_ptr + prow, mask=ok, other=float("-inf"))
        w = tl.exp2(lse - m[:, None])
        o = tl.load(part_o_ptr + prow[:, :, None] * RANK_PAD + d[None, None, :], mask=ok[:, :, None], other=0.0)
        acc += tl.sum(tl.where(w[:, :, None] > 0.0, o * w[:, :, None], 0.0), 1)
        total += tl.sum(w, 1)
    o = acc / tl.where(total == 0.0, 1.0, total)[:, None]
    tl.store(out_ptr + req * stride_ot + heads[:, None] * stride_oh + d[None, :], o.to(out_ptr.dtype.element_ty),
             mask=h_ok[:, None] & (d < RANK)[None, :])
    if HAS_LSE:
        lse_out = tl.where(total > 0.0, (m + tl.log2(tl.where(total > 0.0, total, 1.0))) / LOG2E, float("-inf"))
        tl.store(lse_ptr + req * stride_lt + heads, lse_out, mask=h_ok)
