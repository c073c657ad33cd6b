"""TRITON_ATTN run adapter: our own Triton kernel (``triton_kernel.py``).

Cache layout: vLLM's TRITON_ATTN one, [num_pages, 2, page_size, Hkv, D].

``build(batch)`` turns the engine-neutral batch into the kernel's work list
(host arithmetic on the CPU copies, one host->device copy); ``run`` launches
the attention kernel and, when some query block was split over its context
and the config does not merge it in-kernel (``fused_merge_max``), the merge kernel.
Both are reused by every layer of the step.

Two prefill kernels: for a prefill-only batch on an sm_90 GPU with Triton
3.6's Gluon API, a 16-bit cache, head size 64 or 128 and no soft cap, window
or sinks, the Gluon kernel (``attn_gluon.py``: TMA ring, two wgmma
warpgroups, FA3's schedule) over the same work list; otherwise, and for
every decode and mixed batch, the ``tl`` kernel (``triton_kernel.py``). The
rule is ``gluon_prefill_unavailable``; a Gluon launch that fails falls back
to ``tl`` for this and every later step; the row's kernel name says which
ran and why. ``ATTN_SELECT_ATTN_KERNEL=tl`` forces ``tl``. The Gluon kernel
was checked and timed on a GPU at heads 128 and 64, faster than ``tl`` on
every prefill shape measured (BENCHMARKS.md, "A Gluon prefill kernel").
"""

from __future__ import annotations

import os
from array import array
from dataclasses import dataclass, replace
from itertools import accumulate
from typing import TYPE_CHECKING

import torch

from attn_select.backends.run.adapter import Adapter, HostStaging
from attn_select.backends.run.batch import Batch
from attn_select.backends.run.gluon_gate import gluon_hopper_unavailable

if TYPE_CHECKING:  # attn_gluon imports Gluon: only where the rule takes it
    from attn_select.backends.run.attn_gluon import PrefillTiles


def _next_pow2(n: int) -> int:
    return 1 << max(0, (int(n) - 1).bit_length())


@dataclass(frozen=True)
class KernelConfig:
    """Launch choices. ``block_m`` rows (BLOCK_Q tokens x G_PAD heads) for the
    large-tile path, ``small_m`` for the small-tile (decode) path; 0 leaves that
    path out of the compiled kernel."""

    block_m: int  # large tiles: rows per program (0: no large path)
    block_n: int  # large tiles: KV tokens per inner step
    num_stages: int
    small_m: int  # small tiles: rows per program (0: no small path)
    small_n: int
    small_stages: int
    num_warps: int
    target_programs: int  # split decode contexts while the programs stay within this many
    min_split_tokens: int  # never cut a split shorter than this
    fp8_dot: int = 0  # an e4m3 cache: 0 fp16 dots, 1 Q.K in fp8 (query rounded to e4m3), 2 P.V too
    # split blocks: the last split merges them in the same launch when the plan's most splits x the
    # value head size is at most this (0: never; a second launch merges). It merges split by split,
    # so its cost grows with the splits and the head, where the merge kernel's does not
    fused_merge_max: int = 0
    # short contexts: cut into splits of this many keys (instead of min_split_tokens) when the result
    # merges in-kernel and the decode programs stay within short_programs (0: off)
    short_split_tokens: int = 0
    short_programs: int = 0
    merge_chunk: int = 1  # an in-kernel merge takes this many splits a step (a power of two)
    page_vector: bool = False  # block table read once a page (or tile) instead of once a key
    max_registers: int = 0  # ptxas's register cap a thread (0: Triton's choice); GPU launches only
    # an fp8 cache with fp16 P.V dots: each value tile widened to fp16 where it is loaded, so the
    # dot takes it through shared memory as 16-bit data (triton_kernel._widen_fp8_here); sm_89+ only
    widen_v: bool = False
    # a decode whose last split would hold at most 1 / fold_tail of a split's keys is cut in one split
    # fewer, that tail dealt to the others (0: never; the kernel then deals each block's tiles out
    # evenly, DEAL_TILES), when the plan cut the usual way has more than fold_programs split programs.
    # A decode reads its cached context and its new token: 512 + 1 keys in 128-key splits are 4
    # splits and a fifth of one key otherwise, a program and a partial to merge for a single key
    fold_tail: int = 0
    fold_programs: int = 0
    # a decode plan of at most few_programs split programs (most SMs idle: the step lasts as long as
    # its longest program) is cut again into splits of few_split_elems keys x value head elements,
    # rounded down to a power of two of at least few_split_min keys, where that cuts it finer (0: off)
    few_programs: int = 0
    few_split_elems: int = 0
    few_split_min: int = 64

    @property
    def deals_tiles(self) -> bool:
        """Whether the kernel deals a block's tiles out evenly over its splits (``DEAL_TILES``):
        a folded plan has fewer splits than equal spans of its split length would fill. Only a plan
        that folded a tail launches so (``TritonPlan.folded``)."""
        return self.fold_tail > 0


def few_split_tokens(cfg: KernelConfig, head_v: int) -> int:
    """The split length of a plan that leaves most SMs idle (``few_programs``): 64 keys at head 128
    and 256 (bf16: 16 KB of K and 16 KB of V at head 128), 128 at head 64."""
    keys = cfg.few_split_elems // max(1, head_v)
    return max(cfg.few_split_min, 1 << max(0, keys.bit_length() - 1))


def merges_in_kernel(cfg: KernelConfig, max_splits: int, head_v: int) -> bool:
    """Whether a plan cut in up to ``max_splits`` merges its splits in the attention launch."""
    return max_splits > 1 and max_splits * head_v <= cfg.fused_merge_max


