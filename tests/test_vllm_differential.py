"""Differential test: attn-select's selector against vLLM 0.33.0's OWN selection
code, case by case, over a broad sampled grid.

vLLM never runs in this process. ``tests/vllm_oracle/oracle.py`` runs under a
separate python that has ``vllm==0.33.0`` installed (``ATTN_SELECT_VLLM_PYTHON``,
default ``/tmp/vllm-venv/bin/python``); the cases go to it as JSON and its
answers come back as JSON. Without such a python every test here is skipped.

Compared per case: the priority list, every backend's reason list, the
selected backend, the ValueError text, the ``--block-size`` warning and
``get_flash_attn_version()`` (without arguments and with the case's head size).
For MLA cases also the MLA prefill selection (``get_mla_prefill_backend``):
its selector config, priority list, every candidate's reasons, the choice and
the ValueError text, with the case's explicit ``mla_prefill_backend`` if any.

Standalone, without pytest (prints the divergence summary)::

    python -m tests.test_vllm_differential [--backend NAME] [--show 30] [--json OUT]

The oracle's answers are cached (keyed by the oracle's source, the vLLM python
and the case) in ``$ATTN_SELECT_ORACLE_CACHE`` (default: a folder in the
system temp dir; ``0`` disables), so a re-run after fixing a spec is fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import os
import random
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path

import pytest

from attn_select.backends import registry
from attn_select.selector.config import (
    AttentionType,
    Capability,
    EngineContext,
    Kernels,
    SelectorConfig,
)
from attn_select.backends.mla.prefill import registry as prefill_registry
from attn_select.selector.fa_version import resolve_fa_version
from attn_select.selector.mla_prefill_config import mla_prefill_selector_config
from attn_select.selector.mla_prefill_select import select_mla_prefill
from attn_select.selector.select import select

pytestmark = pytest.mark.vllm

ORACLE_DIR = Path(__file__).resolve().parent / "vllm_oracle"
ORACLE = ORACLE_DIR / "oracle.py"
VLLM_PYTHON_ENV = "ATTN_SELECT_VLLM_PYTHON"
DEFAULT_VLLM_PYTHON = "/tmp/vllm-venv/bin/python"
VLLM_VERSION = "0.33.0"
CACHE_ENV = "ATTN_SELECT_ORACLE_CACHE"


# --------------------------------------------------------------------------
# Which python runs the oracle
# --------------------------------------------------------------------------

@lru_cache(maxsize=1)
def vllm_python() -> tuple[str | None, str]:
    """(path, why) of a python that has vLLM 0.33.0; path None = skip, why says why.

    Only package metadata is read here (vLLM itself takes ~10 s to import)."""
    path = os.environ.get(VLLM_PYTHON_ENV) or (
        DEFAULT_VLLM_PYTHON if Path(DEFAULT_VLLM_PYTHON).exists() else None
    )
    if not path:
        return None, f"no vLLM python: set {VLLM_PYTHON_ENV} (see tests/vllm_oracle/README.md)"
    probe = (
        "import importlib.metadata as m, importlib.util as u, sys;"
        "sys.exit(3) if u.find_spec('vllm') is None else print(m.version('vllm'))"
    )
    try:
        out = subprocess.run([path, "-c", probe], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{VLLM_PYTHON_ENV}={path} cannot run: {e}"
    if out.returncode != 0:
        return None, f"{path} cannot import vllm"
    version = out.stdout.strip()
    if version != VLLM_VERSION:
        return None, f"{path} has vllm {version}; the oracle needs vllm=={VLLM_VERSION}"
    return path, version


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    cap: Capability
    cfg: SelectorConfig
    kernels: Kernels = Kernels()
    ctx: EngineContext = EngineContext()
    num_heads: int | None = None
    backend: str | None = None
    mla_prefill_backend: str | None = None  # attention_config.mla_prefill_backend (MLA cases)

    def to_json(self) -> dict:
        out = {
            "capability": [self.cap.major, self.cap.minor],
            "selector_config": self.cfg._asdict(),
            "num_heads": self.num_heads,
            "backend": self.backend,
            "kernels": {
                n.replace("-", "_"): getattr(self.kernels, n.replace("-", "_"))
                for n in Kernels.NAMES
            },
            "context": self.ctx.changed(),
        }
        if self.cfg.use_mla:
            out["mla_prefill"] = {"backend": self.mla_prefill_backend}
        return out

    def key(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    def label(self) -> str:
        """One compact line that rebuilds the case in the reader's head."""
        c = self.cfg
        parts = [f"sm{self.cap.major}{self.cap.minor}", f"hs{c.head_size}", c.dtype,
                 f"kv={c.kv_cache_dtype}"]
        if c.block_size is not None:
            parts.append(f"bs={c.block_size}")
        if c.use_mla:
            parts.append("mla")
        if c.use_sparse:
            parts.append("sparse")
        if self.num_heads is not None:
            parts.append(f"heads={self.num_heads}")
        if c.attn_type != AttentionType.DECODER.value:
            parts.append(f"attn={c.attn_type}")
        skip = {"head_size", "dtype", "kv_cache_dtype", "block_size", "use_mla", "use_sparse",
                "attn_type"}
        parts += [f"+{f}" for f in SelectorConfig._fields if f not in skip and getattr(c, f) is True]
        absent = [n for n in Kernels.NAMES if not getattr(self.kernels, n.replace("-", "_"))]
        if absent:
            parts.append("no:" + ",".join(absent))
        changed = self.ctx.changed()
        if changed:
            parts.append("ctx{" + ",".join(f"{k}={v}" for k, v in changed.items()) + "}")
        if self.backend:
            parts.append(f"backend={self.backend}")
        if self.mla_prefill_backend:
            parts.append(f"mla_prefill_backend={self.mla_prefill_backend}")
        return " ".join(parts)


