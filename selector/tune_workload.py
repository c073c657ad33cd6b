"""What ``attn-select tune`` measures: the batch x context grid, the traffic
mix (``--workload``), and which points fit in the GPU's memory. Pure: no torch.

Workload syntax (docs/tune.md): ``decode:BxC`` is B requests with one new
token on C cached tokens; ``prefill:BxN/C`` is B requests with N new tokens
on C cached (``/C`` may be left out: no cache). ``@W`` after an item gives
its weight (default 1). A YAML file holds the same items::

    workload:
      - {decode: 32x4096, weight: 0.9}
      - {prefill: 4x512/1024, weight: 0.1}
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

from attn_select.selector.errors import UserError
from attn_select.selector.run_plan import Shape

DEFAULT_BATCHES = (1, 8, 32, 128, 256)
DEFAULT_CONTEXTS = (1024, 4096, 16384, 65536)
_MAX_TOKENS = 1 << 24  # 16M tokens of one shape: beyond any GPU's cache
# Bounds on what a sweep may plan (the defaults plan 22 shapes): more values
# in a list, items in a workload or points in all are refused before
# anything is built (a grid of 20,000 x 20,000 values was 4e8 shapes in memory).
MAX_VALUES = 64  # per --batches / --contexts / --page-sizes list
MAX_WORKLOAD_ITEMS = 256
MAX_POINTS = 4096  # shapes x page sizes x KV dtypes


class WorkItem(NamedTuple):
    shape: Shape
    weight: float
    text: str  # as given, for the report


def _count(text: str, what: str, where: str) -> int:
    t = text.strip().lower()
    m = re.fullmatch(r"([0-9]+)(k?)", t)
    if not m:
        raise UserError(f"{where}: {what} {text!r} is not a whole number (e.g. 4096 or 4k)")
    if len(m.group(1)) > 20:  # int() refuses past 4300 digits, and no batch or context has 21
        raise UserError(f"{where}: {what} of {len(m.group(1))} digits is too large; give a count such as 4096 or 4k")
    n = int(m.group(1)) * (1024 if m.group(2) else 1)
    return n


def parse_item(text: str, weight: float | None = None, where: str = "--workload") -> WorkItem:
    """One ``decode:BxC`` / ``prefill:BxN/C`` item, optionally ``@W``."""
    raw = text.strip()
    body, _, w = raw.partition("@")
    if w:
        try:
            weight = float(w)
        except ValueError:
            raise UserError(f"{where}: weight {w!r} in {raw!r} is not a number") from None
    weight = 1.0 if weight is None else weight
    if not 0 < weight < float("inf"):  # nan fails both; an infinite weight makes every mean inf or nan
        raise UserError(f"{where}: weight of {raw!r} must be a positive finite number, got {weight}")
    kind, sep, dims = body.partition(":")
    kind = kind.strip().lower()
    usage = "use decode:BxC or prefill:BxN/C, e.g. decode:32x4096,prefill:4x512/1024"
    if not sep or kind not in ("decode", "prefill"):
        raise UserError(f"{where}: bad shape {raw!r}: {usage}")
    b, x, rest = dims.partition("x")
    if not x or not rest:
        raise UserError(f"{where}: bad shape {raw!r}: {usage}")
    batch = _count(b, "batch", where)
    if kind == "decode":
        if "/" in rest:
            raise UserError(f"{where}: bad shape {raw!r}: a decode has one new token; {usage}")
        ctx = _count(rest, "context", where)
        shape = Shape("decode", decodes=batch, decode_context=ctx)
    else:
        new_s, _, ctx_s = rest.partition("/")
        new = _count(new_s, "new tokens", where)
        ctx = _count(ctx_s, "context", where) if ctx_s else 0
        if new < 1:
            raise UserError(f"{where}: bad shape {raw!r}: a prefill needs at least 1 new token")
        shape = Shape("prefill", prefills=batch, prefill_new=new, prefill_context=ctx)
    if batch < 1:
        raise UserError(f"{where}: bad shape {raw!r}: batch must be at least 1")
    if shape.kv_tokens() > _MAX_TOKENS or shape.num_tokens > _MAX_TOKENS:
        raise UserError(f"{where}: shape {raw!r} needs {shape.kv_tokens():,} cached tokens; "
                        f"at most {_MAX_TOKENS:,}")
    return WorkItem(shape, weight, raw)


def parse_workload(text: str) -> list[WorkItem]:
    """``--workload``: comma-separated items, or the path of a YAML file."""
    try:
        is_file = Path(text).is_file()
    except (OSError, ValueError):  # a name too long for a path, a NUL: items, then
        is_file = False
    if text.strip().endswith((".yaml", ".yml")) or is_file:
        return load_workload_file(Path(text))
    parts = [part for part in text.split(",") if part.strip()]
    _at_most(len(parts), MAX_WORKLOAD_ITEMS, "--workload", "items")
    items = [parse_item(part) for part in parts]
    if not items:
        raise UserError("--workload: no shapes given; use decode:BxC or prefill:BxN/C")
    return items


def _at_most(n: int, limit: int, where: str, what: str) -> None:
    if n > limit:
        raise UserError(f"{where}: {n:,} {what}, more than the {limit} a sweep takes; give fewer")


def load_workload_file(path: Path) -> list[WorkItem]:
    """A workload YAML file, read as deployments files are (safe_yaml: within
    bounds, no Python tags, no duplicate keys), its errors at their line."""
    from attn_select.selector import safe_yaml

    where = str(path)
    data, lines = safe_yaml.load(safe_yaml.read_text(where, "workload file"), where)
    entries = data.get("workload") if isinstance(data, dict) else data
    if not isinstance(entries, list) or not entries:
        raise UserError(f"{where}: expected a list under 'workload:' of {{decode: BxC, weight: W}} items")
    _at_most(len(entries), MAX_WORKLOAD_ITEMS, where, "workload items")
    key = ("workload",) if isinstance(data, dict) else ()
    out = []
    for i, e in enumerate(entries):
        at = f"{where}:{lines.get(key + (i,), 1)}: item {i + 1}"
        if isinstance(e, str):
            out.append(parse_item(e, where=at))
            continue
        if not isinstance(e, dict):
            raise UserError(f"{at}: expected {{decode: BxC, weight: W}} or a string, got {type(e).__name__}")
        kinds = [k for k in e if k in ("decode", "prefill")]
        extra = [k for k in e if k not in ("decode", "prefill", "weight")]
        if len(kinds) != 1 or extra:
            raise UserError(f"{at}: needs exactly one of decode/prefill (and optionally weight), got "
                            f"{', '.join(map(str, e)) or 'nothing'}")
        w = e.get("weight", 1.0)
        if isinstance(w, bool) or not isinstance(w, (int, float)):
            raise UserError(f"{at}: weight must be a number, got {w!r}")
        out.append(parse_item(f"{kinds[0]}:{e[kinds[0]]}", float(w), where=at))
    return out


def check_sweep_size(batches: int, contexts: int, items: int, page_sizes: int, kv_dtypes: int) -> None:
    """Refuse a sweep of more than MAX_POINTS points, counted from how many
    values each list has, before the grid is built."""
    points = (batches * contexts + items) * page_sizes * kv_dtypes
    if points > MAX_POINTS:
        raise UserError(f"the sweep has {points:,} points ({batches} batches x {contexts} contexts + {items} "
                        f"workload shapes, x {page_sizes} page sizes x {kv_dtypes} KV dtypes), more than "
                        f"{MAX_POINTS:,}; give fewer values")


def grid(batches: tuple[int, ...], contexts: tuple[int, ...]) -> list[Shape]:
    """The decode grid: every batch size on every context length."""
    return [Shape("decode", decodes=b, decode_context=c) for c in contexts for b in batches]


def parse_ints(text: str, what: str) -> tuple[int, ...]:
    parts = [p for p in text.split(",") if p.strip()]
    _at_most(len(parts), MAX_VALUES, f"--{what}", "values")
    vals = tuple(_count(p, what, f"--{what}") for p in parts)
    if not vals or any(v < 1 for v in vals):
        raise UserError(f"--{what}: give positive whole numbers, comma-separated (e.g. 1,8,32)")
    return tuple(dict.fromkeys(vals))


def token_elements(use_mla: bool, num_kv_heads: int, head_size: int, head_size_v: int) -> int:
    """Elements one cached token takes in one layer: keys and values per KV
    head, or MLA's one latent vector (kv_lora_rank + rope dims = head_size)."""
    return head_size if use_mla else num_kv_heads * (head_size + head_size_v)