def widens_v(cfg: KernelConfig, fp8_dot: int, kv_element_bytes: int, capability: tuple[int, int] | None,
             on_gpu: bool) -> bool:
    """Whether a launch widens its fp8 value tiles where they are loaded
    (``widen_v``): on a GPU of sm_89 or later (the cvt instructions it uses),
    with an fp8 cache whose P.V dot runs in fp16 (``fp8_dot`` 2 keeps V in fp8).
    The interpreter runs the plain widening: it has no PTX."""
    return (cfg.widen_v and kv_element_bytes == 1 and fp8_dot < 2 and on_gpu
            and capability is not None and tuple(capability) >= (8, 9))


# fp8 decode with the value tile widened where it is loaded (``widen_v``): the key loop is a third
# shorter, but the second, 16-bit copy of the tile takes the table's fp8 entry from 75 to 108 KB of
# shared memory, two programs an SM instead of three. On an H100 (2026-12-06, BENCHMARKS.md "fp8
# decode: the value tile widened where the plan leaves room"; 32 / 8 heads, head 128, page 16, 13
# points) it was faster wherever the plan has one split or at most two programs an SM (32 x 4096:
# 100.3 against 108.8 us, 96 % of XQA against 89 %; 1 x 512: 9.0 against 10.1; 128 x 512: 79.9
# against 85.3) and slower where the split count was chosen for three programs an SM (8 x 32768, 6
# splits: 252 against 202 us; 1 x 32768, 49 splits: 45.9 against 40.5).
WIDEN_V_PROGRAMS = 132 * 2
WIDEN_V_HEADS = (128,)  # measured at head 128 only


def fp8_decode_widens(max_splits: int, programs: int) -> bool:
    """Whether the fp8 decode entry's plan takes ``widen_v``: one split, or at most two programs an SM."""
    return max_splits == 1 or programs <= WIDEN_V_PROGRAMS


# fp8 decode in programs of one warp (FP8_DECODE_ONE_WARP). With half the bytes a key, the four-warp
# entry is bound by latency with too few warps in flight (Nsight Compute at 32 x 4096: 7.7 of 12 warps
# an SM active, 0.53 eligible a cycle); one-warp programs put up to 32 an SM. On an H100 (2026-12-07,
# BENCHMARKS.md "Small steps and fp8 one-warp programs"; 32 / 8 heads, head 128, page 16, 13 points)
# they were faster where the batch has fewer (request, KV head) rows than SMs, which the four-warp
# entry must split anyway (8 x 4096: 41.9 -> 35.1 us, 81 -> 97 % of XQA; 1 x 4096: 14.7 -> 12.1), and
# where the rows fill 8 programs an SM unsplit (128 x 512: 80.0 -> 55.2, 67 -> 97 %; 256 x 512: 148.2
# -> 107.3). Between, 256 rows (32 requests) fill the SMs with the four-warp entry unsplit, where
# one-warp programs need four splits and a merge: slower (32 x 4096: 105.1 against 100.0; 32 x 512:
# 24.9 against 22.9). Two batches of few rows lose, kept for one rule by rows: 1 x 32768, where the
# four-warp entry's 49 splits fill three programs an SM and one-warp programs stop at 64 splits (43.7
# against 40.1 us in the grid with this rule: 94 % of XQA against 102 %), and 1 x 512 (9.1 against 9.0).
# Both now run bf16's decode entry (fp8_decode_small_step, below), faster than either.
FP8_ONE_WARP_HEADS = (128,)  # measured at head 128 only


def fp8_decode_one_warp(rows: int) -> bool:
    """Whether an fp8 decode batch of ``rows`` (request, KV head) rows runs in one-warp programs:
    fewer rows than SMs, or enough to fill the one-warp entry's programs unsplit."""
    return rows < 132 or 2 * rows > FP8_DECODE_ONE_WARP.target_programs  # 132 SMs (H100, H200)


# fp8 decode steps that read few keys in all run bf16's decode entry with the value tile widened
# (FP8_DECODE_SMALL): 16x64 tiles in four warps, its split rules (64-key splits where most SMs would idle,
# the in-kernel merge up to 5 splits). On an H100 (2026-12-07, BENCHMARKS.md "fp8 on short contexts";
# 32 / 8 heads, head 128, page 16, the table then and the variant side by side) it was faster on every step
# of at most 2**18 (request, KV head) rows x cached keys: 1 x 512 9.15 -> 7.24 us (67 -> 84 % of XQA),
# 8 x 512 12.27 -> 11.37, 8 x 4096 36.12 -> 34.61 (95 -> 99 %), 32 x 512 23.28 -> 20.90, 1 x 4096 the same
# (12.29 / 12.33); and slower on the larger ones (32 x 4096 106.7 -> 111.6, 128 x 512 57.3 -> 71.1).
# 1 x 32768 (8 rows, 2**18 keys; session 19, BENCHMARKS.md "Eight-warp programs, and the fp8 subset")
# too: 49 splits of bf16's entry 33.6 us against the one-warp entry's 64 splits 43.6 (XQA 41.1).
FP8_SMALL_STEP_KEYS = 1 << 18


def fp8_decode_small_step(rows: int, longest_cached: int) -> bool:
    """Whether an fp8 decode step of ``rows`` (request, KV head) rows, the longest with
    ``longest_cached`` cached keys, runs bf16's decode entry (FP8_DECODE_SMALL)."""
    return rows * longest_cached <= FP8_SMALL_STEP_KEYS


def kernel_key(cfg: KernelConfig, fused: bool) -> tuple:
    """The config fields that pick the compiled kernel and its launch options,
    for a plan that does (``fused``) or does not merge in-kernel; the split
    policy's fields show in the plan's work list instead."""
    return (cfg.block_m, cfg.block_n, cfg.num_stages, cfg.small_m, cfg.small_n, cfg.small_stages, cfg.num_warps,
            cfg.fp8_dot, cfg.page_vector, cfg.max_registers, cfg.widen_v, cfg.merge_chunk if fused else 0,
            cfg.deals_tiles)