CAPS = [Capability(*c) for c in
        ((7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1))]
DENSE_HEADS = (64, 80, 96, 128, 192, 256, 512)
DTYPES = ("bfloat16", "float16", "float32")
DENSE_KV = ("auto", "fp8", "fp8_e4m3", "fp8_e5m2", "nvfp4", "turboquant_k8v4")
MLA_KV = ("auto", "fp8", "fp8_e4m3", "fp8_ds_mla", "nvfp4", "bfloat16")
BLOCKS = (None, 16, 32, 64, 128, 256)
MLA_HEADS = (8, 16, 128)
ATTN_TYPES = tuple(t.value for t in AttentionType)
FLAGS = ("has_sink", "use_mm_prefix", "use_per_head_quant_scales", "has_sliding_window",
         "use_non_causal", "use_batch_invariant", "use_kv_connector", "use_pcp",
         "use_adaptive_verification", "use_dcp", "use_rswa")

FULL = Kernels()
KERNEL_SETS = {
    "no-fa3": FULL._replace(fa3=False),
    "no-fa4": FULL._replace(fa4=False),
    "no-flashinfer": FULL._replace(flashinfer=False),  # package there, no cubins/JIT
    "no-flashinfer-package": FULL._replace(flashinfer=False, flashinfer_python=False),
    "no-cubins": FULL._replace(trtllm_cubins=False),
    "no-flashmla": FULL._replace(flashmla=False),
    "no-tokenspeed": FULL._replace(tokenspeed_mla=False),
    "no-fa2-fa3": FULL._replace(fa2=False, fa3=False),
}
# MLA model dims of DeepSeek-V3 (R1): 512 latent + 64 RoPE = 576.
R1_DIMS = dict(mla_qk_nope_head_dim=128, mla_qk_rope_head_dim=64, mla_v_head_dim=128,
               mla_kv_lora_rank=512)
# (qk_nope, qk_rope, v) for the MLA prefill grid: R1, the 192/64/256 layout
# Blackwell special-cases, the other FLASH_ATTN ones, one nobody supports,
# and absent attributes (None: read as 0). vLLM's own attention-backend checks
# read some of these attributes without a default (FLASHINFER_MLA_SPARSE_SM90,
# the 10.x MLA backends) and raise AttributeError, so absent dims are put only
# to dense MLA below 10.x.
PREFILL_DIMS = ((128, 64, 128), (192, 64, 256), (64, 64, 128), (256, 0, 256), (128, 64, 256),
                (None, None, None))
PREFILL_KERNEL_SETS = ("no-fa2-fa3", "no-flashinfer", "no-flashinfer-package", "no-tokenspeed")


def dense(hs=128, dtype="bfloat16", kv="auto", block=None, **flags) -> SelectorConfig:
    return SelectorConfig(head_size=hs, dtype=dtype, kv_cache_dtype=kv, block_size=block, **flags)


def mla(hs=576, dtype="bfloat16", kv="auto", block=None, sparse=False, **flags) -> SelectorConfig:
    return SelectorConfig(head_size=hs, dtype=dtype, kv_cache_dtype=kv, block_size=block,
                          use_mla=True, use_sparse=sparse, **flags)


