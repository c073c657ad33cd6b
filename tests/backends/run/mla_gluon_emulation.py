"""A plain-torch emulation of ``mla_gluon.mla_gluon_decode_kernel``'s schedule,
step for step, with the launcher's call signature (``mla_gluon.launch``), so
the CPU tests can put it in the launcher's place and run the adapter's real
build, split and merge path around it (Gluon has no interpreter).

What it reproduces, as the kernel does it:
- the split bounds (tiles per split, an empty split's one all-masked tile);
- the TMA ring: ``stages`` buffers, each holding the tile last issued into
  it, the prologue's ``stages`` copies, the refill of buffer ``j % stages``
  with tile ``j + stages`` after tile j's output dot, the mbarrier phase
  each wait expects (checked against the buffer's completion count);
- the copies per tile: ``block_n / min(page, block_n)`` row copies, each
  page looked up with the key clamped to the request's last key;
- the value rows of keys past the split's end zeroed in the landed tile;
- two warpgroups: warpgroup w scores keys [w * block_n / 2, (w + 1) *
  block_n / 2) of the tile, the row maximum is taken over both, each keeps
  its own partial row sums, P is rounded to the cache dtype in one shared
  tile, and warpgroup w accumulates output dims [w * rank / 2, (w + 1) *
  rank / 2) over all the tile's keys;
- ``overlap``: tile j+1's softmax before tile j's output dot has landed,
  the accumulator rescaled after it; without it, one tile at a time;
- the epilogue: lse in log2, partials [B, H, splits, rank] or the output.
"""

from __future__ import annotations

import torch

LOG2E = 1.4426950408889634


class _Ring:
    """The shared key buffers and their mbarriers' completion counts."""

    def __init__(self, stages: int):
        self.tile = [None] * stages
        self.data = [None] * stages
        self.completions = [0] * stages

    def issue(self, b: int, tile: int, data: torch.Tensor, pred: bool) -> None:
        if pred:
            self.tile[b], self.data[b] = tile, data.clone()
            self.completions[b] += 1

    def wait(self, b: int, phase: int, want_tile: int) -> torch.Tensor:
        # mbarrier.wait(bar, phase) returns once the phase with that parity completed:
        # the buffer's completion count must be odd for phase 0, even (>0) for phase 1
        assert self.completions[b] >= 1 and (self.completions[b] - 1) % 2 == phase, (b, phase, self.completions)
        assert self.tile[b] == want_tile, f"buffer {b} holds tile {self.tile[b]}, the kernel reads {want_tile}"
        return self.data[b]