# The table, from the sweep in benchmarks/run_triton_sweep.py on an H200
# (Llama-3.1-8B heads, page 16; BENCHMARKS.md "Triton sweep"). What it rests on:
# - Triton 3.6 pipelines the block-table load ahead of the K/V loads it
#   addresses, and the two share the stages: 2-4 stages leave K/V one buffer
#   and every copy is waited on right after it is issued; 5 stages give two
#   buffers and real overlap (benchmarks/triton_attn_aot_report.py shows both).
# - Decode is one wave: 16x64 tiles at 5 stages take 72 KB of shared memory,
#   three programs an SM, 396 slots; 32 requests x 8 KV heads = 256 programs
#   fit without a split (no merge kernel: 131 us), where 2 splits (512
#   programs, 1.3 waves) took 170 us and 3 splits 147 us. So the split count
#   is the most that keeps the decode programs within ``target_programs``
#   (the slots), and a small batch is cut until it fills them.
# - fp8: 16x128 tiles at 5 stages (the same 75 KB: half the bytes a key),
#   one split: 109 us against 126 us for the 2-stage, 3-split entry before.
#   Q.K as an e4m3 dot (fp8_dot 1, the query rounded to e4m3 as vLLM's FA3
#   and XQA do it) took 104.6 us at error 1.4e-2 on 32 x 4096, but 7-9e-2 on
#   short contexts (the CPU tests), past run's 8e-2: not in the table.
# - Prefill: 128-row tiles (32 tokens x 4 heads), 64 keys, 5 stages (3 K/V
#   buffers, 132 KB), 8 warps (two wgmma warpgroups): 155 us on 4 x 512 on
#   1024, 1572 us on 1 x 8192 (128x128 at 3 stages: 174 / 1696 us; 7 stages
#   gained 1% on 8192 and lost 2% on 512).
# - Mixed: 64x64 prefill tiles and 16x64 decode tiles in one launch, both 5
#   stages (302 us against 327 us at 3), decodes cut in 3; their merge as a
#   second launch (299 us; in-kernel 312).
# - The decode grid (benchmarks/run_decode_grid.py; BENCHMARKS.md "The decode
#   grid"): the in-kernel merge of a split block saves the merge launch, 0.3-2.6 us
#   at 3 splits of head 128 (4-12 %), and costs 0.3-0.4 us a split of head 128
#   (it reads the others' partials in turn): even at 6 splits, slower from 17
#   on (1 x 4096: 21.3 against 16.4 us), slower at 3 splits of head 256. Hence
#   fused_merge_max 640: up to 5 splits of head 128, 10 of head 64, 2 of 256.
#   A short context of 1-8 (request, KV head) rows took 128-key splits (5 for
#   512 tokens, merged in-kernel) 5-7 % faster than 256-key ones; from 32 rows
#   (160 programs past the 132 SMs) slower.
# - fp8 decode with a 168-register cap (three programs an SM, as the slots
#   count them): faster at every batch, 2 % at 32 x 4096, 10-11 % at 128 and
#   256 requests (366 against 413 us at 128 x 4096), and 8 x 32768 (6 splits,
#   in-kernel merge, which alone takes the kernel to 218 registers) 192
#   against 272 us; fp8's 6-split plans merge in-kernel too (fused_merge_max
#   768, measured only with the cap).
# - The block table read once a page (or a tile) instead of once a key
#   (page_vector; the grid of 2026-12-02, BENCHMARKS.md "The decode grid, page
#   vector"): decode's median ratio to the fastest peer over 115 points 0.90
#   -> 1.00 (at 1 x 512, head 128: 10.6 -> 8.5 us), fp8 decode 0.67 -> 0.72,
#   prefill 4 x 512 on 1024 155 -> 140 us, 1 x 8192 1572 -> 1398 us, mixed
#   301 -> 252 us. The sm_90 compile has fewer registers too (decode, head
#   128: 160 -> 109-145), so it is on in every entry. With it, prefill's
#   128x128 tiles at 5 stages lead (two runs: 135.7 us on 4 x 512 on 1024,
#   1347-1358 us on 1 x 8192, against 139.5 and 1434 for 128x64).
# - A decode's tail folded into its other splits (fold_tail; the decode grid's
#   "folded tail" variant, 2026-12-07 on an H100, BENCHMARKS.md "The folded
#   tail"). Every grid context is a power of two of cached keys plus the new
#   token, so the split count by ceiling gives each split block a last split
#   of one key. Folding it is faster where the plan has more split programs
#   than the 132 SMs (one of them then waits for a second round): 32 / 8 heads
#   1 x 4096, 17 splits, 136 programs: 14.19 -> 13.63 us; 8 x 512, 192:
#   13.37 -> 12.50; 8 / 1 heads 128 x 512, 384: 21.09 -> 20.27; head 256
#   8 / 1 128 x 512 at page 64 38.3 -> 33.3. With fewer programs every one
#   runs at once and the step lasts as long as the longest: folding makes
#   that longer (1 x 512: 40 programs, 8 of them one key, become 32 of 2 or
#   3 tiles: 8.56 -> 9.37 us; head 256 1 x 512 12.0 -> 14.0). Hence
#   fold_programs 132: the plan folds only past one program an SM.
# - A plan that leaves most SMs idle cut finer (few_programs; the decode grid's "64-key splits" and
#   "128-key splits" variants, 2026-12-07 on an H100, BENCHMARKS.md "Small steps and fp8 one-warp
#   programs"). Below one program an SM every program runs at once, so shorter ones end the step
#   sooner, merge launch included. Page 16, batch 1 and 8 x 512 and 4096 keys: the plans of at
#   most 40 programs took 64-key splits at heads 128 and 256 (8 / 1 heads, head 256, 1 x 4096:
#   14.85 -> 10.18 us, 84 -> 123 % of the fastest peer; 32 / 8, head 128, 1 x 512: 8.54 -> 7.71)
#   and 128-key ones at head 64 (8 / 1, 1 x 4096: 8.57 -> 7.18; 64-key splits there were slower at
#   512 keys, 6.68 -> 7.06). The plans of 128 programs (one an SM) were faster as they are (32 / 8,
#   head 128, 8 x 512, 2 splits: 12.47 us, 14.66 with 64-key splits): hence at most 66 programs, half
#   the SMs, and 8192 keys x head elements a split (16 KB of K and of V at head 128).
DECODE_CONFIG = KernelConfig(block_m=0, block_n=0, num_stages=0, small_m=16, small_n=64, small_stages=5,
                             num_warps=4, target_programs=132 * 3, min_split_tokens=256,
                             fused_merge_max=640, short_split_tokens=128, short_programs=132, page_vector=True,
                             fold_tail=4, fold_programs=132, few_programs=66, few_split_elems=8192)