def model_ctx(case: Case, rng: random.Random, **extra) -> EngineContext:
    """A has_model context consistent with the case (head size, heads, cache dtype)."""
    cfg = case.cfg
    if cfg.use_mla:
        fields = dict(model_head_size=cfg.head_size, model_num_heads=case.num_heads or 128,
                      model_num_kv_heads=1, **R1_DIMS)
        if cfg.use_sparse:
            fields["mla_index_topk"] = 2048
    else:
        kv_heads = rng.choice((1, 8))
        fields = dict(model_head_size=cfg.head_size, model_num_heads=rng.choice((8, 32, 64)),
                      model_num_kv_heads=kv_heads)
    kv = cfg.kv_cache_dtype or "auto"
    # vLLM rejects a float KV cache dtype other than the model's own dtype.
    fields["cache_dtype"] = "auto" if kv in ("float16", "bfloat16") and kv != cfg.dtype else kv
    fields.update(extra)
    if fields.get("dcp_size", 1) > 1 and not cfg.use_mla:
        fields["model_num_kv_heads"] = 1  # vLLM: DCP needs tp > the total KV heads
    return EngineContext(has_model=True, **fields)


# Context variants applied to sampled base cases: (name, builder(case, rng) -> ctx).
CONTEXTS = [
    ("fa-version-2", lambda c, r: EngineContext(flash_attn_version=2)),
    ("fa-version-3", lambda c, r: EngineContext(flash_attn_version=3)),
    ("fa-version-4", lambda c, r: EngineContext(flash_attn_version=4)),
    ("batch-invariant", lambda c, r: EngineContext(batch_invariant=True)),
    ("trtllm-on", lambda c, r: EngineContext(use_trtllm_attention=True)),
    ("trtllm-off", lambda c, r: EngineContext(use_trtllm_attention=False)),
    ("cache-dtype", lambda c, r: EngineContext(cache_dtype=c.cfg.kv_cache_dtype or "auto")),
    ("no-q-quant", lambda c, r: EngineContext(disable_flashinfer_q_quantization=True)),
    ("model", lambda c, r: model_ctx(c, r)),
    ("model-softcap", lambda c, r: model_ctx(c, r, attn_logit_softcapping=True)),
    ("model-mm-prefix", lambda c, r: model_ctx(c, r, is_mm_prefix_lm=True)),
    ("model-rswa", lambda c, r: model_ctx(c, r, rswa_window=512)),
    ("model-diffusion", lambda c, r: model_ctx(c, r, is_diffusion=True)),
    ("model-dcp2", lambda c, r: model_ctx(c, r, dcp_size=2)),
    ("model-pcp2", lambda c, r: model_ctx(c, r, pcp_size=2)),
    ("model-fa4-bi", lambda c, r: model_ctx(c, r, flash_attn_version=4, batch_invariant=True)),
]


def _mla_base(rng: random.Random, cap: Capability, sparse: bool) -> Case:
    hs = rng.choice((576, 576, 576, 512, 128))
    kv = rng.choice(MLA_KV + (("nvfp4_ds_mla",) if sparse else ()))
    return Case(cap, mla(hs=hs, dtype=rng.choice(("bfloat16", "bfloat16", "float16")), kv=kv,
                         block=rng.choice((None, 32, 64, 128)), sparse=sparse),
                num_heads=rng.choice(MLA_HEADS + (None,)))


