"""A plain-torch emulation of ``attn_gluon.attn_gluon_prefill_kernel``'s
schedule, step for step, with the launcher's call signature
(``attn_gluon.launch``), so the CPU tests can put it in the launcher's place
and run the adapter's real build (``plan_work``'s work list), split and merge
path around it (Gluon has no interpreter).

What it reproduces, as the kernel does it:
- the work item's visible key range (``_visible_range``): tiles from 0, the
  split's [start, end), the unmasked tiles before ``full_end``; it asserts
  that every valid row of the block sees every key of an unmasked tile (the
  kernel skips the mask there) and that the masked tiles start there;
- the query tile: row r = token r // G_PAD, head r % G_PAD of the KV head,
  rows past the request's tokens or the group zero;
- the TMA ring: ``stages`` K and V buffers with their own mbarriers, the
  boxes of ``min(page, block_n)`` rows a tile, each box's page read from the
  block table with the key clamped to the request's last, the row
  ``page * 2 page + slot`` (V: ``+ page``) of the [pages * 2 * page,
  Hkv * D] view; each wait checks the barrier's completion count against
  the phase the kernel expects and that the buffer holds the tile it reads;
  without a producer warp the prologue's ``stages`` copies and the refill
  after each release, with one the producer's wait on ``empty`` (a fresh
  barrier passing the wait on the phase before its first);
- the value rows of keys past the request's last zeroed in the landed tile
  (asserted to happen only in the split's last tile, where the overlapped
  loop does it);
- two warpgroups (one for 64-row tiles), each owning 64 rows with its own
  running max / sum / accumulator; P rounded to the cache dtype;
- ``overlap``: tile j+1's softmax before tile j's P V has landed, the
  accumulator rescaled after it; without it, one tile at a time;
- ``pingpong``: the two warpgroups as partitions of their own, each
  releasing a buffer (the producer waits for both), taking turns at the
  dots: each step, half 0 waits on its turn barrier, issues, hands the turn
  to half 1, which waits, issues and hands it back; each wait is checked
  against the completions the other half has made (the halves run in that
  order here, which is the order the barriers force);
- the epilogue: the output, or the partial (acc, max in log2, sum) where
  the ``tl`` merge kernel reads it.
"""

from __future__ import annotations

import torch

LOG2E = 1.4426950408889634


class _Barrier:
    def __init__(self):
        self.completions = 0

    def passes(self, phase: int) -> bool:
        # mbarrier.try_wait.parity(phase): true once the phase of that parity has completed,
        # i.e. while the current phase's parity (completions % 2) differs from it
        return self.completions % 2 != phase


class _Ring:
    """K and V buffers, their ready barriers and the consumers' empty barriers."""

    def __init__(self, stages: int):
        self.k = [None] * stages
        self.v = [None] * stages
        self.tile = [None] * stages
        self.k_ready = [_Barrier() for _ in range(stages)]
        self.v_ready = [_Barrier() for _ in range(stages)]
        self.empty = [_Barrier() for _ in range(stages)]

    def issue(self, b: int, tile: int, kv: tuple[torch.Tensor, torch.Tensor], pred: bool) -> None:
        if pred:
            self.tile[b] = tile
            self.k[b], self.v[b] = kv[0].clone(), kv[1].clone()
            self.k_ready[b].completions += 1
            self.v_ready[b].completions += 1

    def wait(self, bar: _Barrier, phase: int, b: int, want_tile: int) -> None:
        assert bar.passes(phase), f"buffer {b}: wait on phase {phase} would block ({bar.completions} completions)"
        assert self.tile[b] == want_tile, f"buffer {b} holds tile {self.tile[b]}, the kernel reads {want_tile}"