FP8_DECODE_CONFIG = KernelConfig(block_m=0, block_n=0, num_stages=0, small_m=16, small_n=128, small_stages=5,
                                 num_warps=4, target_programs=132 * 3, min_split_tokens=256,
                                 fused_merge_max=768, short_split_tokens=128, short_programs=132, max_registers=168,
                                 page_vector=True)
FP8_DECODE_WIDE_V = replace(FP8_DECODE_CONFIG, widen_v=True)  # fp8_decode_widens' plans
# fp8 decode as programs of one warp (fp8_decode_one_warp's batches): 32-key tiles, 3 stages, V widened
# where it is loaded, up to 8 programs an SM, 64-key splits merged by the merge kernel
FP8_DECODE_ONE_WARP = replace(FP8_DECODE_CONFIG, num_warps=1, small_n=32, small_stages=3, target_programs=132 * 8,
                              min_split_tokens=64, fused_merge_max=0, short_split_tokens=0, short_programs=0,
                              max_registers=0, widen_v=True)
# fp8 decode steps of few keys (fp8_decode_small_step): bf16's decode entry, V widened where it is loaded,
# the fp8 entry's register cap (163 registers uncapped under Triton 3.6, no spill)
FP8_DECODE_SMALL = replace(DECODE_CONFIG, widen_v=True, max_registers=168)
PREFILL_CONFIG = KernelConfig(block_m=128, block_n=128, num_stages=5, small_m=0, small_n=0, small_stages=0,
                              num_warps=8, target_programs=132 * 4, min_split_tokens=512, page_vector=True)
MIXED_CONFIG = KernelConfig(block_m=64, block_n=64, num_stages=5, small_m=16, small_n=64, small_stages=5,
                            num_warps=4, target_programs=256 * 3, min_split_tokens=256, page_vector=True)

def gluon_prefill_unavailable(is_cuda: bool, capability, kv_elem: int, p, page_size: int,
                              block_n: int = 128, block_m: int = 128) -> str | None:
    """Why the Gluon prefill kernel does not take this layer (None: it does).
    Its program is a 128-row tile (tokens x the GQA heads of one KV head) on
    two Hopper warpgroups (wgmma, TMA), so: an sm_90 GPU, Triton 3.6's Gluon,
    a 16-bit cache, head size = value head size in {64, 128}, no soft cap,
    sliding window or sinks (those keep the tl kernel's score path), a group
    (padded to a power of two) within the tile, and pages of a multiple of 8
    slots that tile the keys evenly (a TMA box is one page or one tile, on
    whole 8-row swizzle atoms). Prefill-only batches are the caller's test."""
    if os.environ.get("ATTN_SELECT_ATTN_KERNEL", "") == "tl":
        return "ATTN_SELECT_ATTN_KERNEL=tl"
    why = gluon_hopper_unavailable(is_cuda, capability, "attn_gluon")
    if why:
        return why
    if kv_elem != 2:
        return "fp8 cache (the Gluon kernel takes 16-bit caches)"
    if p.head_size != p.head_size_v or p.head_size not in (64, 128):
        return f"head size {p.head_size}/{p.head_size_v} (the Gluon kernel takes 64 or 128)"
    if p.soft_cap or p.sliding_window is not None or p.has_sink:
        return "soft cap, sliding window or sinks (the tl kernel's score path)"
    if _next_pow2(p.group) > block_m:
        return f"{p.group} query heads a KV head (more than the Gluon tile's {block_m} rows)"
    if page_size % 8 or (page_size % block_n and block_n % page_size):
        return f"page {page_size} (the Gluon kernel needs a multiple of 8 that tiles {block_n} keys)"
    # head 64 as head 128: measured through `attn-select run` on Llama-3.2-1B's heads (32 / 8, head 64,
    # 4 x 512 on 1024; BENCHMARKS.md "A Gluon prefill kernel"), the ping-pong default 89.7 us against
    # the tl kernel's 95.9 (FA3 73.2)
    return None