def build_grid(seed: int = 0) -> list[Case]:
    """A few thousand cases: structured sub-grids, sampled, deduplicated."""
    rng = random.Random(seed)
    out: list[Case] = []

    # 1. dense core: every capability x head size x dtype, two KV dtypes, a block size
    for cap in CAPS:
        for hs in DENSE_HEADS:
            for dtype in DTYPES:
                for kv in rng.sample(DENSE_KV, 2):
                    out.append(Case(cap, dense(hs, dtype, kv, rng.choice(BLOCKS))))
    # 2. KV dtype x block size on every capability
    for cap in CAPS:
        for kv in DENSE_KV:
            for block in BLOCKS:
                out.append(Case(cap, dense(rng.choice((64, 128, 256)), "bfloat16", kv, block)))
    # 3. each boolean flag on alone
    for cap in CAPS:
        for flag in FLAGS:
            for hs in (128, 256, rng.choice(DENSE_HEADS)):
                for kv in ("auto", rng.choice(DENSE_KV[1:])):
                    out.append(Case(cap, dense(hs, "bfloat16", kv, rng.choice(BLOCKS),
                                               **{flag: True})))
    # 4. attention types
    for cap in CAPS:
        for attn in ATTN_TYPES:
            for hs in (64, 128, 256):
                out.append(Case(cap, dense(hs, rng.choice(DTYPES), "auto", attn_type=attn)))
    # 5. MLA dense and 6. MLA sparse
    for cap in CAPS:
        for heads in MLA_HEADS + (None,):
            for kv in MLA_KV:
                for block in (None, 32, 64, 128):
                    if rng.random() < 0.5:
                        out.append(Case(cap, mla(kv=kv, block=block), num_heads=heads))
        for heads in MLA_HEADS:
            for kv in ("auto", "fp8", "fp8_ds_mla", "nvfp4_ds_mla", "bfloat16"):
                for hs in (576, 512):
                    out.append(Case(cap, mla(hs=hs, kv=kv, block=rng.choice((None, 64)),
                                             sparse=True), num_heads=heads))
    # 7. MLA with each flag alone, and MLA attention types / dtypes
    for cap in CAPS:
        for flag in FLAGS:
            sparse = rng.random() < 0.3
            out.append(Case(cap, mla(kv=rng.choice(("auto", "fp8")), sparse=sparse, **{flag: True}),
                            num_heads=rng.choice(MLA_HEADS)))
        for attn in ATTN_TYPES[1:]:
            out.append(Case(cap, mla(attn_type=attn), num_heads=16))
        for dtype in DTYPES:
            out.append(Case(cap, mla(dtype=dtype, sparse=rng.random() < 0.5), num_heads=128))

    base = list(out)
    # 8. kernel subsets on a sample of everything above
    for kernels in KERNEL_SETS.values():
        for case in rng.sample(base, 150):
            out.append(replace(case, kernels=kernels))
    # 9. contexts on sampled dense and MLA cases
    dense_base = [c for c in base if not c.cfg.use_mla]
    mla_base = [c for c in base if c.cfg.use_mla]
    for _, make in CONTEXTS:
        for case in rng.sample(dense_base, 45) + rng.sample(mla_base, 20):
            out.append(replace(case, ctx=make(case, rng)))
    # realistic pairs: the selector flag together with the config fact it comes from
    for cap in CAPS:
        for hs in (128, 256):
            c = Case(cap, dense(hs, use_batch_invariant=True))
            out.append(replace(c, ctx=EngineContext(batch_invariant=True)))
            c = Case(cap, dense(hs, use_dcp=True))
            out.append(replace(c, ctx=model_ctx(c, rng, dcp_size=2)))
            c = Case(cap, dense(hs, use_rswa=True))
            out.append(replace(c, ctx=model_ctx(c, rng, rswa_window=512)))
            c = Case(cap, dense(hs, use_mm_prefix=True))
            out.append(replace(c, ctx=model_ctx(c, rng, is_mm_prefix_lm=True)))
        for sparse in (False, True):
            c = _mla_base(rng, cap, sparse)
            out.append(replace(c, ctx=model_ctx(c, rng)))
            c = replace(c, cfg=c.cfg._replace(use_dcp=True))
            out.append(replace(c, ctx=model_ctx(c, rng, dcp_size=2)))
    # 10. MLA models (DeepSeek-R1 dims; index_topk when sparse) on every capability
    for cap in CAPS:
        for kv in MLA_KV:
            for heads in (16, 128):
                for sparse in (False, True):
                    c = Case(cap, mla(kv=kv, block=rng.choice((None, 64)), sparse=sparse),
                             num_heads=heads)
                    out.append(replace(c, ctx=model_ctx(c, rng)))
    # 11. every backend named explicitly on sampled cases
    for name in registry.BACKENDS:
        for case in rng.sample(dense_base, 12) + rng.sample(mla_base, 12):
            out.append(replace(case, backend=name))
    # 12. MLA prefill: model dims x dtype on every capability, auto and one
    #     explicit prefill backend each; every prefill backend named (also under
    #     VLLM_BATCH_INVARIANT); the kernel sets its checks read
    for cap in CAPS:
        for nope, rope, v in PREFILL_DIMS:
            dims = dict(mla_qk_nope_head_dim=nope, mla_qk_rope_head_dim=rope, mla_v_head_dim=v)
            for dtype in DTYPES:
                sparse = rng.random() < 0.2
                if nope is None and (sparse or cap.major >= 10):
                    continue
                c = Case(cap, mla(dtype=dtype, sparse=sparse), num_heads=16)
                c = replace(c, ctx=model_ctx(c, rng, **dims))
                out.append(c)
                out.append(replace(c, mla_prefill_backend=rng.choice(prefill_registry.ENUM_ORDER)))
        r1 = Case(cap, mla(), num_heads=128)
        r1 = replace(r1, ctx=model_ctx(r1, rng))
        for name in prefill_registry.ENUM_ORDER:
            out.append(replace(r1, mla_prefill_backend=name))
            out.append(replace(r1, mla_prefill_backend=name,
                               ctx=r1.ctx._replace(batch_invariant=True)))
        for kernels in PREFILL_KERNEL_SETS:
            out.append(replace(r1, kernels=KERNEL_SETS[kernels]))
            out.append(replace(r1, kernels=KERNEL_SETS[kernels],
                               mla_prefill_backend=rng.choice(prefill_registry.ENUM_ORDER[:4])))

    seen: set[str] = set()
    unique = []
    for case in out:
        k = case.key()
        if k not in seen:
            seen.add(k)
            unique.append(case)
    return unique