def _boxes(c2, bt_row, t0: int, last_key: int, page: int, block_n: int, col: int, head: int):
    """K and V [block_n, head] of the keys [t0, t0 + block_n) as the kernel's TMA boxes land."""
    rows = min(page, block_n)
    ks, vs = [], []
    for i in range(block_n // rows):
        key = t0 + i * rows
        pg = int(bt_row[min(key, last_key) // page])
        row = pg * 2 * page + key % page
        assert key % page + rows <= page, "a box must stay in its page"
        ks.append(c2[row:row + rows, col:col + head])
        vs.append(c2[row + page:row + page + rows, col:col + head])
    return torch.cat(ks), torch.cat(vs)


def visible_range(q_first: int, q_len: int, ctx_len: int, split: int, nsplit: int, block_q: int, block_n: int):
    last_tok = min(q_first + block_q, q_len) - 1
    hi = ctx_len + last_tok + 1
    span = -(-(-(-hi // nsplit)) // block_n) * block_n
    start = split * span
    end = min(start + span, hi)
    full_end = max(start, start + (min(end, ctx_len + q_first + 1) - start) // block_n * block_n)
    return start, end, full_end


def _program(q, c2, block_table, work_col, kvh, group, g_pad, block_q, qk_scale, page, head, tiles, p_dtype):
    req, q_first, split, nsplit, prow0, tok0, q_len, ctx_len = (int(x) for x in work_col)
    bm, bn, stages = tiles.block_m, tiles.block_n, tiles.stages
    assert bm == block_q * g_pad
    start, end, full_end = visible_range(q_first, q_len, ctx_len, split, nsplit, block_q, bn)
    n = max(-(-(end - start) // bn), 0)
    n_full = (full_end - start) // bn
    kv_len = ctx_len + q_len
    last_key = max(kv_len - 1, 0)
    col = kvh * head
    bt_row = block_table[req]

    rows = torch.arange(bm)
    row_tok = q_first + rows // g_pad
    row_g = rows % g_pad
    row_valid = (row_g < group) & (row_tok < q_len)
    row_pos = ctx_len + row_tok
    q_tile = torch.zeros(bm, head, dtype=q.dtype)
    q_tile[row_valid] = q[tok0 + row_tok[row_valid], kvh * group + row_g[row_valid]]
    q_tile = q_tile.float()

    ring = _Ring(stages)
    produced = [0]  # the producer warp's next tile

    def load(j):
        return _boxes(c2, bt_row, start + j * bn, last_key, page, bn, col, head)

    def pump():  # the producer warp issues every tile whose buffer is free
        while produced[0] < n:
            j = produced[0]
            b = j % stages
            if not ring.empty[b].passes(((j // stages) & 1) ^ 1):
                return
            ring.issue(b, j, load(j), True)
            produced[0] += 1

    if tiles.warp_spec:
        pump()
    else:
        for i in range(stages):
            ring.issue(i, i, load(i) if i < n else (None, None), i < n)

    def release(j):
        b = j % stages
        if tiles.warp_spec:
            ring.empty[b].completions += 1
            pump()
        else:
            ring.issue(b, j + stages, load(j + stages) if j + stages < n else (None, None), j + stages < n)

    def zero_stale(j):
        b = j % stages
        t0 = start + j * bn
        if t0 + bn > kv_len:
            assert j == n - 1, "stale value rows outside the split's last tile"
            ring.v[b][~((t0 + torch.arange(bn)) < kv_len)] = 0

    wgs = [slice(w * 64, (w + 1) * 64) for w in range(bm // 64)]
    m_i = [torch.full((64,), float("-inf")) for _ in wgs]
    l_i = [torch.zeros(64) for _ in wgs]
    acc = [torch.zeros(64, head) for _ in wgs]

    def scores(j):
        b = j % stages
        ring.wait(ring.k_ready[b], (j // stages) & 1, b, j)
        k = ring.k[b].float()
        return [q_tile[r] @ k.T for r in wgs]

    def softmax(s_wg, j, m_i, l_i):
        t0 = start + j * bn
        pos = t0 + torch.arange(bn)
        visible = (pos < end)[None, :] & (pos[None, :] <= row_pos[:, None])
        masked = j >= n_full
        if not masked:
            assert bool(visible[row_valid].all()), "an unmasked tile with a key some row must not see"
        out = []
        for w, r in enumerate(wgs):
            s = s_wg[w] * qk_scale
            if masked:
                s = torch.where(visible[r], s, float("-inf"))
            m_new = torch.maximum(m_i[w], s.amax(1))
            m_use = torch.where(m_new == float("-inf"), 0.0, m_new)
            alpha = torch.exp2(m_i[w] - m_use)
            p = torch.exp2(s - m_use[:, None])
            out.append((m_new, l_i[w] * alpha + p.sum(1), p.to(p_dtype).float(), alpha))
        return [o[0] for o in out], [o[1] for o in out], [o[2] for o in out], [o[3] for o in out]

    def values(j):
        b = j % stages
        ring.wait(ring.v_ready[b], (j // stages) & 1, b, j)
        return ring.v[b].float()

    turn = [_Barrier(), _Barrier()]  # ping-pong: half w waits on turn[w], the other half completes it

    def take_turns(j):
        for me in (0, 1):
            assert turn[me].passes((j & 1) ^ (1 - me)), f"half {me} would wait forever for its turn at step {j}"
            turn[1 - me].completions += 1  # after issuing its dots

    if tiles.overlap:
        if n > 0:
            m_i, l_i, p, _ = softmax(scores(0), 0, m_i, l_i)
            for j in range(n - 1):
                if tiles.pingpong:
                    take_turns(j)
                s_next = scores(j + 1)  # issued before this tile's P V
                v = values(j)
                pv = [p[w] @ v for w in range(len(wgs))]
                m_i, l_i, p, alpha = softmax(s_next, j + 1, m_i, l_i)
                acc = [a + x for a, x in zip(acc, pv)]  # P_j V_j lands on the un-rescaled accumulator
                release(j)
                acc = [a * al[:, None] for a, al in zip(acc, alpha)]
            zero_stale(n - 1)
            v = values(n - 1)
            acc = [a + p[w] @ v for w, a in enumerate(acc)]
            release(n - 1)
    else:
        for j in range(n):
            m_i, l_i, p, alpha = softmax(scores(j), j, m_i, l_i)
            acc = [a * al[:, None] for a, al in zip(acc, alpha)]
            zero_stale(j)
            v = values(j)
            acc = [a + p[w] @ v for w, a in enumerate(acc)]
            release(j)
    assert produced[0] == n or not tiles.warp_spec
    return torch.cat(m_i), torch.cat(l_i), torch.cat(acc), rows, row_tok, row_g, row_valid, (
        q_first, split, nsplit, prow0, tok0)


def emulate_launch(q, cache, out, part_acc, part_m, part_l, block_table, work, num_items: int, num_kv_heads: int,
                   group: int, g_pad: int, block_q: int, sm_scale: float, page: int, tiles, p_dtype=None) -> None:
    """``attn_gluon.launch``'s contract, computed by the schedule above.
    ``p_dtype``: P's dtype in the P V dot (the cache's by default, as the
    kernel; float32 makes the emulation exact up to summation order)."""
    head = q.shape[-1]
    if block_q * g_pad != tiles.block_m:
        raise ValueError(f"{block_q} tokens x {g_pad} heads is not the tiles' {tiles.block_m} rows")
    if tiles.pingpong and block_q % 2:
        raise ValueError(f"ping-pong halves split the block's tokens: {block_q} token(s) a block do not halve")
    assert cache.is_contiguous()
    c2 = cache.view(cache.shape[0] * 2 * page, cache.shape[3] * cache.shape[4])
    p_dtype = p_dtype or cache.dtype
    qk_scale = sm_scale * LOG2E
    bt = block_table.cpu()
    w = work.cpu()
    for item in range(num_items):
        for kvh in range(num_kv_heads):
            m, l, acc, rows, row_tok, row_g, ok, (q_first, split, nsplit, prow0, tok0) = _program(
                q, c2, bt, w[:, item], kvh, group, g_pad, block_q, qk_scale, page, head, tiles, p_dtype)
            heads = kvh * group + row_g[ok]
            if nsplit == 1:
                o = acc / torch.where(l == 0, 1.0, l)[:, None]
                out[tok0 + row_tok[ok], heads] = o[ok].to(out.dtype)
            else:
                prow = prow0 + row_tok[ok] - q_first
                part_acc[split, prow, heads, :head] = acc[ok]
                part_m[split, prow, heads] = m[ok]
                part_l[split, prow, heads] = l[ok]


__all__ = ["emulate_launch", "visible_range"]
