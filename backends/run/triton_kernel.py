"""Our own Triton paged-attention kernel (TRITON_ATTN's run path).

One kernel serves decode, prefill and mixed batches. The host turns the
batch into a flat work list (built once per step, reused by every layer);
each program takes one work item x one KV head:

- a *query block*: ``BLOCK_Q`` consecutive new tokens of one request, times
  the ``G`` query heads that share the KV head (GQA packing): the tile has
  ``BLOCK_M = BLOCK_Q * G_PAD`` rows, so K/V are read once for all G heads;
- a *KV split*: a contiguous slice of that block's visible context. Long
  contexts with few query tokens (decode) are cut into several splits that
  run in parallel (flash-decoding); each writes an unnormalised partial
  (acc, running max, running sum). With ``FUSED_MERGE`` the split that
  finishes last (a per-block atomic counter) merges them into the output in
  the same launch; without it a second small kernel does. A small batch's
  whole step is a few microseconds, so a second launch is a large part of it.
  Blocks with one split write the final output directly.

The host also writes each item's request offsets (first token, new tokens,
cached tokens) into the work list, so a program starts its K/V loads after
one round of independent loads instead of a chain of dependent ones.

The block table is read inside the kernel: token position -> page index ->
physical page, so pages can lie anywhere in the pool. Each tile's page
numbers are read in the iteration whose K/V loads they address, so Triton's
pipeliner issues both ahead together. Sliding window, soft cap and sinks
(gpt-oss) are handled in the score path; causal alignment is bottom-right
(the new tokens are the last ones of each sequence).

- **Two key loops.** Keys at or before the block's first query position are
  visible to every row (no window): that part of the split runs without the
  causal / in-sequence mask; only the tiles past it (the diagonal, the
  split's ragged end) pay for the mask. With a sliding window every tile is
  masked.
- **fp8 cache.** vLLM stores ``x / k_scale`` (``x / v_scale``) in e4m3 or
  e5m2, with per-tensor scales. The tiles are loaded as fp8 (half the bytes)
  and the dots run in fp16: an fp8 tile widens to fp16 in one instruction per
  pair, exactly (to bf16 it takes several per element: the bf16 dots made the
  fp8 cache *slower* than a bf16 one on the H200). The query is scaled by a
  power of two into fp16's range (exact; its inverse joins the score scale);
  k_scale joins the softmax scale and v_scale the output, as vLLM's kernels
  fold them, so dequantisation costs no multiply per element. Triton widens
  the value tile only after loading it into the P.V dot's operand layout,
  one shared-memory byte load per value on sm_90 (the operand pairs
  consecutive keys, which lie a row apart); ``WIDEN_V`` widens it where it
  is loaded instead (``_widen_fp8_here``).

Only ``attn_select.backends.run.triton_attn`` imports this module.
"""

from __future__ import annotations

import triton
import triton.language as tl

from attn_select.backends.run.paged_keys import key_pages

# a constexpr global: jit code may read it (a plain float global it may not)
LOG2E = tl.constexpr(1.4426950408889634)


@triton.jit
def _tanh(x):
    # tanh through exp2 (works on GPU and in the interpreter alike)
    e = tl.exp2(x * (2.0 * 1.4426950408889634))
    return 1.0 - 2.0 / (e + 1.0)


@triton.jit
def _pow2_into_range(q, TOP: tl.constexpr):
    """(2^e, 2^-e) with the tile's largest |q| times 2^e in [2^TOP, 2^(TOP+1)):
    TOP 14 puts the query in fp16's range with its bf16 bits intact, TOP 7 in
    e4m3's (max 448) for the fp8 dots (a power of two scales exactly). From the
    float32 exponent field: no rounding of a log."""
    amax = tl.max(tl.max(tl.abs(q.to(tl.float32)), 1), 0)
    e_field = (amax.to(tl.int32, bitcast=True) >> 23) & 0xFF
    e = tl.where(e_field == 0, 0, 127 + TOP - e_field)  # an all-zero (or subnormal) query: scale 1
    e = tl.minimum(tl.maximum(e, -100), 100)
    return ((e + 127) << 23).to(tl.float32, bitcast=True), ((127 - e) << 23).to(tl.float32, bitcast=True)