# --------------------------------------------------------------------------
# The two sides
# --------------------------------------------------------------------------

def _oracle_digest(python: str) -> str:
    h = hashlib.sha256()
    for f in sorted(ORACLE_DIR.glob("*.py")) + sorted(ORACLE_DIR.glob("*.c")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    h.update(python.encode())
    return h.hexdigest()[:16]


def _cache_file(python: str) -> Path | None:
    where = os.environ.get(CACHE_ENV, "")
    if where == "0":
        return None
    root = Path(where) if where else Path(tempfile.gettempdir()) / "attn-select-vllm-oracle"
    return root / f"{_oracle_digest(python)}.json"


def run_oracle(cases: list[Case], python: str) -> list[dict]:
    """vLLM's answers for ``cases``, from the cache where possible."""
    cache_path = _cache_file(python)
    cache: dict[str, dict] = {}
    if cache_path is not None and cache_path.exists():
        try:
            cache = json.loads(cache_path.read_text())
        except ValueError:
            cache = {}
    keys = [hashlib.sha256(c.key().encode()).hexdigest() for c in cases]
    missing = [i for i, k in enumerate(keys) if k not in cache]
    if missing:
        proc = subprocess.run(
            [python, str(ORACLE)],
            input=json.dumps([cases[i].to_json() for i in missing]),
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            raise RuntimeError(f"oracle failed (rc {proc.returncode}):\n{proc.stderr[-4000:]}")
        for i, result in zip(missing, json.loads(proc.stdout)):
            cache[keys[i]] = result
        if cache_path is not None:
            cache_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache_path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps(cache))
            os.replace(tmp, cache_path)
    return [cache[k] for k in keys]


def ours(case: Case) -> dict:
    """attn-select's answer in the oracle's shape."""
    try:
        sel = select(case.cfg, case.cap, case.kernels, case.ctx, case.num_heads, case.backend)
    except Exception as e:  # a crash on our side is a divergence, not a test error
        return {"crash": f"{type(e).__name__}: {e}"}
    fa = {}
    for key, kwargs in (("default", {}), ("head_size", {"head_size": case.cfg.head_size})):
        try:
            fa[key] = resolve_fa_version(case.cap, case.kernels, case.ctx, **kwargs).version
        except Exception as e:
            fa[key] = f"crash: {type(e).__name__}: {e}"
    out = {
        "priorities": list(sel.priority_order),
        "reasons": {c.name: list(c.reasons) for c in sel.candidates},
        "selected": sel.selected,
        "error": sel.error,
        "warning": sel.warning,
        "fa_version": fa,
    }
    if case.cfg.use_mla:
        try:
            out["mla_prefill"] = ours_mla_prefill(case)
        except Exception as e:
            return {"crash": f"mla_prefill: {type(e).__name__}: {e}"}
    return out


def ours_mla_prefill(case: Case) -> dict:
    """attn-select's MLA prefill selection in the oracle's shape."""
    cfg = mla_prefill_selector_config(case.ctx, case.cfg.dtype)
    p = select_mla_prefill(cfg, case.cap, case.kernels, case.ctx.batch_invariant,
                           case.mla_prefill_backend)
    return {
        "selector_config": cfg.vllm_repr(),
        "priorities": list(p.priority_order),
        "reasons": {c.name: list(c.reasons) for c in p.candidates},
        "selected": p.selected,
        "error": p.error,
    }


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Divergence:
    index: int  # position in the grid
    # priorities | reasons | selected | error | warning | fa_version | oracle | crash, and for
    # the MLA prefill selection prefill_config | prefill_priorities | prefill_reasons |
    # prefill_selected | prefill_error
    field: str
    backend: str  # the backend concerned, or "-"
    ours: object
    vllm: object

    def group(self) -> str:
        """Reason-list divergences group by backend; the others by field."""
        if self.field == "prefill_reasons":
            return f"prefill {self.backend}"
        return self.backend if self.field == "reasons" else f"<{self.field}>"

    def signature(self) -> str:
        """What differs, without the case: divergences with one signature
        usually share one cause."""
        if (self.field in ("reasons", "prefill_reasons") and isinstance(self.ours, list)
                and isinstance(self.vllm, list)):
            # An import failure replaces every other reason: one cause, however
            # many ordinary reasons the other side lists.
            for side, mine, other in (("vLLM", self.vllm, self.ours), ("ours", self.ours, self.vllm)):
                if _is_import_failure(mine) and not _is_import_failure(other):
                    return f"import fails only in {side}: {mine[0]}"
            only_v = [r for r in self.vllm if r not in self.ours]
            only_o = [r for r in self.ours if r not in self.vllm]
            if not only_v and not only_o:
                return "same reasons, different order"
            parts = []
            if only_v:
                parts.append(f"vLLM only {only_v}")
            if only_o:
                parts.append(f"ours only {only_o}")
            return "; ".join(parts)
        if self.field in ("error", "warning", "prefill_error"):
            if isinstance(self.ours, str) and isinstance(self.vllm, str):
                a, b = _text_diff(self.ours, self.vllm)
                return f"{self.field} text: ours {a!r} vs vLLM {b!r}"
            return f"{self.field}: ours={_short(self.ours)} vLLM={_short(self.vllm)}"
        if self.field == "fa_version":
            return f"{self.backend}: ours={self.ours} vLLM={self.vllm}"
        return f"ours={_short(self.ours)} vLLM={_short(self.vllm)}"


def _is_import_failure(reasons: list[str]) -> bool:
    """get_valid_backends' "Type: message" entry for a class that failed to import."""
    return len(reasons) == 1 and re.match(r"^[A-Z]\w*(Error|Exception): ", reasons[0]) is not None


def _text_diff(a: str, b: str, context: int = 12) -> tuple[str, str]:
    """The differing middle of two texts, with a little context either side."""
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    q = 0
    while q < min(len(a), len(b)) - p and a[-1 - q] == b[-1 - q]:
        q += 1
    lo = max(0, p - context)
    return a[lo:len(a) - q + context][:120], b[lo:len(b) - q + context][:120]


def _short(value: object, width: int = 110) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= width else text[: width - 3] + "..."


def compare(index: int, mine: dict, theirs: dict) -> list[Divergence]:
    out: list[Divergence] = []
    if theirs.get("oracle_error"):
        return [Divergence(index, "oracle", "-", None, theirs["oracle_error"])]
    if "crash" in mine:
        return [Divergence(index, "crash", "-", mine["crash"], None)]
    if mine["priorities"] != theirs["priorities"]:
        out.append(Divergence(index, "priorities", "-", mine["priorities"], theirs["priorities"]))
    reasons_agree = True
    for name in dict.fromkeys([*theirs["reasons"], *mine["reasons"]]):
        a = mine["reasons"].get(name)
        b = theirs["reasons"].get(name)
        if a != b:
            reasons_agree = False
            out.append(Divergence(index, "reasons", name, a, b))
    if mine["selected"] != theirs["selected"]:
        out.append(Divergence(index, "selected", theirs["selected"] or mine["selected"] or "-",
                              mine["selected"], theirs["selected"]))
    # Texts built from the reasons differ whenever the reasons do: report
    # them only when the reasons agree, so each cause is counted once.
    if reasons_agree:
        for field in ("error", "warning"):
            if mine[field] != theirs[field]:
                out.append(Divergence(index, field, theirs["selected"] or "-",
                                      mine[field], theirs[field]))
    for key in ("default", "head_size"):
        a, b = mine["fa_version"].get(key), (theirs["fa_version"] or {}).get(key)
        if a != b:
            out.append(Divergence(index, "fa_version", key, a, b))
    out += compare_mla_prefill(index, mine.get("mla_prefill"), theirs.get("mla_prefill"))
    return out


def compare_mla_prefill(index: int, mine: dict | None, theirs: dict | None) -> list[Divergence]:
    if mine is None and theirs is None:
        return []
    if mine is None or theirs is None:
        return [Divergence(index, "prefill_selected", "-", mine, theirs)]
    out = []
    for key, field in (("selector_config", "prefill_config"), ("priorities", "prefill_priorities")):
        if mine[key] != theirs[key]:
            out.append(Divergence(index, field, "-", mine[key], theirs[key]))
    agree = True
    for name in dict.fromkeys([*theirs["reasons"], *mine["reasons"]]):
        a, b = mine["reasons"].get(name), theirs["reasons"].get(name)
        if a != b:
            agree = False
            out.append(Divergence(index, "prefill_reasons", name, a, b))
    if mine["selected"] != theirs["selected"]:
        out.append(Divergence(index, "prefill_selected", theirs["selected"] or mine["selected"] or "-",
                              mine["selected"], theirs["selected"]))
    if agree and mine["error"] != theirs["error"]:
        out.append(Divergence(index, "prefill_error", theirs["selected"] or "-", mine["error"],
                              theirs["error"]))
    return out


@dataclass
class Report:
    cases: list[Case]
    divergences: list[Divergence]
    python: str

    def of(self, *fields: str) -> list[Divergence]:
        return [d for d in self.divergences if d.field in fields]

    def summary(self, divergences: list[Divergence] | None = None, show: int = 30) -> str:
        divs = self.divergences if divergences is None else divergences
        lines = []
        bad_cases = {d.index for d in divs}
        lines.append(
            f"vLLM {VLLM_VERSION} differential ({self.python}): {len(self.cases)} cases, "
            f"{len(bad_cases)} diverge, {len(divs)} divergences"
        )
        if not divs:
            return lines[0]
        groups: dict[str, list[Divergence]] = defaultdict(list)
        for d in divs:
            groups[d.group()].append(d)
        lines.append("")
        lines.append("By backend (most frequent first); each cause with one example:")
        for group, ds_all in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"  {group}: {len(ds_all)}")
            sigs: dict[str, list[Divergence]] = defaultdict(list)
            for d in ds_all:
                sigs[d.signature()].append(d)
            for sig, ds in sorted(sigs.items(), key=lambda kv: -len(kv[1]))[:8]:
                ex = ds[0]
                lines.append(f"    {len(ds):5d}x  {_short(sig, 160)}")
                lines.append(f"           e.g. #{ex.index} {self.cases[ex.index].label()}")
            if len(sigs) > 8:
                lines.append(f"           ... and {len(sigs) - 8} more causes")
        lines.append("")
        # One case per cause first (most frequent cause first), then the rest in order.
        picked: dict[int, None] = {}
        for _, ds_all in sorted(groups.items(), key=lambda kv: -len(kv[1])):
            by_sig: dict[str, int] = {}
            for d in ds_all:
                by_sig.setdefault(d.signature(), d.index)
            picked.update(dict.fromkeys(by_sig.values()))
        picked.update(dict.fromkeys(sorted(bad_cases)))
        first = set(list(picked)[:show])
        lines.append(f"{len(first)} diverging cases (one per cause first), grouped by backend:")
        rows = [d for d in divs if d.index in first]
        rows.sort(key=lambda d: (d.group(), d.index))
        last = None
        for d in rows:
            if d.group() != last:
                lines.append(f"  [{d.group()}]")
                last = d.group()
            lines.append(f"    #{d.index:<5d} {d.field:<10s} {self.cases[d.index].label()}")
            a, b = d.ours, d.vllm
            if isinstance(a, str) and isinstance(b, str) and len(a) + len(b) > 200:
                a, b = (f"...{x}..." for x in _text_diff(a, b))
            lines.append(f"           ours: {_short(a, 150)}")
            lines.append(f"           vLLM: {_short(b, 150)}")
        return "\n".join(lines)


