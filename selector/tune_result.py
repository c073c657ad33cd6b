"""What ``attn-select tune`` measured, and what it recommends. Pure: no torch.

One ``PointResult`` per (point, configuration), a configuration being a
setting (``tune_settings.Setting``) at one page size and KV dtype. vLLM's
default configuration is the default setting at page 16 (vLLM's block size
on CUDA) and the ``auto`` KV dtype, when the sweep holds them.

The recommendation: the configuration with the least projected step time
for the workload (per item: layers x per-layer time + build cost c, weighted),
given only when its win over vLLM's default exceeds the run-to-run noise
measured in the same sweep (the spread of the default's repeated timings at
the workload's points). A configuration that failed or was wrong at any
workload point is never a winner. Nor is a configuration measured through a
stand-in (a backend whose ``run`` kernel is attn-select's peer of vLLM's,
``BackendSpec.run_stand_in``): vLLM would run its own kernel there, so the
measurement says nothing about the setting. A stand-in that measures fastest
is reported beside the recommendation; a stand-in default gets none.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from attn_select.selector.tune_settings import Setting

OK, WRONG, FAILED, SKIPPED = "ok", "wrong", "failed", "skipped"
VLLM_BLOCK_SIZE = 16  # vLLM's default --block-size on CUDA
SCHEMA = "attn-select.tune/1"


@dataclass
class PointResult:
    point: str  # the shape, e.g. "decode 32x4096"
    kind: str  # decode | prefill
    batch: int
    context: int
    new_tokens: int
    page_size: int
    kv_cache_dtype: str
    setting: str  # Setting.label
    status: str = SKIPPED
    reason: str = ""
    kernels: str = ""  # what ran, per group: "BACKEND: kernel; ..."
    backends: list[str] = field(default_factory=list)  # the selected backends that ran, per group
    per_layer_us: float | None = None  # layer-weighted mean over the groups
    step_us: float | None = None  # sum over groups of c + L x per-layer
    build_us: float | None = None  # sum of the groups' build costs c
    kv_read_tbs: float | None = None  # all layers' KV bytes / their time
    first_call_s: float | None = None  # JIT compile / autotune included
    rel_error: float | None = None  # worst over groups and checks
    repeats_us: list[float] = field(default_factory=list)  # extra timings (vLLM's default: the noise)
    cached: bool = False
    same_as: str = ""  # the setting whose run this point shares (the same kernels), if any

    @property
    def config(self) -> tuple[str, int, str]:
        return (self.setting, self.page_size, self.kv_cache_dtype)

    @property
    def ok(self) -> bool:
        return self.status == OK and self.per_layer_us is not None

    def noise(self) -> float | None:
        """Relative spread (max - min) / min of this point's timings, repeats included."""
        xs = [x for x in [self.per_layer_us, *self.repeats_us] if x is not None]
        if len(xs) < 2 or min(xs) <= 0:
            return None
        return (max(xs) - min(xs)) / min(xs)


def point_from_dict(data: dict[str, Any]) -> PointResult:
    """A PointResult from its JSON (the cache's, or a report's points); one
    written before the ``backends`` field names them in its kernels
    ("BACKEND: kernel; ..."). A key it does not know is a TypeError."""
    if "backends" not in data:
        data = {**data, "backends": [part.split(":", 1)[0].strip() for part in data.get("kernels", "").split(";")
                                     if ":" in part]}
    return PointResult(**data)


def point_name(kind: str, batch: int, context: int, new_tokens: int) -> str:
    return f"decode {batch}x{context}" if kind == "decode" else f"prefill {batch}x{new_tokens}/{context}"


def config_label(config: tuple[str, int, str], pages: int, kvs: int) -> str:
    """A configuration's name; page and KV dtype only when the sweep varies them."""
    setting, page, kv = config
    extra = ([f"page {page}"] if pages > 1 else []) + ([f"kv {kv}"] if kvs > 1 else [])
    return setting + (f" ({', '.join(extra)})" if extra else "")


def default_config(results: Iterable[PointResult], default_label: str) -> tuple[str, int, str] | None:
    """vLLM's default configuration among those swept: the default setting,
    page 16 and KV auto when swept, else the first page / KV dtype given."""
    configs = [r.config for r in results if r.setting == default_label]
    if not configs:
        return None
    pages = list(dict.fromkeys(c[1] for c in configs))
    kvs = list(dict.fromkeys(c[2] for c in configs))
    page = VLLM_BLOCK_SIZE if VLLM_BLOCK_SIZE in pages else pages[0]
    kv = "auto" if "auto" in kvs else kvs[0]
    return (default_label, page, kv)


