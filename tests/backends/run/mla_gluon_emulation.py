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

And of ``mla_gluon_ws`` (``tiles.schedule`` "ws", or "wsc": late halves in
4 chunk copies with a barrier each), its two warpgroups as
coroutines run in an order a seeded scheduler picks among the legal ones,
with the TMA copies landing at random points between: pairs of 64-key
blocks, warpgroup 0's max m0 and factor c0 handed to warpgroup 1 and its
m1, c1 back (through the shared vectors, as the kernel), P0 rounded,
rescaled by c1 and rounded again, each P written into its block's rope
slot and read from there by the other warpgroup, the split-V accumulation
(dims 0-255 by warpgroup 0 over both blocks, 256-511 by warpgroup 1), each
warpgroup's own row sum added at the end; the value halves and rope slots
refilled by the warpgroup and at the point the kernel does. Every read
checks the slot holds the block (or the P of the step) it must, at a dot's
issue and again at its wait; every mbarrier wait checks its barrier has
not run a phase ahead; a state where no warpgroup can move and no copy is
in flight fails as a deadlock.
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


class _WsShared:
    """The warp-specialised kernel's shared state, each slot tagged with what
    it holds: the value halves ``kv[2 * buffer + half]`` (a block number for
    each 64-dim quarter: a late half lands chunk by chunk), the rope slots
    ``rp[buffer]`` (("rope", block) or ("P", warpgroup, pair)), the exchanged
    vectors, the mbarriers' completion counts (``own<b>``: buffer b's own
    half; ``late<b * lc + c>``: chunk c of its late half), and the TMA copies
    in flight (they land when the scheduler says)."""

    def __init__(self, c2, bt_row, last_key, page, rank, lc: int = 1):
        self.c2, self.bt_row, self.last_key, self.page, self.hd = c2, bt_row, last_key, page, rank // 2
        self.lc = lc
        self.kv = [[None] * 4 for _ in range(4)]  # the block each 64-dim quarter of a half holds
        self.kv_data = [torch.zeros(64, rank // 2, dtype=c2.dtype) for _ in range(4)]
        self.rp = [None] * 2
        self.bars = {f"own{b}": 0 for b in range(2)}  # completed phases
        self.bars.update({f"late{i}": 0 for i in range(2 * lc)})
        self.bars.update(c0=0, c1=0, p0=0, p1=0, l=0)
        self.count = dict(l=2)  # arrivals a phase (1 for the others)
        self.arrivals = {}
        self.vec = {}
        self.inflight = []  # (slot, block, first quarter, quarters, rope slot or None, barrier)

    def issue_own(self, b: int, block: int, pred: bool) -> None:
        """Buffer b's own half (h = b: slot 3 * b), one copy, no rope."""
        if pred:
            self.inflight.append((3 * b, block, 0, 4, None, f"own{b}"))

    def issue_late(self, b: int, block: int, pred: bool) -> None:
        """Buffer b's late half (h = 1 - b: slot 2 * b + 1 - b) in ``lc`` chunks, the rope with chunk 0."""
        if pred:
            q = 4 // self.lc
            for c in range(self.lc):
                self.inflight.append((b + 1, block, c * q, q, b if c == 0 else None, f"late{b * self.lc + c}"))

    def land(self, i: int) -> None:
        slot, block, first, quarters, rope, bar = self.inflight.pop(i)
        tile = _load_tile(self.c2, self.bt_row, block, self.last_key, self.page, 64)
        h = slot % 2
        lo, hi = first * self.hd // 4, (first + quarters) * self.hd // 4
        self.kv_data[slot][:, lo:hi] = tile[:, h * self.hd + lo:h * self.hd + hi]
        for j in range(first, first + quarters):
            self.kv[slot][j] = block
        if rope is not None:
            self.rp[rope] = (("rope", block), tile[:, 2 * self.hd:].clone())
        self.bars[bar] += 1

    def arrive(self, bar: str) -> None:
        self.arrivals[bar] = self.arrivals.get(bar, 0) + 1
        if self.arrivals[bar] == self.count.get(bar, 1):
            self.arrivals[bar] = 0
            self.bars[bar] += 1

    def ready(self, bar: str, phase: int, want: int) -> bool:
        # mbarrier.wait(bar, phase) returns once the phase of that parity has completed; the
        # protocol must never let a barrier run a whole phase ahead of its waiter (ABA)
        n = self.bars[bar]
        if n % 2 == phase:
            return False
        assert n == want, f"{bar}: {n} completions where the waiter expects {want}"
        return True

    def half(self, slot: int, block: int) -> torch.Tensor:
        assert self.kv[slot] == [block] * 4, f"value half {slot} holds blocks {self.kv[slot]}, the kernel reads {block}"
        return self.kv_data[slot]

    def rope(self, b: int, tag) -> torch.Tensor:
        held = self.rp[b] and self.rp[b][0]
        assert held == tag, f"rope slot {b} holds {held}, the kernel reads {tag}"
        return self.rp[b][1]


def _ws_zero_tail(sh, b, block, k0, end):
    if k0 + 64 > end:
        dead = ~((k0 + torch.arange(64)) < end)
        for h in range(2):
            sh.half(2 * b + h, block)[dead] = 0


def _ws_wg0(sh, q, t_begin, end, n_pairs, qk_scale, p_dtype, out):
    """Warpgroup 0 of mla_gluon_ws, step for step; yields where the kernel
    waits (a barrier, or an asynchronous dot in flight)."""
    hd = sh.hd
    m_i = torch.full((q.shape[0],), float("-inf"))
    l0 = torch.zeros(q.shape[0])
    acc = torch.zeros(q.shape[0], hd)
    for k in range(n_pairs):
        ph = k & 1
        b0 = t_begin + 2 * k
        k0 = b0 * 64
        yield ("own0", ph, k + 1)
        for c in range(sh.lc):
            yield (f"late{c}", ph, k + 1)
        _ws_zero_tail(sh, 0, b0, k0, end)
        keys = torch.cat([sh.half(0, b0), sh.half(1, b0), sh.rope(0, ("rope", b0))], 1).float()
        s = q @ keys.T * qk_scale
        s = torch.where(((k0 + torch.arange(64)) < end)[None, :], s, float("-inf"))
        m0 = torch.maximum(m_i, s.amax(1))
        m0_use = torch.where(m0 == float("-inf"), 0.0, m0)
        c0 = torch.exp2(m_i - m0_use)
        p0 = torch.exp2(s - m0_use[:, None])
        l0 = l0 * c0 + p0.sum(1)
        sh.vec.update(m=m0, c0=c0)
        sh.arrive("c0")
        acc = acc * c0[:, None]
        p0b = p0.to(p_dtype).float()
        pv = p0b @ sh.half(0, b0).float()  # O_lo += P0 V0_lo, issued
        yield ("c1", ph, k + 1)
        c1, m_i = sh.vec["c1"], sh.vec["m"]
        acc = acc + pv
        sh.half(0, b0)  # the dot's wait: its buffer still holds the block
        sh.issue_own(0, b0 + 2, k + 1 < n_pairs)
        sh.rp[0] = (("P", 0, k), (p0b * c1[:, None]).to(p_dtype))  # P0 at m1 in block 0's rope slot
        sh.arrive("p0")
        acc = acc * c1[:, None]
        l0 = l0 * c1
        yield ("p1", ph, k + 1)
        pv = sh.rope(1, ("P", 1, k)).float() @ sh.half(2, b0 + 1).float()  # O_lo += P1 V1_lo
        yield None  # the dot in flight
        sh.rope(1, ("P", 1, k)), sh.half(2, b0 + 1)
        acc = acc + pv
        sh.issue_late(1, b0 + 3, k + 1 < n_pairs)
    out["wg0"] = (acc, m_i, l0)
    sh.vec["l0"] = l0
    sh.arrive("l")
    yield ("l", 0, 1)
    out["l"] = sh.vec["l0"] + sh.vec["l1"]


def _ws_wg1(sh, q, t_begin, end, n_pairs, qk_scale, p_dtype, out):
    """Warpgroup 1 of mla_gluon_ws, step for step."""
    hd = sh.hd
    m1 = torch.full((q.shape[0],), float("-inf"))
    l1 = torch.zeros(q.shape[0])
    acc = torch.zeros(q.shape[0], hd)
    for k in range(n_pairs):
        ph = k & 1
        b1 = t_begin + 2 * k + 1
        k1 = b1 * 64
        yield ("own1", ph, k + 1)  # its own (high) half first, as the kernel
        for c in range(sh.lc):
            yield (f"late{sh.lc + c}", ph, k + 1)
        _ws_zero_tail(sh, 1, b1, k1, end)
        keys = torch.cat([sh.half(2, b1), sh.half(3, b1), sh.rope(1, ("rope", b1))], 1).float()
        s = q @ keys.T * qk_scale
        s = torch.where(((k1 + torch.arange(64)) < end)[None, :], s, float("-inf"))
        yield ("c0", ph, k + 1)
        m0, c0 = sh.vec["m"], sh.vec["c0"]
        m1 = torch.maximum(m0, s.amax(1))
        m1_use = torch.where(m1 == float("-inf"), 0.0, m1)
        c1 = torch.exp2(m0 - m1_use)
        sh.vec.update(m=m1, c1=c1)
        sh.arrive("c1")
        p1 = torch.exp2(s - m1_use[:, None])
        l1 = l1 * (c0 * c1) + p1.sum(1)
        acc = acc * (c0 * c1)[:, None]
        sh.rp[1] = (("P", 1, k), p1.to(p_dtype))
        sh.arrive("p1")
        p1b = p1.to(p_dtype).float()
        pv_a = p1b @ sh.half(3, b1).float()  # O_hi += P1 V1_hi, issued (P1 from registers)
        yield ("p0", ph, k + 1)
        pv_b = sh.rope(0, ("P", 0, k)).float() @ sh.half(1, b1 - 1).float()  # O_hi += (P0 c1) V0_hi
        yield None
        sh.half(3, b1)  # wait(1): the first dot done
        sh.issue_own(1, b1 + 2, k + 1 < n_pairs)
        yield None
        sh.rope(0, ("P", 0, k)), sh.half(1, b1 - 1)  # wait(0)
        acc = acc + pv_a + pv_b
        sh.issue_late(0, b1 + 1, k + 1 < n_pairs)
    out["wg1"] = (acc, m1, l1)
    sh.vec["l1"] = l1
    sh.arrive("l")
    yield ("l", 0, 1)


def _program_ws(q_rows, c2, bt_row, seq_len, split, num_splits, qk_scale, page, rank, p_dtype, seed, lc=1):
    """One program of the warp-specialised kernel: the two warpgroups as
    coroutines, run in an order a seeded scheduler picks among the legal
    ones (and the copies in flight landed at random points), every read
    checked against what the slot must hold; (o, lse2) as ``_program``."""
    import random

    n_all = -(-seq_len // 64)
    per = -(-n_all // num_splits)
    t_begin = split * per
    t_stop = min(t_begin + per, n_all)
    end = min(t_stop * 64, seq_len)
    n_pairs = -(-max(t_stop - t_begin, 1) // 2)
    sh = _WsShared(c2, bt_row, max(seq_len - 1, 0), page, rank, lc)
    # the default partition's prologue: the first pair's own halves, then the late halves with the rope parts
    sh.issue_own(0, t_begin, True)
    sh.issue_own(1, t_begin + 1, True)
    sh.issue_late(0, t_begin, True)
    sh.issue_late(1, t_begin + 1, True)
    q = q_rows.float()
    out = {}
    wgs = [_ws_wg0(sh, q, t_begin, end, n_pairs, qk_scale, p_dtype, out),
           _ws_wg1(sh, q, t_begin, end, n_pairs, qk_scale, p_dtype, out)]
    waiting = [next(w) for w in wgs]
    done = [False, False]
    rng = random.Random(seed)
    while not all(done):
        can = [i for i in range(2) if not done[i] and (waiting[i] is None or sh.ready(*waiting[i]))]
        moves = [("wg", i) for i in can] + [("land", j) for j in range(len(sh.inflight))]
        assert moves, f"deadlock: warpgroups wait on {waiting}, no copy in flight"
        kind, i = rng.choice(moves)
        if kind == "land":
            sh.land(i)
            continue
        try:
            waiting[i] = next(wgs[i])
        except StopIteration:
            done[i] = True
    assert not sh.inflight, f"copies still in flight at the end: {sh.inflight}"
    acc0, m0, _ = out["wg0"]
    acc1, m1, _ = out["wg1"]
    assert torch.equal(m0, m1)  # both warpgroups end at the same row maximum
    l_i = out["l"]
    lse2 = torch.where(l_i > 0, m0 + torch.log2(torch.where(l_i > 0, l_i, 1.0)), float("-inf"))
    o = torch.cat([acc0, acc1], 1) / torch.where(l_i == 0, 1.0, l_i)[:, None]
    return o, lse2


def emulate_launch(q, lat, out, lse, part_o, part_lse, block_table, seq_lens, num_heads: int, num_splits: int,
                   sm_scale: float, page: int, rank: int, tiles, p_dtype=None, ws_seed: int = 0) -> None:
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
                if tiles.schedule in ("ws", "wsc"):
                    o, lse2 = _program_ws(q[req, rows], c2, block_table[req], seq_len, split, num_splits, qk_scale,
                                          page, rank, p_dtype, ws_seed + 7919 * (req * 64 + hg * 8 + split),
                                          lc=4 if tiles.schedule == "wsc" else 1)
                else:
                    o, lse2 = _program(q[req, rows], c2, block_table[req], seq_len, split, num_splits, qk_scale,
                                       page, rank, tiles, p_dtype)
                if num_splits == 1:
                    out[req, rows] = o.to(out.dtype)
                    if lse is not None:
                        lse[req, rows] = lse2 / LOG2E
                else:
                    part_o[req, rows, split] = o
                    part_lse[req, rows, split] = lse2


__all__ = ["emulate_launch"]
