"""The engine-neutral batch and the float32 reference."""

import math

import torch

from attn_select.backends.run.batch import fill_random_, make_batch, random_inputs, write_new_tokens
from attn_select.selector.run_plan import Shape, standard_shapes
from attn_select.backends.run.reference import AttnParams, reference_attention, relative_error


def test_batch_metadata_is_consistent_and_pages_shuffled():
    shape = Shape("mixed", decodes=3, decode_context=37, prefills=2, prefill_new=5, prefill_context=11)
    b = make_batch(shape, 8, "cpu", seed=4, spare_pages=5)
    assert b.query_start_loc.tolist() == [0, 1, 2, 3, 8, 13]
    assert b.seq_lens.tolist() == [38, 38, 38, 16, 16]
    assert b.num_decodes == 3 and b.num_tokens == 13
    used = [int(p) for r in range(5) for p in b.block_table[r, : math.ceil(int(b.seq_lens[r]) / 8)]]
    assert len(set(used)) == len(used) and 0 not in used  # distinct pages, pad page never used
    assert any(b2 - a2 != 1 for a2, b2 in zip(used, used[1:]))  # not one contiguous run
    # slot of the last new token of request 0 = its page for position 37
    assert int(b.slot_mapping[0]) == int(b.block_table[0, 37 // 8]) * 8 + 37 % 8


def test_standard_shapes_defaults():
    d, p, m = standard_shapes()
    assert (d.decodes, d.decode_context) == (32, 4096)
    assert (p.prefills, p.prefill_new, p.prefill_context) == (4, 512, 1024)
    assert m.decodes == 32 and m.prefills == 4 and m.num_tokens == 32 + 2048


def _naive(q, k_full, v_full, p, q_pos, sinks=None):
    """Dense per-token loop: the definition, written differently from reference.py."""
    out = torch.zeros(q.shape[0], p.num_heads, p.head_size_v, dtype=torch.float64)
    for i in range(q.shape[0]):
        for h in range(p.num_heads):
            kv = h // p.group
            logits = []
            for j in range(int(q_pos[i]) + 1):
                if p.sliding_window is not None and j <= q_pos[i] - p.sliding_window:
                    continue
                s = float((q[i, h].double() * k_full[j, kv].double()).sum()) * p.scale
                if p.soft_cap:
                    s = p.soft_cap * math.tanh(s / p.soft_cap)
                logits.append((s, j))
            m = max(s for s, _ in logits)
            if sinks is not None:
                m = max(m, float(sinks[h]))
            den = sum(math.exp(s - m) for s, _ in logits) + (math.exp(float(sinks[h]) - m) if sinks is not None else 0)
            for s, j in logits:
                out[i, h] += math.exp(s - m) / den * v_full[j, kv].double()
    return out


def test_reference_matches_naive_definition():
    torch.manual_seed(0)
    p = AttnParams(4, 2, 8, 8, 8 ** -0.5, sliding_window=5, soft_cap=3.0, has_sink=True)
    shape = Shape("prefill", prefills=1, prefill_new=4, prefill_context=6)
    b = make_batch(shape, 4, "cpu", seed=1)
    cache = torch.empty(b.num_pages, 4, 2, 8)
    vcache = torch.empty(b.num_pages, 4, 2, 8)
    fill_random_(cache)
    fill_random_(vcache)
    inp = random_inputs(b, 4, 2, 8, 8, torch.float32, True)
    write_new_tokens(cache, vcache, b, inp)
    ref = reference_attention(inp.q, cache, vcache, b, p, inp.sinks)
    pages = b.block_table[0, :3].long()
    k_full = cache[pages].reshape(-1, 2, 8)[:10]
    v_full = vcache[pages].reshape(-1, 2, 8)[:10]
    naive = _naive(inp.q, k_full, v_full, p, torch.arange(6, 10), inp.sinks)
    assert relative_error(ref, naive.float()) < 1e-5


def test_relative_error_catches_nan():
    ref = torch.ones(3)
    assert relative_error(torch.tensor([1.0, float("nan"), 1.0]), ref) == float("inf")