@dataclass
class PointBest:
    point: str
    page_size: int
    kv_cache_dtype: str
    fastest: str | None
    fastest_us: float | None
    default_us: float | None
    margin: float | None  # (default - fastest) / default
    noise: float | None
    fastest_stand_in: str = ""  # the fastest ran through a stand-in (stand_in_of)


def best_per_point(results: list[PointResult], default_label: str,
                   stand_ins: dict[str, str] | None = None) -> list[PointBest]:
    """Per (point, page, KV dtype): the fastest correct setting and its margin
    over vLLM's default setting there (a stand-in included, and said so)."""
    out = []
    keys = list(dict.fromkeys((r.point, r.page_size, r.kv_cache_dtype) for r in results))
    for key in keys:
        rows = [r for r in results if (r.point, r.page_size, r.kv_cache_dtype) == key]
        ok = [r for r in rows if r.ok]
        best = min(ok, key=lambda r: r.per_layer_us) if ok else None
        d = next((r for r in rows if r.setting == default_label and r.ok), None)
        margin = None
        if best is not None and d is not None and d.per_layer_us:
            margin = (d.per_layer_us - best.per_layer_us) / d.per_layer_us
        out.append(PointBest(key[0], key[1], key[2], best.setting if best else None,
                             best.per_layer_us if best else None, d.per_layer_us if d else None, margin,
                             d.noise() if d else None, stand_in_of(best, stand_ins or {}) if best else ""))
    return out


@dataclass
class Projection:
    config: tuple[str, int, str]
    step_us: float | None  # weighted mean step time over the workload; None: not correct everywhere
    missing: str = ""  # why not projected
    stand_in: str = ""  # "BACKEND: what ran instead of vLLM's kernel", when a stand-in ran


def stand_in_of(r: PointResult, stand_ins: dict[str, str]) -> str:
    """What in ``r`` ran in place of vLLM's own kernel ("" when nothing did)."""
    return "; ".join(f"{b}: {stand_ins[b]}" for b in dict.fromkeys(r.backends) if b in stand_ins)


@dataclass
class Recommendation:
    workload: list[str]
    default: tuple[str, int, str] | None
    projections: list[Projection]
    best: tuple[str, int, str] | None
    margin: float | None  # (default - best) / default
    noise: float | None  # the default's largest relative spread over the workload's points
    recommend: bool
    flags: list[str]
    text: str
    stand_in_note: str = ""  # a faster stand-in, or a stand-in default: why it is not the answer


def project(results: list[PointResult], workload: list[tuple[str, float]],
            stand_ins: dict[str, str] | None = None) -> list[Projection]:
    """Each configuration's weighted step time over the workload points."""
    total = sum(w for _, w in workload) or 1.0
    configs = list(dict.fromkeys(r.config for r in results))
    out = []
    for c in configs:
        acc, missing, stand_in = 0.0, "", ""
        for point, w in workload:
            r = next((r for r in results if r.config == c and r.point == point), None)
            if r is None or not r.ok or r.step_us is None:
                missing = f"{point}: {r.status + (': ' + r.reason if r.reason else '') if r else 'not measured'}"
                break
            acc += w * r.step_us
            stand_in = stand_in or stand_in_of(r, stand_ins or {})
        out.append(Projection(c, None if missing else acc / total, missing, stand_in))
    return out


def flags_for(setting: Setting, page: int, kv: str) -> list[str]:
    flags = setting.vllm_flags()
    if page != VLLM_BLOCK_SIZE:
        flags.append(f"--block-size {page}")
    if kv != "auto":
        flags.append(f"--kv-cache-dtype {kv}")
    return flags