@dataclass
class TritonPlan:
    """Per-step metadata (device tensors, int32 unless noted).

    - ``work``: [8, W]  rows: request, first query token in request, split index,
      splits of this block, first partial row (split blocks only), the
      request's first token in the batch, its new tokens, its cached tokens
    - ``red_token`` [Ns], ``red_nsplit`` [Ns]: merge list (tokens of split blocks)
    - ``part_acc`` float32 [S, Ns, Hq, Dv_pad], ``part_m`` / ``part_l`` float32 [S, Ns, Hq]
    - ``counters`` int32 [Ns, Hkv], zero between launches (in-kernel merges only)
    """

    batch: Batch
    cfg: KernelConfig
    block_q: int  # tokens per large query block (0: no large path)
    small_q: int  # requests with at most this many new tokens take the small path (0: none)
    work: torch.Tensor
    num_items: int
    red_token: torch.Tensor
    red_nsplit: torch.Tensor
    num_split_tokens: int
    max_splits: int
    part_acc: torch.Tensor | None
    part_m: torch.Tensor | None
    part_l: torch.Tensor | None
    counters: torch.Tensor | None = None
    gluon: "PrefillTiles | None" = None  # the Gluon prefill kernel runs with these tiles
    gluon_given: bool = False  # the caller's tiles, not the rule's: a failure is raised, not fallen back from
    gluon_why: str | None = None  # why the rule's Gluon kernel does not run this plan (None: not asked, or it runs)
    # a decode's tail was folded into its other splits: the launch deals tiles out evenly (cfg.deals_tiles);
    # a plan that folded nothing has whole-split spans and launches the kernel without the dealing
    folded: bool = False