def deployment_kv_bytes(shape: Shape, page_size: int, groups: Any, kv_elem: int) -> int:
    """KV cache the whole model needs to hold this point's requests at once,
    every attention layer of every group, as vLLM's cache would have to: a
    sliding-window layer keeps about its window (plus the page being filled)
    per request, a full layer the whole context. Weights are not counted,
    so a point past this cannot be served on the device at all."""
    # (sequence length, requests of it): counted, not listed per request, so
    # a huge --batches value costs nothing to estimate (a list of 10**9 did)
    seqs = ((shape.decode_context + 1, shape.decodes), (shape.prefill_context + shape.prefill_new, shape.prefills))
    total = 0
    for g in groups:
        a = g.attn
        window = a.sliding_window
        held = sum(count * (min(n, window + page_size) if window else n) for n, count in seqs)
        pages = -(-held // page_size) + shape.num_requests  # each request's last page, partly filled
        total += len(g.layers) * pages * page_size * kv_elem * token_elements(
            a.use_mla, a.num_kv_heads, a.head_size, a.head_size_v)
    return total


ELEMENT_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4}
USABLE_MEMORY = 0.85  # of the device's: the allocator's and the kernels' workspaces take the rest


def kv_element_bytes(kv_cache_dtype: str, dtype: str) -> int:
    """Bytes of one cached element: fp8 caches one, else the model dtype's."""
    return 1 if kv_cache_dtype.startswith("fp8") else ELEMENT_BYTES.get(dtype, 2)