def run_differential(python: str, seed: int = 0, backend: str | None = None,
                     max_cases: int | None = None, mla_only: bool = False) -> Report:
    cases = build_grid(seed)
    if mla_only:
        cases = [c for c in cases if c.cfg.use_mla]
    if backend is not None:
        name = registry.get(backend).name
        cases = [c for c in cases if name in ours(c).get("reasons", {})]
    if max_cases is not None:
        cases = cases[:max_cases]
    theirs = run_oracle(cases, python)
    divs: list[Divergence] = []
    for i, (case, result) in enumerate(zip(cases, theirs)):
        divs.extend(compare(i, ours(case), result))
    if backend is not None:
        divs = [d for d in divs if d.backend in (name, "-") or d.field != "reasons"]
    return Report(cases, divs, python)


# --------------------------------------------------------------------------
# pytest
# --------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report() -> Report:
    python, why = vllm_python()
    if python is None:
        pytest.skip(why)
    return run_differential(python)


def _check(report: Report, *fields: str) -> None:
    divs = report.of(*fields)
    if divs:
        pytest.fail(report.summary(divs), pytrace=False)


def test_grid_is_broad() -> None:
    """The grid reaches every capability, backend name and kernel set (no vLLM needed)."""
    cases = build_grid()
    assert len(cases) > 2000
    assert {c.cap for c in cases} == set(CAPS)
    assert {c.backend for c in cases} >= set(registry.BACKENDS)
    assert {c.kernels for c in cases} >= set(KERNEL_SETS.values())
    assert {c.mla_prefill_backend for c in cases} >= set(prefill_registry.ENUM_ORDER)
    assert {(c.ctx.mla_qk_nope_head_dim, c.ctx.mla_qk_rope_head_dim, c.ctx.mla_v_head_dim)
            for c in cases if c.cfg.use_mla and c.ctx.has_model} >= set(PREFILL_DIMS)
    for c in cases:
        sent = c.to_json()
        assert list(sent["selector_config"]) == list(SelectorConfig._fields)
        assert len(sent["kernels"]) == len(Kernels.NAMES)


