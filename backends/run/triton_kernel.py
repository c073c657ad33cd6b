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
  (acc, running max, running sum) and a second small kernel merges them.
  Blocks with one split write the final output directly.

The block table is read inside the kernel: token position -> page index ->
physical page, so pages can lie anywhere in the pool. Sliding window, soft
cap and sinks (gpt-oss) are handled in the score path; causal alignment is
bottom-right (the new tokens are the last ones of each sequence).

Only ``attn_select.backends.run.triton_attn`` imports this module.
"""

from __future__ import annotations

import triton
import triton.language as tl

LOG2E = 1.4426950408889634


@triton.jit
def _tanh(x):
    # tanh through exp2 (works on GPU and in the interpreter alike)
    e = tl.exp2(x * (2.0 * 1.4426950408889634))
    return 1.0 - 2.0 / (e + 1.0)


@triton.jit
def _attend_block(
    q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr,
    block_table_ptr, sinks_ptr, work_part_ptr,
    item, kvh, req, q_first, split, nsplit, tok0, q_len, ctx_len,
    stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
    stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
    sm_scale, soft_cap, window,
    G: tl.constexpr, G_PAD: tl.constexpr, BLOCK_Q: tl.constexpr,
    HEAD: tl.constexpr, HEAD_PAD: tl.constexpr, HEAD_V: tl.constexpr, HEAD_V_PAD: tl.constexpr,
    PAGE: tl.constexpr, BLOCK_N: tl.constexpr,
    HAS_SOFTCAP: tl.constexpr, HAS_WINDOW: tl.constexpr, HAS_SINK: tl.constexpr,
    NUM_STAGES: tl.constexpr, DOT_F32: tl.constexpr,
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
    if DOT_F32:  # the CPU interpreter gets 16-bit tl.dot wrong: compute the dots in float32 there
        q = q.to(tl.float32)

    # Visible KV range of this block: [lo, hi), then this split's slice of it.
    last_tok = tl.minimum(q_first + BLOCK_Q, q_len) - 1
    hi = ctx_len + last_tok + 1
    lo = 0
    if HAS_WINDOW:
        lo = tl.maximum(ctx_len + q_first - window + 1, 0)
    lo = (lo // BLOCK_N) * BLOCK_N
    span = tl.cdiv(tl.cdiv(hi - lo, nsplit), BLOCK_N) * BLOCK_N
    start = lo + split * span
    end = tl.minimum(start + span, hi)

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

    qk_scale = sm_scale * 1.4426950408889634
    n_off = tl.arange(0, BLOCK_N)
    bt_row = block_table_ptr + req * stride_bt
    for n0 in tl.range(start, end, BLOCK_N, num_stages=NUM_STAGES):
        pos = n0 + n_off
        in_seq = pos < end
        page = tl.load(bt_row + pos // PAGE, mask=in_seq, other=0).to(tl.int64)
        slot_k = page * stride_kp + (pos % PAGE) * stride_kt + kvh * stride_kh
        slot_v = page * stride_vp + (pos % PAGE) * stride_vt + kvh * stride_vh
        k = tl.load(k_ptr + slot_k[:, None] + d[None, :],
                    mask=in_seq[:, None] & (d[None, :] < HEAD), other=0.0).to(q.dtype)
        v = tl.load(v_ptr + slot_v[:, None] + dv[None, :],
                    mask=in_seq[:, None] & (dv[None, :] < HEAD_V), other=0.0).to(q.dtype)
        s = tl.dot(q, tl.trans(k))  # [BLOCK_M, BLOCK_N], fp32
        if HAS_SOFTCAP:
            s = soft_cap * _tanh(s * (sm_scale / soft_cap)) * 1.4426950408889634
        else:
            s = s * qk_scale
        visible = in_seq[None, :] & (pos[None, :] <= row_pos[:, None])
        if HAS_WINDOW:
            visible = visible & (pos[None, :] > row_pos[:, None] - window)
        s = tl.where(visible, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, 1))
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp2(m_i - m_safe)
        p = tl.exp2(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, 1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v)
        m_i = m_new

    out_tok = tok0 + row_tok
    if nsplit == 1:
        o = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
        o_ptrs = out_ptr + out_tok[:, None] * stride_ot + row_head[:, None] * stride_oh + dv[None, :]
        tl.store(o_ptrs, o.to(out_ptr.dtype.element_ty), mask=row_valid[:, None] & (dv[None, :] < HEAD_V))
    else:
        prow = tl.load(work_part_ptr + item) + row_tok - q_first  # partial row of each token
        base = split * stride_ps + prow * stride_pt + row_head * stride_ph
        tl.store(part_acc_ptr + base[:, None] + dv[None, :], acc,
                 mask=row_valid[:, None] & (dv[None, :] < HEAD_V))
        ml = (split * stride_ps + prow * stride_pt + row_head * stride_ph) // HEAD_V_PAD
        tl.store(part_m_ptr + ml, m_i, mask=row_valid)
        tl.store(part_l_ptr + ml, l_i, mask=row_valid)




@triton.jit
def paged_attention_kernel(
    q_ptr, k_ptr, v_ptr, out_ptr,
    part_acc_ptr, part_m_ptr, part_l_ptr,
    block_table_ptr, seq_lens_ptr, query_start_ptr, sinks_ptr,
    work_req_ptr, work_qstart_ptr, work_split_ptr, work_nsplit_ptr, work_part_ptr,
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
    DOT_F32: tl.constexpr = False,  # True only under TRITON_INTERPRET (see _attend_block)
):
    """Grid (work items, KV heads). A request with at most SMALL_Q new tokens
    takes the small-tile path (few rows, long context, split-KV); the others
    the large-tile path. A batch with only one kind compiles only that path."""
    item = tl.program_id(0)
    kvh = tl.program_id(1)

    req = tl.load(work_req_ptr + item)
    q_first = tl.load(work_qstart_ptr + item)  # index of the block's first token within the request
    split = tl.load(work_split_ptr + item)
    nsplit = tl.load(work_nsplit_ptr + item)

    tok0 = tl.load(query_start_ptr + req)
    q_len = tl.load(query_start_ptr + req + 1) - tok0
    seq_len = tl.load(seq_lens_ptr + req)
    ctx_len = seq_len - q_len  # cached tokens before the new ones

    if SMALL_Q == 0:
        _attend_block(
            q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr,
            block_table_ptr, sinks_ptr, work_part_ptr,
            item, kvh, req, q_first, split, nsplit, tok0, q_len, ctx_len,
            stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
            stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
            sm_scale, soft_cap, window,
            G, G_PAD, BLOCK_Q, HEAD, HEAD_PAD, HEAD_V, HEAD_V_PAD, PAGE, BLOCK_N,
            HAS_SOFTCAP, HAS_WINDOW, HAS_SINK, NUM_STAGES, DOT_F32)
    elif BLOCK_Q == 0:
        _attend_block(
            q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr,
            block_table_ptr, sinks_ptr, work_part_ptr,
            item, kvh, req, q_first, split, nsplit, tok0, q_len, ctx_len,
            stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
            stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
            sm_scale, soft_cap, window,
            G, G_PAD, SMALL_Q, HEAD, HEAD_PAD, HEAD_V, HEAD_V_PAD, PAGE, SMALL_N,
            HAS_SOFTCAP, HAS_WINDOW, HAS_SINK, SMALL_STAGES, DOT_F32)
    elif q_len <= SMALL_Q:  # runtime: this request is a decode
        _attend_block(
            q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr,
            block_table_ptr, sinks_ptr, work_part_ptr,
            item, kvh, req, q_first, split, nsplit, tok0, q_len, ctx_len,
            stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
            stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
            sm_scale, soft_cap, window,
            G, G_PAD, SMALL_Q, HEAD, HEAD_PAD, HEAD_V, HEAD_V_PAD, PAGE, SMALL_N,
            HAS_SOFTCAP, HAS_WINDOW, HAS_SINK, SMALL_STAGES, DOT_F32)
    else:
        _attend_block(
            q_ptr, k_ptr, v_ptr, out_ptr, part_acc_ptr, part_m_ptr, part_l_ptr,
            block_table_ptr, sinks_ptr, work_part_ptr,
            item, kvh, req, q_first, split, nsplit, tok0, q_len, ctx_len,
            stride_qt, stride_qh, stride_kp, stride_kt, stride_kh, stride_vp, stride_vt, stride_vh,
            stride_ot, stride_oh, stride_bt, stride_ps, stride_pt, stride_ph,
            sm_scale, soft_cap, window,
            G, G_PAD, BLOCK_Q, HEAD, HEAD_PAD, HEAD_V, HEAD_V_PAD, PAGE, BLOCK_N,
            HAS_SOFTCAP, HAS_WINDOW, HAS_SINK, NUM_STAGES, DOT_F32)


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