@triton.jit
def _widen_fp8_here(x):
    """An fp8 tensor widened to fp16 (exact), four values an instruction pair,
    at this point of the program. The asm is declared impure, which is what
    keeps it here: Triton's layout passes move a pure widening (``.to``, or
    pure asm) past the shared-memory round trip that brings a value tile into
    the P.V dot's operand layout, and then gather that tile byte by byte
    (sm_90 has no transposing shared-memory load for 8-bit data). Widened
    first, the tile takes the 16-bit transposing load (``ldmatrix.trans``).
    ``cvt.*x2`` needs sm_89."""
    if x.dtype == tl.float8e4nv:
        asm: tl.constexpr = ("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, $2; "
                             "cvt.rn.f16x2.e4m3x2 $0, lo; cvt.rn.f16x2.e4m3x2 $1, hi; }")
    else:
        asm: tl.constexpr = ("{ .reg .b16 lo, hi; mov.b32 {lo, hi}, $2; "
                             "cvt.rn.f16x2.e5m2x2 $0, lo; cvt.rn.f16x2.e5m2x2 $1, hi; }")
    return tl.inline_asm_elementwise(asm, "=r,=r,r", [x], dtype=tl.float16, is_pure=False, pack=4)


@triton.jit
def _load_kv(k_ptr, v_ptr, bt_row, n0, n_off, end, d, dv, kvh,
             stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
             HEAD: tl.constexpr, HEAD_V: tl.constexpr, PAGE: tl.constexpr,
             k_dtype: tl.constexpr, v_dtype: tl.constexpr, BLOCK_N: tl.constexpr, PAGE_VEC: tl.constexpr,
             WIDEN_V: tl.constexpr):
    """K [BLOCK_N, HEAD_PAD] and V [BLOCK_N, HEAD_V_PAD] of the keys n0 + n_off,
    in their dots' dtypes (fp8 kept as fp8 for an fp8 dot, or widened exactly
    to fp16). Keys at or past ``end`` read as 0 (a stale page may hold NaN,
    and 0 * NaN would reach the output). ``PAGE_VEC``: the tile's pages read
    once a page or a tile (``key_pages``), not once a key. ``WIDEN_V``: an fp8
    V tile widened to fp16 where it is loaded (``_widen_fp8_here``)."""
    pos = n0 + n_off
    in_seq = pos < end
    if PAGE_VEC:
        page, in_page = key_pages(bt_row, n0, n_off, tl.maximum(end - 1, 0), PAGE, BLOCK_N)
    else:
        page = tl.load(bt_row + pos // PAGE, mask=in_seq, other=0).to(tl.int64)
        in_page = pos % PAGE
    slot_k = page * stride_kp + in_page * stride_kt + kvh * stride_kh
    slot_v = page * stride_vp + in_page * stride_vt + kvh * stride_vh
    k = tl.load(k_ptr + slot_k[:, None] + d[None, :], mask=in_seq[:, None] & (d[None, :] < HEAD), other=0.0)
    v = tl.load(v_ptr + slot_v[:, None] + dv[None, :], mask=in_seq[:, None] & (dv[None, :] < HEAD_V), other=0.0)
    if WIDEN_V and v_dtype == tl.float16 and v.dtype.is_fp8():
        v = _widen_fp8_here(v)
    return pos, k.to(k_dtype), v.to(v_dtype)


@triton.jit
def _softmax_step(q, k, v, pos, end, row_pos, m_i, l_i, acc, score_scale, soft_cap, window,
                  HAS_SOFTCAP: tl.constexpr, HAS_WINDOW: tl.constexpr, MASKED: tl.constexpr,
                  P_SCALE: tl.constexpr, P_FP8: tl.constexpr):
    """Online-softmax update of the tile's rows with one tile of keys (scores
    in the log2 domain: exp2 is the native instruction). With an fp8 P.V dot
    (P_SCALE > 1) the probabilities enter it as P_SCALE * p rounded to P_FP8,
    which keeps small ones out of e4m3's subnormals; acc carries P_SCALE."""
    s = tl.dot(q, tl.trans(k))  # [BLOCK_M, BLOCK_N], fp32
    if HAS_SOFTCAP:
        s = soft_cap * _tanh(s * (score_scale / soft_cap)) * LOG2E
    else:
        s = s * (score_scale * LOG2E)
    if MASKED:
        visible = (pos < end)[None, :] & (pos[None, :] <= row_pos[:, None])
        if HAS_WINDOW:
            visible = visible & (pos[None, :] > row_pos[:, None] - window)
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row that sees no key yet
    else:  # every key visible to every row: the maxima are finite
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = m_new
    alpha = tl.exp2(m_i - m_safe)
    p = tl.exp2(s - m_safe[:, None])
    l_i = l_i * alpha + tl.sum(p, 1)
    if P_SCALE != 1.0:
        acc = tl.dot((p * P_SCALE).to(P_FP8).to(v.dtype), v, acc * alpha[:, None])
    else:
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
    return m_new, l_i, acc


@triton.jit
def _attend_block(
    q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, counter_ptr,
    block_table_ptr, sinks_ptr, k_scale_ptr, v_scale_ptr,
    kvh, req, q_first, split, nsplit, prow0, tok0, q_len, ctx_len,
    stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
    stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
    sm_scale, soft_cap, window,
    G: tl.constexpr, G_PAD: tl.constexpr, BLOCK_Q: tl.constexpr,
    HEAD: tl.constexpr, HEAD_PAD: tl.constexpr, HEAD_V: tl.constexpr, HEAD_V_PAD: tl.constexpr,
    PAGE: tl.constexpr, BLOCK_N: tl.constexpr,
    HAS_SOFTCAP: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_SINK: tl.constexpr,
    NUM_STAGES: tl.constexpr, FP8_KV: tl.constexpr, DOT_F32: tl.constexpr, FP8_DOT: tl.constexpr,
    FUSED_MERGE: tl.constexpr, PAGE_VEC: tl.constexpr, WIDEN_V: tl.constexpr, DEAL_TILES: tl.constexpr,
):
    """One (query block, KV split, KV head): the whole attention of that tile."""
    BLOCK_M: tl.constexpr = BLOCK_Q * G_PAD

    rows = tl.arange(0, BLOCK_M)
    row_tok = q_first + rows // G_PAD  # token index within the request
    row_g = rows % G_PAD
    row_valid = (row_g < G) & (row_tok < q_len)
    row_head = kvh * G + row_g
    row_pos = ctx_len + row_tok  # absolute position of the query token

    d = tl.arange(0, HEAD_PAD)
    dv = tl.arange(0, HEAD_V_PAD)
    q_ptrs = q_ptr + (tok0 + row_tok)[:, None] * stride_qt + row_head[:, None] * stride_qh + d[None, :]
    q = tl.load(q_ptrs, mask=row_valid[:, None] & (d[None, :] < HEAD), other=0.0)
    score_scale = sm_scale
    cache_dt: tl.constexpr = k_ptr.dtype.element_ty
    # the dots' operand dtypes; under the interpreter float32 (it gets 16-bit and fp8 tl.dot wrong),
    # fed the same rounded values
    k_dt: tl.constexpr = q_ptr.dtype.element_ty
    v_dt: tl.constexpr = q_ptr.dtype.element_ty
    if FP8_KV and FP8_DOT > 0:
        # Q.K in fp8 (the query rounded to the cache's fp8, as vLLM's FA3 and XQA quantize it); P.V
        # in fp8 too with FP8_DOT 2, else in fp16
        up, down = _pow2_into_range(q, 7)
        q = (q.to(tl.float32) * up).to(cache_dt)
        k_dt = cache_dt
        v_dt = cache_dt if FP8_DOT == 2 else tl.float16
        score_scale = sm_scale * tl.load(k_scale_ptr) * down
    elif FP8_KV:
        # fp16 dots (see the module docstring): the query scaled into fp16's range
        up, down = _pow2_into_range(q, 14)
        q = (q.to(tl.float32) * up).to(tl.float16)
        k_dt = tl.float16
        v_dt = tl.float16
        score_scale = sm_scale * tl.load(k_scale_ptr) * down
    if DOT_F32:
        q = q.to(tl.float32)
        k_dt = tl.float32
        v_dt = tl.float32
    P_SCALE: tl.constexpr = 256.0 if FP8_KV and FP8_DOT == 2 else 1.0

    # Visible KV range of this block: [lo, hi), then this split's slice of it.
    last_tok = tl.minimum(q_first + BLOCK_Q, q_len) - 1
    hi = ctx_len + last_tok + 1
    lo = 0
    if HAS_WINDOW:
        lo = tl.maximum(ctx_len + q_first - window + 1, 0)
    lo = (lo // BLOCK_N) * BLOCK_N
    if DEAL_TILES:
        # the range's tiles dealt out evenly (each split the floor or ceiling of tiles / nsplit, the
        # longer ones last): the host cut a decode in fewer splits than its length in split_tokens
        # asks (triton_attn.KernelConfig.fold_tail), and equal spans would leave the last one empty
        n_tiles = tl.cdiv(hi - lo, BLOCK_N)
        start = lo + (split * n_tiles // nsplit) * BLOCK_N
        end = tl.minimum(lo + ((split + 1) * n_tiles // nsplit) * BLOCK_N, hi)
    else:
        # equal spans of whole tiles, the last split the remainder (splits of split_tokens keys)
        span = tl.cdiv(tl.cdiv(hi - lo, nsplit), BLOCK_N) * BLOCK_N
        start = lo + split * span
        end = tl.minimum(start + span, hi)
    # whole tiles every row sees in full: keys <= the block's first query position
    if HAS_WINDOW:
        full_end = start
    else:
        full_end = tl.maximum(start, start + (tl.minimum(end, ctx_len + q_first + 1) - start) // BLOCK_N * BLOCK_N)

    if HAS_SINK:
        sink = tl.load(sinks_ptr + row_head, mask=row_valid, other=float("-inf")).to(tl.float32)
        if split == 0:
            m_i = sink * 1.4426950408889634  # log2 domain
            l_i = tl.where(row_valid, 1.0, 0.0)
        else:
            m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
            l_i = tl.zeros([BLOCK_M], tl.float32)
    else:
        m_i = tl.full([BLOCK_M], float("-inf"), tl.float32)
        l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_V_PAD], tl.float32)

    n_off = tl.arange(0, BLOCK_N)
    bt_row = block_table_ptr + req * stride_bt
    for n0 in tl.range(start, full_end, BLOCK_N, num_stages=NUM_STAGES):
        pos, k, v = _load_kv(k_ptr, v_ptr, bt_row, n0, n_off, end, d, dv, kvh,
                             stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
                             HEAD, HEAD_V, PAGE, k_dt, v_dt, BLOCK_N, PAGE_VEC, WIDEN_V)
        m_i, l_i, acc = _softmax_step(q, k, v, pos, end, row_pos, m_i, l_i, acc, score_scale, soft_cap, window,
                                      HAS_SOFTCAP, HAS_WINDOW, False, P_SCALE, cache_dt)
    for n0 in tl.range(full_end, end, BLOCK_N, num_stages=NUM_STAGES):
        pos, k, v = _load_kv(k_ptr, v_ptr, bt_row, n0, n_off, end, d, dv, kvh,
                             stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
                             HEAD, HEAD_V, PAGE, k_dt, v_dt, BLOCK_N, PAGE_VEC, WIDEN_V)
        m_i, l_i, acc = _softmax_step(q, k, v, pos, end, row_pos, m_i, l_i, acc, score_scale, soft_cap, window,
                                      HAS_SOFTCAP, HAS_WINDOW, True, P_SCALE, cache_dt)
    if FP8_KV:
        # V = v_scale * stored value, and acc carries P_SCALE; the merge is linear in acc
        acc = acc * (tl.load(v_scale_ptr) / P_SCALE)

    out_tok = tok0 + row_tok
    if nsplit == 1:
        o = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
        o_ptrs = out_ptr + out_tok[:, None] * stride_ot + row_head[:, None] * stride_oh + dv[None, :]
        tl.store(o_ptrs, o.to(out_ptr.dtype.element_ty), mask=row_valid[:, None] & (dv[None, :] < HEAD_V))
    else:
        prow = prow0 + row_tok - q_first  # partial row of each token
        base = split * stride_ps + prow * stride_pt + row_head * stride_ph
        tl.store(part_acc_ptr + base[:, None] + dv[None, :], acc,
                 mask=row_valid[:, None] & (dv[None, :] < HEAD_V))
        tl.store(part_m_ptr + base // HEAD_V_PAD, m_i, mask=row_valid)
        tl.store(part_l_ptr + base // HEAD_V_PAD, l_i, mask=row_valid)
        if FUSED_MERGE:
            # every thread's partial stored before the one thread that counts it in; the count is
            # an acquire-release atomic at GPU scope, so the last split sees the others' partials
            tl.debug_barrier()
            counter = counter_ptr + prow0 * tl.num_programs(1) + kvh
            if tl.atomic_add(counter, 1, sem="acq_rel", scope="gpu") == nsplit - 1:
                _merge_in_place(out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, acc, m_i, l_i,
                                split, nsplit, prow, row_head, out_tok, row_valid, dv,
                                stride_ot, stride_oh, stride_ps, stride_pt, stride_ph, HEAD_V, HEAD_V_PAD,
                                FUSED_MERGE)
                tl.store(counter, 0)  # ready for the next launch (every layer, every graph replay)


@triton.jit
def _merge_in_place(out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, acc, m_i, l_i,
                    split, nsplit, prow, row_head, out_tok, row_valid, dv,
                    stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
                    HEAD_V: tl.constexpr, HEAD_V_PAD: tl.constexpr, CHUNK: tl.constexpr):
    """The last split of a block: its own partial (still in registers) merged
    with the other splits' into the output, ``CHUNK`` splits a step: their
    loads go out together, where merged one by one each split's load latency
    adds to the program's. The others' partials are read past L1 (``.cg``): another
    block's merge on this SM may have cached a line they share before the
    last of them was written."""
    if CHUNK == 1:  # the table's: the loop as the H200 measured it
        for s in range(0, nsplit):
            if s != split:
                base = s * stride_ps + prow * stride_pt + row_head * stride_ph
                m_s = tl.load(part_m_ptr + base // HEAD_V_PAD, mask=row_valid, other=float("-inf"),
                              cache_modifier=".cg")
                l_s = tl.load(part_l_ptr + base // HEAD_V_PAD, mask=row_valid, other=0.0, cache_modifier=".cg")
                a_s = tl.load(part_acc_ptr + base[:, None] + dv[None, :],
                              mask=row_valid[:, None] & (dv[None, :] < HEAD_V), other=0.0, cache_modifier=".cg")
                m_new = tl.maximum(m_i, m_s)
                m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row no split has a key for
                w_own = tl.exp2(m_i - m_safe)
                w_s = tl.exp2(m_s - m_safe)
                l_i = l_i * w_own + l_s * w_s
                acc = acc * w_own[:, None] + a_s * w_s[:, None]
                m_i = m_new
    else:
        c = tl.arange(0, CHUNK)
        row_off = prow * stride_pt + row_head * stride_ph  # [BLOCK_M]
        for s0 in range(0, nsplit, CHUNK):
            s = s0 + c
            take = (s < nsplit) & (s != split)
            ok = take[:, None] & row_valid[None, :]  # [CHUNK, BLOCK_M]
            base = s[:, None] * stride_ps + row_off[None, :]
            m_s = tl.load(part_m_ptr + base // HEAD_V_PAD, mask=ok, other=float("-inf"), cache_modifier=".cg")
            l_s = tl.load(part_l_ptr + base // HEAD_V_PAD, mask=ok, other=0.0, cache_modifier=".cg")
            a_s = tl.load(part_acc_ptr + base[:, :, None] + dv[None, None, :],
                          mask=ok[:, :, None] & (dv[None, None, :] < HEAD_V), other=0.0, cache_modifier=".cg")
            m_new = tl.maximum(m_i, tl.max(m_s, 0))
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row no split has a key for
            w_own = tl.exp2(m_i - m_safe)
            w_s = tl.exp2(m_s - m_safe[None, :])  # [CHUNK, BLOCK_M]; 0 for splits not taken
            l_i = l_i * w_own + tl.sum(l_s * w_s, 0)
            acc = acc * w_own[:, None] + tl.sum(a_s * w_s[:, :, None], 0)
            m_i = m_new
    o = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
    o_ptrs = out_ptr + out_tok[:, None] * stride_ot + row_head[:, None] * stride_oh + dv[None, :]
    tl.store(o_ptrs, o.to(out_ptr.dtype.element_ty), mask=row_valid[:, None] & (dv[None, :] < HEAD_V))


# the work list's row stride is its item count: specialising on it (divisible by 16, or 1) would
# compile the kernel again for batches that differ only there, and it addresses scalar loads only
@triton.jit(do_not_specialize=["stride_w"])
def paged_attention_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr,
    part_acc_ptr, part_m_ptr, part_l_ptr, counter_ptr,
    block_table_ptr, sinks_ptr, k_scale_ptr, v_scale_ptr,
    work_ptr, stride_w,  # work list [8, W] (triton_attn.plan_work's rows)
    stride_qt, stride_qh,
    stride_kp, stride_kt, stride_kh,
    stride_vp, stride_vt, stride_vh,
    stride_ot, stride_oh,
    stride_bt,
    stride_ps, stride_pt, stride_ph,  # partial acc [S, Ns, Hq, Dv] (m/l: [S, Ns, Hq], same first 3 strides / Dv)
    sm_scale, soft_cap, window,  # window: sliding window in tokens, 0 = full
    G: tl.constexpr, G_PAD: tl.constexpr,
    HEAD: tl.constexpr, HEAD_PAD: tl.constexpr, HEAD_V: tl.constexpr, HEAD_V_PAD: tl.constexpr,
    PAGE: tl.constexpr,
    HAS_SOFTCAP: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_SINK: tl.constexpr,
    # large tiles (prefill blocks); BLOCK_Q == 0: no large path compiled
    BLOCK_Q: tl.constexpr, BLOCK_N: tl.constexpr, NUM_STAGES: tl.constexpr,
    # small tiles (requests with <= SMALL_Q new tokens: decode); SMALL_Q == 0: none
    SMALL_Q: tl.constexpr, SMALL_N: tl.constexpr, SMALL_STAGES: tl.constexpr,
    FP8_KV: tl.constexpr = False,  # the cache is fp8: k_scale_ptr / v_scale_ptr hold vLLM's per-tensor scales
    DOT_F32: tl.constexpr = False,  # True only under TRITON_INTERPRET (see _attend_block)
    FP8_DOT: tl.constexpr = 0,  # fp8 cache: 0 fp16 dots, 1 Q.K in fp8, 2 Q.K and P.V in fp8
    # > 0: the last split merges, this many splits a step (counter_ptr: [partial rows, KV heads] int32, 0)
    FUSED_MERGE: tl.constexpr = 0,
    PAGE_VEC: tl.constexpr = False,  # read the block table once a page (or tile), not once a key
    WIDEN_V: tl.constexpr = False,  # fp8 cache, fp16 P.V dot: widen V where it is loaded (GPU, sm_89+)
    DEAL_TILES: tl.constexpr = False,  # splits take the range's tiles dealt out evenly (see _attend_block)
):
    """Grid (work items, KV heads). A request with at most SMALL_Q new tokens
    takes the small-tile path (few rows, long context, split-KV); the others
    the large-tile path. A batch with only one kind compiles only that path."""
    item = tl.program_id(0)
    kvh = tl.program_id(1)

    w = work_ptr + item
    req = tl.load(w)
    q_first = tl.load(w + stride_w)  # index of the block's first token within the request
    split = tl.load(w + 2 * stride_w)
    nsplit = tl.load(w + 3 * stride_w)
    prow0 = tl.load(w + 4 * stride_w)  # partial row of the block's first token (split blocks)
    tok0 = tl.load(w + 5 * stride_w)  # the request's first token in the batch
    q_len = tl.load(w + 6 * stride_w)
    ctx_len = tl.load(w + 7 * stride_w)  # cached tokens before the new ones

    if SMALL_Q == 0:
        _attend_block(
            q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, counter_ptr,
            block_table_ptr, sinks_ptr, k_scale_ptr, v_scale_ptr,
            kvh, req, q_first, split, nsplit, prow0, tok0, q_len, ctx_len,
            stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
            stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
            sm_scale, soft_cap, window,
            G, G_PAD, BLOCK_Q, HEAD, HEAD_PAD, HEAD_V, HEAD_V_PAD, PAGE, BLOCK_N,
            HAS_SOFTCAP, HAS_WINDOW, HAS_SINK, NUM_STAGES, FP8_KV, DOT_F32, FP8_DOT, FUSED_MERGE, PAGE_VEC, WIDEN_V, DEAL_TILES)
    elif BLOCK_Q == 0:
        _attend_block(
            q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, counter_ptr,
            block_table_ptr, sinks_ptr, k_scale_ptr, v_scale_ptr,
            kvh, req, q_first, split, nsplit, prow0, tok0, q_len, ctx_len,
            stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
            stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
            sm_scale, soft_cap, window,
            G, G_PAD, SMALL_Q, HEAD, HEAD_PAD, HEAD_V, HEAD_V_PAD, PAGE, SMALL_N,
            HAS_SOFTCAP, HAS_WINDOW, HAS_SINK, SMALL_STAGES, FP8_KV, DOT_F32, FP8_DOT, FUSED_MERGE, PAGE_VEC, WIDEN_V, DEAL_TILES)
    elif q_len <= SMALL_Q:  # runtime: this request is a decode
        _attend_block(
            q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, counter_ptr,
            block_table_ptr, sinks_ptr, k_scale_ptr, v_scale_ptr,
            kvh, req, q_first, split, nsplit, prow0, tok0, q_len, ctx_len,
            stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
            stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
            sm_scale, soft_cap, window,
            G, G_PAD, SMALL_Q, HEAD, HEAD_PAD, HEAD_V, HEAD_V_PAD, PAGE, SMALL_N,
            HAS_SOFTCAP, HAS_WINDOW, HAS_SINK, SMALL_STAGES, FP8_KV, DOT_F32, FP8_DOT, FUSED_MERGE, PAGE_VEC, WIDEN_V, DEAL_TILES)
    else:
        _attend_block(
            q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr, counter_ptr,
            block_table_ptr, sinks_ptr, k_scale_ptr, v_scale_ptr,
            kvh, req, q_first, split, nsplit, prow0, tok0, q_len, ctx_len,
            stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
            stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
            sm_scale, soft_cap, window,
            G, G_PAD, BLOCK_Q, HEAD, HEAD_PAD, HEAD_V, HEAD_V_PAD, PAGE, BLOCK_N,
            HAS_SOFTCAP, HAS_WINDOW, HAS_SINK, NUM_STAGES, FP8_KV, DOT_F32, FP8_DOT, FUSED_MERGE, PAGE_VEC, WIDEN_V, DEAL_TILES)


@triton.jit
def merge_splits_kernel(
    out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr,
    red_token_ptr, red_nsplit_ptr,
    stride_ot, stride_oh, stride_ps, stride_pt, stride_ph,
    HEAD_V: tl.constexpr, HEAD_V_PAD: tl.constexpr, SPLIT_PAD: tl.constexpr,
):
    """Merge the per-split partials of one (token, query head) into the output."""
    prow = tl.program_id(0)
    h = tl.program_id(1)
    tok = tl.load(red_token_ptr + prow)
    n = tl.load(red_nsplit_ptr + prow)
    s = tl.arange(0, SPLIT_PAD)
    dv = tl.arange(0, HEAD_V_PAD)
    base = s * stride_ps + prow * stride_pt + h * stride_ph
    m = tl.load(part_m_ptr + base // HEAD_V_PAD, mask=s < n, other=float("-inf"))
    l = tl.load(part_l_ptr + base // HEAD_V_PAD, mask=s < n, other=0.0)
    acc = tl.load(part_acc_ptr + base[:, None] + dv[None, :], mask=(s < n)[:, None] & (dv[None, :] < HEAD_V),
                  other=0.0)
    m_all = tl.max(m, 0)
    m_all = tl.where(m_all == float("-inf"), 0.0, m_all)
    w = tl.exp2(m - m_all)
    l_all = tl.sum(l * w, 0)
    o = tl.sum(acc * w[:, None], 0) / tl.where(l_all == 0.0, 1.0, l_all)
    tl.store(out_ptr + tok * stride_ot + h * stride_oh + dv, o.to(out_ptr.dtype.element_ty), mask=dv < HEAD_V)