def test_compare_finds_each_kind_of_divergence() -> None:
    """The comparison itself, on our own answer and doctored copies (no vLLM needed)."""
    case = Case(Capability(9, 0), dense(128, kv="fp8"))
    mine = ours(case)
    assert compare(0, mine, json.loads(json.dumps(mine))) == []

    theirs = json.loads(json.dumps(mine))
    name = mine["priorities"][-1]
    theirs["reasons"][name] = theirs["reasons"][name] + ["made-up reason"]
    theirs["error"] = "different text"
    divs = compare(0, mine, theirs)
    assert [(d.field, d.backend) for d in divs] == [("reasons", name)]  # error not double-counted
    assert divs[0].signature() == "vLLM only ['made-up reason']"

    theirs = json.loads(json.dumps(mine))
    theirs["selected"], theirs["fa_version"]["head_size"] = "TRITON_ATTN", 99
    theirs["reasons"][name] = ["ImportError: gone"]
    fields = {(d.field, d.backend) for d in compare(0, mine, theirs)}
    assert fields == {("selected", "TRITON_ATTN"), ("fa_version", "head_size"), ("reasons", name)}
    assert compare(0, mine, theirs)[0].signature() == "import fails only in vLLM: ImportError: gone"
    assert compare(0, mine, {"oracle_error": "boom"})[0].field == "oracle"
    assert _text_diff("x attn_type=decoder, y", "x attn_type=AttentionType.DECODER, y", 2) == (
        "e=decoder, ", "e=AttentionType.DECODER, ")


