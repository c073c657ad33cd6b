"""What ``attn-select run`` found, as plain dataclasses (no torch), plus JSON.

One ``BackendRow`` per (group, batch shape, backend); per group the verdict
on the backend ``explain`` selected and the fastest backend per shape.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

RAN, SKIPPED, FAILED = "ran", "skipped", "failed"
# The reason of a row skipped because vLLM gives these requests to another
# path (an MLA builder's prefill requests): no verdict on the backend.
ROUTED_ELSEWHERE = "routed elsewhere: "


@dataclass
class Check:
    rel_errors: list[float]  # one per fresh-input check
    tolerance: float
    unwritten: int  # output elements still NaN after the run (poisoned before it)

    @property
    def ok(self) -> bool:
        return self.unwritten == 0 and all(e <= self.tolerance for e in self.rel_errors)


@dataclass
class Perf:
    per_layer_us: float  # median device time of one layer's attention
    min_us: float
    method: str  # cuda-graph | events | wall
    samples: int
    layers_timed: int  # distinct layer caches cycled through in the timed window
    first_call_s: float  # wall time of the first build + run (includes JIT compile / autotune)
    build_us: float  # host time of the once-per-step metadata build (c): fastest of many runs
    kv_bytes: int  # KV bytes one layer's attention must read
    kv_read_tbs: float  # kv_bytes / per_layer time, TB/s
    ceiling_fraction: float | None  # kv_read / copy ceiling
    num_layers: int  # L: layers of this group in the model
    step_us: float  # c + L x per-layer
    build_share: float  # c / step
    build_median_us: float | None = None  # median of the same runs (interference included)
    build_cpu_us: float | None = None  # thread CPU time of the fastest run (time off the CPU excluded)
    # fixed host workloads timed right after c, as c is: how fast this host was then
    host_probe_us: dict[str, float] | None = None
    build_samples: int | None = None  # timed runs c is the fastest of
    build_span_s: float | None = None  # seconds those runs were spread over
    tflops: float | None = None  # tensor FLOPs of one layer's attention / per-layer time, TFLOP/s


@dataclass
class BackendRow:
    group: str
    shape: str  # decode | prefill | mixed
    backend: str  # FLASHINFER, FLASH_ATTN, ...
    variant: str = ""  # e.g. "native decode" beside vLLM's pick
    status: str = SKIPPED
    reason: str = ""  # why skipped / the one-line error
    kernel: str = ""  # the inner kernel that ran
    selected: bool = False  # the backend explain selected for this group
    check: Check | None = None
    perf: Perf | None = None

    @property
    def label(self) -> str:
        return f"{self.backend} ({self.variant})" if self.variant else self.backend

    @property
    def correct(self) -> bool:
        return self.status == RAN and self.check is not None and self.check.ok

    @property
    def routed_elsewhere(self) -> bool:
        return self.status == SKIPPED and self.reason.startswith(ROUTED_ELSEWHERE)


@dataclass
class GroupRun:
    name: str
    layers: int
    attention: dict  # head sizes, heads, window, soft cap, sinks
    selected: str | None
    selection_error: str | None
    fa_version: int | None
    flashinfer_decode: str | None
    rows: list[BackendRow] = field(default_factory=list)
    fastest: dict[str, str] = field(default_factory=dict)  # shape -> backend label
    verdict: str = ""  # confirmed | failed | wrong | missing | not-selected
    verdict_detail: str = ""


@dataclass
class RunReport:
    model: str
    device: str
    capability: str | None
    torch: str
    dtype: str
    kv_cache_dtype: str
    page_size: int
    shapes: dict[str, str]  # kind -> description
    copy_ceiling_tbs: float | None
    kernels_source: str
    groups: list[GroupRun] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    exit_code: int = 0
    summary: str = ""

    def to_json(self) -> str:
        def conv(o):
            d = asdict(o)
            return d

        data = conv(self)
        for g, gd in zip(self.groups, data["groups"]):
            for r, rd in zip(g.rows, gd["rows"]):
                rd["correct"] = r.correct
                if r.check is not None:
                    rd["check"]["ok"] = r.check.ok
        return json.dumps(data, indent=2, default=str)


def fastest_per_shape(rows: list[BackendRow]) -> dict[str, str]:
    best: dict[str, tuple[float, str]] = {}
    for r in rows:
        if r.correct and r.perf is not None:
            t = r.perf.per_layer_us
            if r.shape not in best or t < best[r.shape][0]:
                best[r.shape] = (t, r.label)
    return {k: v[1] for k, v in best.items()}