def _load_tile(c2, bt_row, tile: int, last_key: int, page: int, block_n: int) -> torch.Tensor:
    rows = min(page, block_n)
    parts = []
    for i in range(block_n // rows):
        key = tile * block_n + i * rows
        pg = int(bt_row[min(key, last_key) // page])
        row = pg * page + key % page
        # TMA: rows past the tensor read as zero
        chunk = torch.zeros(rows, c2.shape[1], dtype=c2.dtype)
        lo, hi = max(row, 0), min(row + rows, c2.shape[0])
        if hi > lo:
            chunk[lo - row:hi - row] = c2[lo:hi]
        parts.append(chunk)
    return torch.cat(parts)


def _program(q_rows, c2, bt_row, seq_len, split, num_splits, qk_scale, page, rank, tiles, p_dtype):
    """One program: (o [64, rank], lse2 [64]) for 64 heads of one request over one split."""
    bn, stages = tiles.block_n, tiles.stages
    n_all = -(-seq_len // bn)
    per = -(-n_all // num_splits)
    t_begin = split * per
    t_stop = min(t_begin + per, n_all)
    end = min(t_stop * bn, seq_len)
    n = max(t_stop - t_begin, 1)
    last_key = max(seq_len - 1, 0)
    q = q_rows.float()
    ring = _Ring(stages)
    for i in range(stages):
        ring.issue(i, t_begin + i, _load_tile(c2, bt_row, t_begin + i, last_key, page, bn), i < n)

    half_n, half_d = bn // 2, rank // 2
    h = q.shape[0]
    m_i = torch.full((h,), float("-inf"))
    l_acc = [torch.zeros(h, half_n), torch.zeros(h, half_n)]  # per warpgroup
    acc = [torch.zeros(h, half_d), torch.zeros(h, half_d)]

    def landed(j):
        b = j % stages
        kv = ring.wait(b, (j // stages) & 1, t_begin + j)
        t0 = (t_begin + j) * bn
        if t0 + bn > end:  # _zero_tail, in the buffer itself
            kv[~((t0 + torch.arange(bn)) < end), :rank] = 0
        return kv

    def softmax(kv, j, m_i, l_acc):
        t0 = (t_begin + j) * bn
        s_wg = []
        for w in range(2):  # each warpgroup scores its half of the tile's keys
            keys = kv[w * half_n:(w + 1) * half_n].float()
            s = q @ keys.T * qk_scale
            valid = (t0 + w * half_n + torch.arange(half_n)) < end
            s_wg.append(torch.where(valid[None, :], s, float("-inf")))
        m_new = torch.maximum(m_i, torch.maximum(s_wg[0].amax(1), s_wg[1].amax(1)))  # exchanged
        m_use = torch.where(m_new == float("-inf"), 0.0, m_new)
        alpha = torch.exp2(m_i - m_use)
        p_wg = [torch.exp2(s - m_use[:, None]) for s in s_wg]
        l_acc = [la * alpha[:, None] + pw for la, pw in zip(l_acc, p_wg)]
        p_shared = torch.cat(p_wg, 1).to(p_dtype).float()  # the one P tile both warpgroups read
        return m_new, alpha, p_shared, l_acc

    if tiles.overlap:
        kv = landed(0)
        m_i, _, p_s, l_acc = softmax(kv, 0, m_i, l_acc)
        for j in range(n - 1):
            kv_next = landed(j + 1)
            # issued: S_{j+1}, then PV_j (reads P_j and tile j's buffer)
            v = ring.data[j % stages]  # not refilled before this output dot is done
            pv = [p_s @ v[:, w * half_d:(w + 1) * half_d].float() for w in range(2)]
            m_i, alpha, p_next, l_acc = softmax(kv_next, j + 1, m_i, l_acc)
            acc = [a + x for a, x in zip(acc, pv)]  # PV_j lands on the un-rescaled accumulator
            b = j % stages
            ring.issue(b, t_begin + j + stages, _load_tile(c2, bt_row, t_begin + j + stages, last_key, page, bn),
                       j + stages < n)
            acc = [a * alpha[:, None] for a in acc]
            p_s = p_next
        v = landed(n - 1)
        acc = [a + p_s @ v[:, w * half_d:(w + 1) * half_d].float() for w, a in enumerate(acc)]
    else:  # one tile at a time: rescale, P_j, O += P_j V_j, refill buffer j
        for j in range(n):
            kv = landed(j)
            m_i, alpha, p_s, l_acc = softmax(kv, j, m_i, l_acc)
            acc = [a * alpha[:, None] + p_s @ kv[:, w * half_d:(w + 1) * half_d].float() for w, a in enumerate(acc)]
            ring.issue(j % stages, t_begin + j + stages,
                       _load_tile(c2, bt_row, t_begin + j + stages, last_key, page, bn), j + stages < n)
    l_i = l_acc[0].sum(1) + l_acc[1].sum(1)
    lse2 = torch.where(l_i > 0, m_i + torch.log2(torch.where(l_i > 0, l_i, 1.0)), float("-inf"))
    o = torch.cat(acc, 1) / torch.where(l_i == 0, 1.0, l_i)[:, None]
    return o, lse2


def emulate_launch(q, lat, out, lse, part_o, part_lse, block_table, seq_lens, num_heads: int, num_splits: int,
                   sm_scale: float, page: int, rank: int, tiles, p_dtype=None) -> None:
    """``mla_gluon.launch``'s contract, computed by the schedule above.
    ``p_dtype``: P's dtype in shared memory (the cache's by default, as the
    kernel; float32 makes the emulation exact up to summation order)."""
    t, h, d = q.shape
    assert h % tiles.block_h == 0
    c2 = lat.reshape(-1, d)
    p_dtype = p_dtype or lat.dtype
    qk_scale = sm_scale * LOG2E
    for req in range(t):
        seq_len = int(seq_lens[req])
        for hg in range(h // tiles.block_h):
            rows = slice(hg * tiles.block_h, (hg + 1) * tiles.block_h)
            for split in range(num_splits):
                o, lse2 = _program(q[req, rows], c2, block_table[req], seq_len, split, num_splits, qk_scale, page,
                                   rank, tiles, p_dtype)
                if num_splits == 1:
                    out[req, rows] = o.to(out.dtype)
                    if lse is not None:
                        lse[req, rows] = lse2 / LOG2E
                else:
                    part_o[req, rows, split] = o
                    part_lse[req, rows, split] = lse2


__all__ = ["emulate_launch"]