def test_compare_finds_mla_prefill_divergences() -> None:
    """The MLA prefill comparison on our own answer and doctored copies (no vLLM needed)."""
    case = Case(Capability(10, 0), mla(), num_heads=16, mla_prefill_backend="FLASHINFER",
                ctx=EngineContext(has_model=True, model_head_size=576, model_num_heads=16,
                                  model_num_kv_heads=1, **R1_DIMS))
    mine = ours(case)
    assert mine["mla_prefill"]["selected"] == "FLASHINFER"
    assert compare(0, mine, json.loads(json.dumps(mine))) == []

    theirs = json.loads(json.dumps(mine))
    theirs["mla_prefill"]["reasons"]["TRTLLM_RAGGED"] = ["ImportError"]
    theirs["mla_prefill"]["error"] = "other text"
    divs = compare(0, mine, theirs)
    assert [(d.field, d.backend) for d in divs] == [("prefill_reasons", "TRTLLM_RAGGED")]
    assert divs[0].group() == "prefill TRTLLM_RAGGED"

    theirs = json.loads(json.dumps(mine))
    theirs["mla_prefill"].update(selected=None, error="boom", priorities=["FLASH_ATTN"],
                                 selector_config="MLAPrefillSelectorConfig(dtype=torch.float32, ...)")
    fields = {d.field for d in compare(0, mine, theirs)}
    assert fields == {"prefill_config", "prefill_priorities", "prefill_selected", "prefill_error"}
    theirs["mla_prefill"] = None
    assert [d.field for d in compare(0, mine, theirs)] == ["prefill_selected"]


def test_oracle_answers_every_case(report: Report) -> None:
    """Every case could be put to vLLM (no oracle failure, no crash on our side)."""
    _check(report, "oracle", "crash")


def test_priorities_agree(report: Report) -> None:
    _check(report, "priorities")


def test_reasons_agree(report: Report) -> None:
    _check(report, "reasons")


def test_selection_agrees(report: Report) -> None:
    _check(report, "selected")


def test_error_and_warning_texts_agree(report: Report) -> None:
    _check(report, "error", "warning")


def test_fa_version_agrees(report: Report) -> None:
    _check(report, "fa_version")


def test_mla_prefill_agrees(report: Report) -> None:
    """MLA cases: vLLM's MLA prefill selector config, priorities, reasons, choice and error text."""
    _check(report, "prefill_config", "prefill_priorities", "prefill_reasons", "prefill_selected",
           "prefill_error")


# --------------------------------------------------------------------------
# standalone
# --------------------------------------------------------------------------

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="attn-select vs vLLM 0.33.0: divergence summary")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--backend", help="only cases where this backend is a candidate")
    ap.add_argument("--max-cases", type=int)
    ap.add_argument("--mla", action="store_true", help="only the MLA cases (with their MLA prefill selection)")
    ap.add_argument("--show", type=int, default=30, help="diverging cases listed in full")
    ap.add_argument("--json", type=Path, help="write every divergence here")
    args = ap.parse_args(argv)
    python, why = vllm_python()
    if python is None:
        print(f"skipped: {why}", file=sys.stderr)
        return 2
    rep = run_differential(python, args.seed, args.backend, args.max_cases, args.mla)
    print(rep.summary(show=args.show))
    if args.json:
        args.json.write_text(json.dumps(
            [dict(dataclasses.asdict(d), case=rep.cases[d.index].label(),
                  input=rep.cases[d.index].to_json()) for d in rep.divergences],
            indent=1, default=str))
    return 1 if rep.divergences else 0


if __name__ == "__main__":
    sys.exit(main())