def recommend(results: list[PointResult], workload: list[tuple[str, float]], settings: dict[str, Setting],
              default_label: str, stand_ins: dict[str, str] | None = None) -> Recommendation:
    """The recommendation for ``workload`` ((point, weight) pairs); ``stand_ins``:
    backend -> what ``run`` executes for it instead of vLLM's kernel."""
    names = [p for p, _ in workload]
    proj = project(results, workload, stand_ins)
    default = default_config(results, default_label)
    d = next((p for p in proj if p.config == default), None)
    ranked = sorted((p for p in proj if p.step_us is not None), key=lambda p: p.step_us)
    vllms = [p for p in ranked if not p.stand_in]  # measured on the kernels vLLM runs
    best = vllms[0].config if vllms else None
    noises = [r.noise() for r in results if r.config == default and r.point in names]
    noise = max((n for n in noises if n is not None), default=None)
    note = ""
    if d is not None and d.stand_in:
        note = (f"vLLM's default here runs {d.stand_in}: what vLLM's own kernel takes was not measured, "
                "so no setting is measured against it")
    elif ranked and ranked[0].stand_in and d is not None and d.step_us is not None:
        fast = ranked[0]
        note = (f"{fast.config[0]} measured {(d.step_us - fast.step_us) / d.step_us:.1%} faster than vLLM's "
                f"default, but on a stand-in ({fast.stand_in}); vLLM runs its own kernel there, so it is not "
                "recommended")

    def done(text: str, margin=None, rec=False, flags=()):
        return Recommendation(names, default, proj, best, margin, noise, rec, list(flags), text, note)

    if best is None:
        if ranked:  # a CPU sweep, say: only our stand-ins ran
            return done("only stand-ins ran correctly at every workload point (attn-select's kernels, not "
                        "vLLM's); no recommendation")
        return done("no configuration ran correctly at every workload point; no recommendation")
    if d is None or d.step_us is None:
        why = d.missing if d is not None else "not measured"
        if "past --max-seconds" in why:  # not a failure: the sweep ran out of time before it
            return done(f"vLLM's default was not measured in time ({why}); no recommendation "
                        f"(fastest measured: {best[0]})")
        return done(f"vLLM's default did not run correctly here ({why}); no recommendation "
                    f"(fastest measured: {best[0]})")
    if d.stand_in:
        return done(f"vLLM's default was measured through a stand-in; no recommendation (fastest of vLLM's "
                    f"own kernels: {best[0]})")
    margin = (d.step_us - vllms[0].step_us) / d.step_us
    if best == default or margin <= 0:
        return done("vLLM's default is the fastest configuration measured", margin)
    if noise is None:
        return done(f"{best[0]} is {margin:.1%} faster, but the run-to-run noise was not measured "
                    "(vLLM's default timed once per point); no recommendation", margin)
    if margin <= noise:
        return done(f"vLLM's default is within noise: {best[0]} is {margin:.1%} faster, "
                    f"run-to-run spread {noise:.1%}", margin)
    flags = flags_for(settings[best[0]], best[1], best[2])
    return done(f"{' '.join(flags) or '(no flags)'}: {margin:.1%} faster step than vLLM's default "
                f"(run-to-run spread {noise:.1%})", margin, True, flags)


def cache_key(**facts: object) -> str:
    """A stable key over everything a point's result depends on (GPU, driver,
    package versions, model facts, shape, page, KV dtype, setting, checks)."""
    blob = json.dumps(facts, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()[:32]


_ENTRY_BYTES = 1 << 20  # a point's JSON is a few KB


class ResultCache:
    """Finished points as one JSON file each under ``root``; None = no cache."""

    def __init__(self, root: Path | None):
        self.root = root

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> PointResult | None:
        """The finished point, or None (measure again) when the entry is
        missing or is no entry this version wrote: unreadable, not a regular
        file (a FIFO would block), larger than any, not JSON or nested
        past the bounds, not an object, a field missing or unknown."""
        if self.root is None:
            return None
        from attn_select.selector import safe_json
        from attn_select.selector.errors import UserError

        try:
            data = safe_json.read_json(self._path(key), "tune cache entry", _ENTRY_BYTES)
            if not isinstance(data, dict):
                return None
            r = point_from_dict(data)
        except (UserError, OSError, ValueError, TypeError, AttributeError, KeyError):
            return None
        r.cached = True
        return r

    def put(self, key: str, result: PointResult) -> None:
        if self.root is None or result.status not in (OK, WRONG):
            return  # a failure may be this host's (OOM, a busy GPU): measure it again next time
        p = self._path(key)
        try:
            p.parent.mkdir(parents=True, exist_ok=True)
            tmp = p.with_suffix(".tmp")
            tmp.write_text(json.dumps({**asdict(result), "cached": False}))
            tmp.replace(p)
        except OSError:
            pass  # a read-only cache dir costs only the re-run