def peak_point_bytes(shape: Shape, page_size: int, groups: Any, kv_elem: int) -> int:
    """``point_bytes`` of the group whose run of ``shape`` takes the most."""
    return max(point_bytes(shape, page_size, token_elements(g.attn.use_mla, g.attn.num_kv_heads,
                                                            g.attn.head_size, g.attn.head_size_v), kv_elem)
               for g in groups)


def point_bytes(shape: Shape, page_size: int, token_elems: int, kv_elem: int,
                timed_cache_bytes: int = 1 << 30) -> int:
    """Device memory one point of ``run`` takes at its peak, estimated: the
    checked layer's cache, the timed layers' caches (``run`` cycles about
    ``timed_cache_bytes`` of them, at least one layer's), and the float32
    reference's copy of the cache."""
    tokens = shape.kv_tokens() + page_size * (shape.num_requests + 65)  # page rounding + spare pages
    per_layer = tokens * token_elems * kv_elem
    return per_layer + max(per_layer, timed_cache_bytes) + tokens * token_elems * 4


def run_size_error(shapes: list[Shape], page_size: int, groups: Any, dtype: str, kv_cache_dtype: str,
                   memory_bytes: int, usable: float = USABLE_MEMORY) -> str | None:
    """Why ``run`` cannot hold these shapes in ``memory_bytes``, or None.

    Checked before anything is allocated: ``--batch 10**9`` or ``--context
    10**30`` would otherwise end in an allocator error deep in torch (an
    overflow, or the host swapping) instead of one line that says what to
    lower. The estimate is ``point_bytes``, tune's own, per group."""
    elem = kv_element_bytes(kv_cache_dtype, dtype)
    budget = int(memory_bytes * usable)
    for shape in shapes:
        need = peak_point_bytes(shape, page_size, groups, elem)
        if need > budget:
            return (f"the {shape.kind} batch ({shape.describe()}, pages of {page_size}) needs about "
                    f"{_gib(need)}, {_gib(budget)} usable here; lower --batch, --context or --block-size")
    return None


# ``run --device cpu`` runs TRITON_ATTN / TRITON_MLA in Triton's interpreter, which reads about a
# million cached elements a second on a 2-core machine (Llama-3.1-8B heads, 2,048 elements a token:
# 16 x 1 new on 1024 took 46 s, 8 on 256 11 s, the default 2 on 24 3 s, two checks each). A step of
# at most this many elements a layer keeps each shape within about a minute there.
CPU_STEP_ELEMENTS = 5 << 23  # 41,943,040


def cpu_run_size_error(shapes: list[Shape], groups: Any) -> str | None:
    """Why ``run --device cpu`` would not finish these shapes in bounded time, or None: each
    shape's cached tokens x the elements a token takes in a layer (the largest group's),
    against ``CPU_STEP_ELEMENTS``."""
    per_token = max((token_elements(g.attn.use_mla, g.attn.num_kv_heads, g.attn.head_size, g.attn.head_size_v)
                     for g in groups), default=0)
    for shape in shapes:
        reads = shape.kv_tokens() * per_token
        if reads > CPU_STEP_ELEMENTS:
            return (f"--device cpu runs the kernels in Triton's interpreter: the {shape.kind} batch "
                    f"({shape.describe()}) reads {reads:,} cached elements a layer, past the CPU bound of "
                    f"{CPU_STEP_ELEMENTS:,} (about a minute a shape); lower --batch or --context, or run on a GPU")
    return None


def _gib(n: int) -> str:
    if n >= 1 << 70:  # past a zebibyte (and a float, from 10**309 on): the size is only absurd
        return f"more than {1 << 40:,} GiB"
    return f"{n / 2**30:,.1f} GiB"