def plan_work(q_lens, seq_lens, block_q: int, small_q: int, num_kv_heads: int, cfg: KernelConfig,
              max_splits: int = 64, head_v: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """``planned_work``'s work list, merge list and split count, without whether it folded."""
    return planned_work(q_lens, seq_lens, block_q, small_q, num_kv_heads, cfg, max_splits, head_v)[:4]


def planned_work(q_lens, seq_lens, block_q: int, small_q: int, num_kv_heads: int, cfg: KernelConfig,
                 max_splits: int = 64, head_v: int = 0) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, bool]:
    """Host arithmetic of ``build``: the work list and merge list (CPU int32
    tensors), the most splits of a request, and whether a tail was folded
    (the launch then deals tiles out evenly; an unfolded plan's kernel does
    not: on 2026-12-07's H100 grid, with the dealing in every launch, the
    1 x 512 steps ran at 1.058 x XQA's time against 1.021-1.024 in the two
    earlier H100 grids without it, and the sm_90 compile of the head-128
    decode takes 144 registers with it, 109 without).

    A request with at most ``small_q`` new tokens (a decode) is one small query
    block, cut into the most KV splits that keep the decode part of the grid
    within ``target_programs`` programs (one wave of resident programs: a
    partly filled second wave costs more than the split saves); a longer request gets one item per query
    block of ``block_q`` tokens (split only when it is a single block and the
    whole grid is too small). Items of a request are block-major, split-minor,
    the blocks last first: under the causal mask a request's last block has
    the most keys, and launching the longest programs first keeps them out
    of the grid's tail (1 x 8192 from empty: 32-token blocks from 32 to 8192
    keys each). A batch of short contexts and few rows is cut finer
    (``short_split_tokens``) when the splits then merge in-kernel (which
    depends on the value head size ``head_v``; 0: never) and the decode
    programs stay within ``short_programs``: such a step is all latency, and
    shorter programs finish sooner.

    Plain Python over the requests: a step has tens to hundreds of them, and
    a torch CPU op costs microseconds of dispatch each; as ~30 tensor ops the
    same arithmetic made the whole build (the c ``attn-select run`` reports)
    2-3x dearer on the Llama-3.1-8B shapes (CPU: decode 243 -> 109 us, prefill
    227 -> 70 us, mixed 248 -> 148 us)."""
    ql = q_lens.tolist() if isinstance(q_lens, torch.Tensor) else list(q_lens)
    sl = seq_lens.tolist() if isinstance(seq_lens, torch.Tensor) else list(seq_lens)
    bq = max(block_q, 1)
    small = [small_q > 0 and q <= small_q for q in ql]
    n_blocks = [1 if sm else -(-q // bq) for q, sm in zip(ql, small)]
    base = (sum(small) if any(small) else sum(n_blocks)) * num_kv_heads
    cap = min(max(1, cfg.target_programs // max(1, base)), max_splits)
    nsplit = _split_counts(sl, small, n_blocks, cap, cfg, head_v, num_kv_heads, 0)
    folded = False
    if cfg.fold_tail and _split_programs(nsplit, small, n_blocks, num_kv_heads) > cfg.fold_programs:
        unfolded, nsplit = nsplit, _split_counts(sl, small, n_blocks, cap, cfg, head_v, num_kv_heads, cfg.fold_tail)
        folded = nsplit != unfolded
    # partial rows: every token of a split request gets one, requests in order
    split_q = [q if ns > 1 else 0 for q, ns in zip(ql, nsplit)]
    part_base = [0, *accumulate(split_q)]
    q_first = [0, *accumulate(ql)]
    items = [(r, b * block_q, sp, ns, part_base[r], q_first[r], ql[r], sl[r] - ql[r])
             for r, (nb, ns) in enumerate(zip(n_blocks, nsplit)) for b in reversed(range(nb)) for sp in range(ns)]
    cols = [array("i", c) for c in zip(*items)] if items else [array("i")] * 8
    work = _int32(sum(cols[1:], cols[0])).view(8, -1)
    red_token = array("i", [t for r, n in enumerate(split_q) if n for t in range(q_first[r], q_first[r] + n)])
    red_nsplit = array("i", [ns for n, ns in zip(split_q, nsplit) if n for _ in range(n)])
    return work, _int32(red_token), _int32(red_nsplit), max(nsplit, default=1), folded


def _split_counts(sl: list[int], small: list[bool], n_blocks: list[int], cap: int, cfg: KernelConfig,
                  head_v: int, num_kv_heads: int, fold_tail: int) -> list[int]:
    """Splits per request: ``min_split_tokens``-key splits, or ``short_split_tokens``-key ones
    where those merge in-kernel and their programs stay within ``short_programs``; a plan of at
    most ``few_programs`` split programs then in ``few_split_tokens``-key ones."""
    nsplit = _splits(sl, small, n_blocks, cap, cfg.min_split_tokens, fold_tail)
    if cfg.short_split_tokens and head_v:
        fine = _splits(sl, small, n_blocks, cap, cfg.short_split_tokens, fold_tail)
        most = max(fine, default=1)
        if (most > max(nsplit, default=1) and merges_in_kernel(cfg, most, head_v)
                and _split_programs(fine, small, n_blocks, num_kv_heads) <= cfg.short_programs):
            nsplit = fine
    if cfg.few_programs and head_v and _split_programs(nsplit, small, n_blocks, num_kv_heads) <= cfg.few_programs:
        finer = _splits(sl, small, n_blocks, cap, few_split_tokens(cfg, head_v), fold_tail)
        if max(finer, default=1) > max(nsplit, default=1):
            nsplit = finer
    return nsplit


def _split_programs(nsplit: list[int], small: list[bool], n_blocks: list[int], num_kv_heads: int) -> int:
    """The programs of the requests a plan may split (decodes and single-block requests)."""
    return sum(ns for ns, sm, nb in zip(nsplit, small, n_blocks) if sm or nb == 1) * num_kv_heads


def _splits(seq_lens: list[int], small: list[bool], n_blocks: list[int], cap: int, tokens: int,
            fold_tail: int = 0) -> list[int]:
    """Splits per request: a decode or a single-block request cut into ``tokens``-key
    splits, at most ``cap``; the others whole. A decode's tail of at most
    ``tokens // fold_tail`` keys is no split of its own (``fold_tail`` 0: it is)."""
    out = []
    for n, sm, nb in zip(seq_lens, small, n_blocks):
        if not (sm or nb == 1):
            out.append(1)
            continue
        ns = -(-n // tokens)
        if sm and fold_tail and ns > 1 and n - (ns - 1) * tokens <= tokens // fold_tail:
            ns -= 1
        out.append(max(1, min(cap, ns)))
    return out


def _int32(a: array) -> torch.Tensor:
    """An int32 tensor over the array's memory (no per-element conversion)."""
    return torch.frombuffer(a, dtype=torch.int32) if len(a) else torch.empty(0, dtype=torch.int32)


def _q_lens(batch: Batch) -> list[int]:
    qsl = batch.query_start_loc_cpu.tolist()
    return [b - a for a, b in zip(qsl, qsl[1:])]


class TritonAttnAdapter(Adapter):
    name = "TRITON_ATTN"

    def unavailable(self) -> str | None:
        try:
            import triton  # noqa: F401
        except Exception as e:  # pragma: no cover - triton is a test dependency
            return f"triton not importable: {type(e).__name__}: {e}"
        if not self.env.is_cuda:
            import os
            if os.environ.get("TRITON_INTERPRET") != "1":
                return "Triton needs a GPU, or TRITON_INTERPRET=1 on CPU"
        return None

    def __init__(self, env, p, row=None):
        super().__init__(env, p, row)
        self.staging = HostStaging()
        # the layer's per-tensor k / v scales of an fp8 cache (vLLM's _k_scale,
        # _v_scale: 1.0 unless a checkpoint calibrates them); the cache holds
        # x / scale, and the kernel reads the scales from device memory as
        # vLLM's kernels do, so a graph capture does not bake them in
        self.kv_scales = (1.0, 1.0)
        self._scale_t: tuple[tuple[float, float], torch.Tensor] | None = None
        self._gluon_failed: str | None = None  # why the rule's Gluon launch failed (then tl runs)
        self.why_not_gluon: str | None = None  # the rule's reason of the last prefill-only build (None: Gluon)
        self._gluon_rules: dict[int, str | None] = {}  # page size -> the rule's answer

    def _scales(self, device: torch.device) -> torch.Tensor:
        """[k_scale, v_scale] float32 on ``device``: one tensor per device, new values copied
        into it, so a graph captured before a change reads the new scales, not freed memory."""
        if self._scale_t is None or self._scale_t[1].device != device:
            self._scale_t = (self.kv_scales, torch.tensor(self.kv_scales, dtype=torch.float32, device=device))
        elif self._scale_t[0] != self.kv_scales:
            self._scale_t[1].copy_(torch.tensor(self.kv_scales, dtype=torch.float32))
            self._scale_t = (self.kv_scales, self._scale_t[1])
        return self._scale_t[1]

    def choose(self, batch: Batch) -> KernelConfig:
        """Decode-only, prefill-only or mixed launch config for this batch."""
        return self._config_for(_q_lens(batch))

    def _config_for(self, q_lens: list[int]) -> KernelConfig:
        g_pad = _next_pow2(self.p.group)
        small_q = max(1, max(DECODE_CONFIG.small_m, g_pad) // g_pad)
        if max(q_lens) <= small_q:
            return FP8_DECODE_CONFIG if self.fp8_cache else DECODE_CONFIG
        if min(q_lens) > small_q:
            return PREFILL_CONFIG
        return MIXED_CONFIG

    def build(self, batch: Batch, cfg: KernelConfig | None = None, gluon: "PrefillTiles | None" = None) -> TritonPlan:
        """``cfg`` overrides the table (the tl kernel runs); ``gluon`` runs the
        Gluon prefill kernel with those tiles (a prefill-only batch; ``cfg``'s
        split policy, or the table's prefill entry)."""
        p = self.p
        g_pad = _next_pow2(p.group)
        q_lens = _q_lens(batch)  # read once: build is the timed per-step host work
        tiles, why = gluon, None
        from_table = cfg is None and gluon is None
        if gluon is not None:
            if min(q_lens) <= self._small_q():
                raise ValueError("the Gluon prefill kernel takes prefill-only batches")
            # its tiles make the work list's blocks; it merges split blocks with the merge kernel
            cfg = replace(cfg or PREFILL_CONFIG, block_m=gluon.block_m, block_n=gluon.block_n, small_m=0,
                          fused_merge_max=0)
        elif cfg is None:
            cfg = self._config_for(q_lens)
            if cfg is PREFILL_CONFIG:
                why = self.why_not_gluon = self._gluon_failed or self._gluon_rule(batch.page_size)
                if why is None:
                    from attn_select.backends.run.attn_gluon import rule_tiles

                    tiles = rule_tiles(g_pad)
                    cfg = replace(cfg, block_m=tiles.block_m, block_n=tiles.block_n)
        if p.head_size > 128:  # keep the K/V tiles within shared memory
            cfg = replace(cfg, block_n=min(cfg.block_n, 32), small_n=min(cfg.small_n, 32))
        block_q = max(1, max(cfg.block_m, g_pad, 16) // g_pad) if cfg.block_m else 0
        small_q = max(1, max(cfg.small_m, g_pad, 16) // g_pad) if cfg.small_m else 0
        if block_q == 0 and max(q_lens) > small_q:
            raise ValueError(f"decode-only config given a batch with {max(q_lens)}-token requests")
        seq_lens = batch.seq_lens_cpu.tolist()
        if from_table and cfg is FP8_DECODE_CONFIG and p.head_size in FP8_ONE_WARP_HEADS:
            rows = len(q_lens) * p.num_kv_heads
            if fp8_decode_small_step(rows, max(s - q for s, q in zip(seq_lens, q_lens))):
                cfg = FP8_DECODE_SMALL
            elif fp8_decode_one_warp(rows):
                cfg = FP8_DECODE_ONE_WARP
        work, red_token, red_nsplit, max_splits, folded = planned_work(
            q_lens, seq_lens, block_q, small_q, p.num_kv_heads, cfg, head_v=p.head_size_v)
        if (from_table and cfg is FP8_DECODE_CONFIG and p.head_size in WIDEN_V_HEADS
                and fp8_decode_widens(max_splits, work.shape[1] * p.num_kv_heads)):
            cfg = FP8_DECODE_WIDE_V
        work_d, red_token_d, red_nsplit_d = self.staging.upload([work, red_token, red_nsplit], batch.device)
        n_red = red_token.numel()
        part_acc = part_m = part_l = counters = None
        if n_red:
            dvp = _next_pow2(p.head_size_v)
            part_acc = torch.empty(max_splits, n_red, p.num_heads, dvp, dtype=torch.float32, device=batch.device)
            part_m = torch.empty(max_splits, n_red, p.num_heads, dtype=torch.float32, device=batch.device)
            part_l = torch.empty_like(part_m)
            if merges_in_kernel(cfg, max_splits, p.head_size_v):
                counters = torch.zeros(n_red, p.num_kv_heads, dtype=torch.int32, device=batch.device)
        return TritonPlan(batch, cfg, block_q, small_q, work_d, work.shape[1], red_token_d, red_nsplit_d, n_red,
                          max_splits, part_acc, part_m, part_l, counters, gluon=tiles, gluon_given=gluon is not None,
                          gluon_why=why, folded=folded)

    def _gluon_rule(self, page_size: int) -> str | None:
        """``gluon_prefill_unavailable`` for this layer, asked once a page size
        (the build is per-step host work; the answer does not change)."""
        if page_size not in self._gluon_rules:
            elem = torch.empty(0, dtype=self.cache_torch_dtype()).element_size()
            self._gluon_rules[page_size] = gluon_prefill_unavailable(self.env.is_cuda, self.env.capability, elem,
                                                                     self.p, page_size)
        return self._gluon_rules[page_size]

    def _small_q(self) -> int:
        """The decode threshold of ``_config_for``: requests with at most this many new tokens."""
        g_pad = _next_pow2(self.p.group)
        return max(1, max(DECODE_CONFIG.small_m, g_pad) // g_pad)

    def run(self, plan: TritonPlan, q: torch.Tensor, cache: torch.Tensor, sinks: torch.Tensor | None,
            out: torch.Tensor) -> None:
        from attn_select.backends.run import triton_kernel as tk

        if plan.gluon is not None:
            try:
                if sinks is not None:
                    raise ValueError("the Gluon prefill kernel takes no sinks")
                self._launch_gluon(plan, q, cache, out)
                self._merge(plan, out)
                return
            except Exception as e:
                if plan.gluon_given:
                    raise
                # the rule chose Gluon and it does not compile or launch here: this plan (its work
                # list is the tl kernel's too) and every later build take the tl kernel
                text = str(e).strip().splitlines()
                self._gluon_failed = f"its launch failed ({type(e).__name__}: {text[0][:160] if text else ''})"
                self.why_not_gluon = plan.gluon_why = self._gluon_failed
                plan.gluon = None
        p, b, cfg = self.p, plan.batch, plan.cfg
        k, v = self.kv_views(cache)
        g_pad = _next_pow2(p.group)
        dvp = _next_pow2(p.head_size_v)
        dummy = out  # never read when the flag that would use it is off
        pa = plan.part_acc if plan.part_acc is not None else dummy
        pm = plan.part_m if plan.part_m is not None else dummy
        pl = plan.part_l if plan.part_l is not None else dummy
        ps = plan.part_acc.stride()[:3] if plan.part_acc is not None else (0, 0, 0)
        w = plan.work
        fp8 = k.element_size() == 1
        scales = self._scales(q.device) if fp8 else dummy
        fused = plan.counters is not None
        # e5m2 keeps the fp16 dots: two mantissa bits are too few for a rounded query
        fp8_dot = cfg.fp8_dot if k.dtype == torch.float8_e4m3fn else 0
        widen_v = widens_v(cfg, fp8_dot, k.element_size(), self.env.capability, q.is_cuda)
        tk.paged_attention_kernel[(plan.num_items, p.num_kv_heads)](
            q, k, v, out, pa, pm, pl, plan.counters if fused else dummy,
            b.block_table, sinks if sinks is not None else dummy,
            scales, scales[1:] if fp8 else dummy,
            w, w.stride(0),
            q.stride(0), q.stride(1),
            k.stride(0), k.stride(1), k.stride(2),
            v.stride(0), v.stride(1), v.stride(2),
            out.stride(0), out.stride(1),
            b.block_table.stride(0),
            ps[0], ps[1], ps[2],
            p.scale, float(p.soft_cap or 0.0), int(p.sliding_window or 0),
            G=p.group, G_PAD=g_pad,
            HEAD=p.head_size, HEAD_PAD=_next_pow2(p.head_size), HEAD_V=p.head_size_v, HEAD_V_PAD=dvp,
            PAGE=b.page_size,
            HAS_SOFTCAP=bool(p.soft_cap), HAS_WINDOW=p.sliding_window is not None, HAS_SINK=sinks is not None,
            BLOCK_Q=plan.block_q, BLOCK_N=cfg.block_n, NUM_STAGES=cfg.num_stages,
            SMALL_Q=plan.small_q, SMALL_N=cfg.small_n, SMALL_STAGES=cfg.small_stages,
            FP8_KV=fp8, DOT_F32=not q.is_cuda,
            FP8_DOT=fp8_dot,
            FUSED_MERGE=cfg.merge_chunk if fused else 0, PAGE_VEC=cfg.page_vector, WIDEN_V=widen_v,
            DEAL_TILES=cfg.deals_tiles and plan.folded,
            num_warps=cfg.num_warps, num_stages=max(cfg.num_stages, cfg.small_stages),
            **({"maxnreg": cfg.max_registers} if cfg.max_registers and q.is_cuda else {}),
        )
        if not fused:
            self._merge(plan, out)

    def _merge(self, plan: TritonPlan, out: torch.Tensor) -> None:
        """The merge kernel over the split blocks' partials (none: nothing)."""
        from attn_select.backends.run import triton_kernel as tk

        if not plan.num_split_tokens:
            return
        ps = plan.part_acc.stride()[:3]
        tk.merge_splits_kernel[(plan.num_split_tokens, self.p.num_heads)](
            out, plan.part_acc, plan.part_m, plan.part_l, plan.red_token, plan.red_nsplit,
            out.stride(0), out.stride(1), ps[0], ps[1], ps[2],
            HEAD_V=self.p.head_size_v, HEAD_V_PAD=_next_pow2(self.p.head_size_v),
            SPLIT_PAD=max(2, _next_pow2(plan.max_splits)), num_warps=4,
        )

    def _launch_gluon(self, plan: TritonPlan, q: torch.Tensor, cache: torch.Tensor, out: torch.Tensor) -> None:
        from attn_select.backends.run import attn_gluon

        p, b = self.p, plan.batch
        if not cache.is_contiguous():  # its TMA view is rows of [pages * 2 * page, Hkv * D]
            raise ValueError("the Gluon prefill kernel takes a contiguous cache")
        if q.stride(-1) != 1 or out.stride(-1) != 1:
            raise ValueError("q and out need a contiguous last dim")
        attn_gluon.launch(q, cache, out, plan.part_acc, plan.part_m, plan.part_l, b.block_table, plan.work,
                          plan.num_items, p.num_kv_heads, p.group, _next_pow2(p.group), plan.block_q, p.scale,
                          b.page_size, plan.gluon)

    def kernel_name(self, plan: TritonPlan) -> str:
        c, g = plan.cfg, _next_pow2(self.p.group)
        splits = f", split-KV up to {plan.max_splits} + merge" if plan.num_split_tokens else ""
        if plan.gluon is not None:
            t = plan.gluon
            wgs = t.block_m // 64
            return (f"attn-select Gluon paged prefill kernel (sm_90: {t.block_m} rows = {plan.block_q} tokens x {g} "
                    f"heads x {t.block_n} keys per tile, {t.stages} TMA buffers, {wgs} warpgroup{'s' if wgs > 1 else ''}, "
                    f"{'overlapped dots' if t.overlap else 'one tile at a time'}"
                    f"{', ping-pong warpgroups' if t.pingpong else ', producer warp' if t.warp_spec else ''}"
                    f", page {plan.batch.page_size}{splits})")
        tiles = []
        if plan.small_q:
            tiles.append(f"decode tiles {plan.small_q * g}x{c.small_n}")
        if plan.block_q:
            tiles.append(f"prefill tiles {plan.block_q * g}x{c.block_n}")
        merge = ", merged in-kernel" if plan.counters is not None else ""
        splits = f", split-KV up to {plan.max_splits}{merge}" if plan.num_split_tokens else ""
        if widens_v(c, c.fp8_dot, 1 if self.fp8_cache else 2, self.env.capability, self.env.is_cuda):
            splits += ", fp8 V widened where loaded"
        # the rule's reason only where it was asked (a prefill-only batch under the table's config)
        why = f"; Gluon not used: {plan.gluon_why}" if plan.gluon_why else ""
        return f"attn-select paged kernel ({', '.join(tiles)}{splits}{why})"
