"""Differential test: attn-select's SGLang engine against SGLang 0.5.23's OWN
server-argument resolution, case by case, over a broad sampled grid.

SGLang never runs in this process. ``tests/sglang_oracle/oracle.py`` runs a
real ``ServerArgs(...).resolve_once()`` under a separate python that has
``sglang==0.5.23`` installed (``ATTN_SELECT_SGLANG_PYTHON``, default
``/tmp/sglang-venv/bin/python``); cases go to it as JSON, answers come back as
JSON. Without such a python every test here that needs it is skipped.

Compared per case: the final value of every followed field (attention,
prefill and decode backends, page size, KV-cache dtype, speculative
parameters, DSA backends, Mamba strategy), the error SGLang raises (class and
exact text), and the trail: every declaration that changed a followed field,
as (source, field, new value), in order.

Standalone, without pytest (prints the divergence summary)::

    python -m tests.test_sglang_differential [--cases 3000] [--show 30] [--json OUT]

SGLang's answers are cached (keyed by the oracle's source, the python and the
case) in ``$ATTN_SELECT_ORACLE_CACHE`` (default: a folder in the system temp
dir; ``0`` disables).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import pytest

from attn_select.selector.config import Capability
from attn_select.selector.errors import UserError
from attn_select.selector.model import model_facts
from attn_select.selector.sglang.choices import ATTENTION_BACKEND_CHOICES, KV_CACHE_DTYPES
from attn_select.selector.sglang.inputs import ServerFlags
from attn_select.selector.sglang.model import sglang_model
from attn_select.selector.sglang.model_overrides import NOT_MODELLED
from attn_select.selector.sglang.platform import Platform, parse_cuda_version
from attn_select.selector.sglang.resolve import FOLLOWED_FIELDS, resolve
from tests.selector.model_cases_text import _mimo_v2_flash

pytestmark = pytest.mark.sglang



ORACLE = Path(__file__).resolve().parent / "sglang_oracle" / "oracle.py"
# the resolution the oracle runs (shared with --engine sglang-installed)
RESOLUTION = Path(__file__).resolve().parents[1] / "backends" / "run" / "probes" / "sglang_resolution.py"
PYTHON_ENV = "ATTN_SELECT_SGLANG_PYTHON"
DEFAULT_PYTHON = "/tmp/sglang-venv/bin/python"
SGLANG_VERSION = "0.5.23"
CACHE_ENV = "ATTN_SELECT_ORACLE_CACHE"
DEFAULT_CASES = 2500


@lru_cache(maxsize=1)
def sglang_python() -> tuple[str | None, str]:
    """(path, why) of a python with sglang 0.5.23; path None = skip."""
    path = os.environ.get(PYTHON_ENV) or (DEFAULT_PYTHON if Path(DEFAULT_PYTHON).exists() else None)
    if not path:
        return None, f"no SGLang python: set {PYTHON_ENV} (see docs/sglang.md)"
    probe = ("import importlib.metadata as m, importlib.util as u, sys;"
             "sys.exit(3) if u.find_spec('sglang') is None else print(m.version('sglang'))")
    try:
        out = subprocess.run([path, "-c", probe], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{PYTHON_ENV}={path} cannot run: {e}"
    if out.returncode != 0:
        return None, f"{path} cannot import sglang"
    version = out.stdout.strip()
    if version != SGLANG_VERSION:
        return None, f"{path} has sglang {version}; the oracle needs sglang=={SGLANG_VERSION}"
    return path, version


# --------------------------------------------------------------------------
# Models: the built-in profiles plus small configs for the architectures
# SGLang has rules for. Each must parse in attn-select and load in SGLang.
# --------------------------------------------------------------------------

def _dense(arch: str, model_type: str, **extra) -> dict:
    cfg = {"architectures": [arch], "model_type": model_type, "hidden_size": 1024, "num_attention_heads": 16,
           "num_key_value_heads": 4, "head_dim": 64, "num_hidden_layers": 4, "intermediate_size": 2048,
           "vocab_size": 1024, "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}
    cfg.update(extra)
    return cfg


# A small DeepSeek-style MLA text config (R1's latent dims).
_MLA = {"hidden_size": 1024, "num_attention_heads": 16, "num_key_value_heads": 16, "num_hidden_layers": 2,
        "intermediate_size": 2048, "moe_intermediate_size": 256, "vocab_size": 1024, "kv_lora_rank": 512,
        "q_lora_rank": 256, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64, "v_head_dim": 128,
        "n_routed_experts": 4, "num_experts_per_tok": 2, "torch_dtype": "bfloat16"}

SYNTHETIC: dict[str, dict] = {
    "exaone4-swa": _dense("Exaone4ForCausalLM", "exaone4", sliding_window=128, sliding_window_pattern=4),
    "olmo2": _dense("Olmo2ForCausalLM", "olmo2", num_key_value_heads=16),
    "olmo3": _dense("Olmo2ForCausalLM", "olmo3", sliding_window=128),
    "llama4-text": _dense("Llama4ForCausalLM", "llama4_text", num_local_experts=2, num_experts_per_tok=1,
                          intermediate_size_mlp=2048, interleave_moe_layer_step=1),
    "lfm2": _dense("Lfm2ForCausalLM", "lfm2", layer_types=["conv", "full_attention", "conv", "full_attention"]),
    "glm-dsa": {**_MLA, "architectures": ["GlmMoeDsaForCausalLM"], "model_type": "glm_moe_dsa",
                "index_topk": 2048, "index_head_dim": 128, "index_n_heads": 32},
    "mistral-asym-kv": _dense("MistralForCausalLM", "mistral", v_head_dim=32),
    "olmo3-swa": _dense("Olmo2ForCausalLM", "olmo3", sliding_window=128,
                        layer_types=["sliding_attention"] * 3 + ["full_attention"]),
    "step3p5": _dense("Step3p5ForCausalLM", "step3p5", sliding_window=128,
                      layer_types=["sliding_attention", "full_attention"] * 2),
    "embedding-gemma2": _dense("EmbeddingGemma2Model", "embedding_gemma2"),
    "nemotron-h": _dense("NemotronHForCausalLM", "nemotron_h", hybrid_override_pattern="M*M-",
                         mamba_num_heads=16, mamba_head_dim=64, ssm_state_size=64, n_groups=2),
    "falcon-h1": _dense("FalconH1ForCausalLM", "falcon_h1", num_hidden_layers=2, mamba_d_ssm=1024,
                        mamba_n_heads=16, mamba_d_head=64, mamba_d_state=64, mamba_n_groups=1),
    "granite-hybrid": _dense("GraniteMoeHybridForCausalLM", "granitemoehybrid", num_local_experts=0,
                             layer_types=["mamba", "attention"] * 2, shared_intermediate_size=1024,
                             mamba_n_heads=32, mamba_d_head=64, mamba_d_state=64, mamba_n_groups=1),
    "deepseek-v2-lite": {**_MLA, "architectures": ["DeepseekV2ForCausalLM"], "model_type": "deepseek_v2",
                         "q_lora_rank": None},
    "beam": _dense("BeamForCausalLM", "beam"),
    "qwen3-vl": {"architectures": ["Qwen3VLForConditionalGeneration"], "model_type": "qwen3_vl",
                 "torch_dtype": "bfloat16",
                 "text_config": {"model_type": "qwen3_vl_text", "hidden_size": 1024, "num_attention_heads": 16,
                                 "num_key_value_heads": 4, "head_dim": 64, "num_hidden_layers": 2,
                                 "intermediate_size": 2048, "vocab_size": 1024},
                 "vision_config": {"depth": 2, "hidden_size": 256, "num_heads": 4, "out_hidden_size": 1024,
                                   "intermediate_size": 512}},
    "minicpm-sala": _dense("MiniCPMSALAForCausalLM", "minicpm_sala", sparse_config={"kernel_size": 32},
                           mixer_types=["minicpm4", "lightning"], num_key_value_heads=16),
    "iquest-q1": _dense("IQuestQ1ForCausalLM", "iquest_q1", use_hybrid_layers=False),
    # every layer's V narrower than K: vLLM never selects for it, SGLang resolves it
    "mimo-v2-flash": _mimo_v2_flash(),
    "kimi-k25": {"architectures": ["KimiK25ForConditionalGeneration"], "model_type": "kimi_k25",
                 "torch_dtype": "bfloat16",
                 "text_config": {**_MLA, "model_type": "deepseek_v3"}},
}


@lru_cache(maxsize=None)
def model_configs() -> dict[str, dict]:
    from attn_select.selector.profiles import load_model_profile, model_profile_names

    out = {}
    for name in model_profile_names():
        _, prof = load_model_profile(name)
        cfg = dict(prof["config"])
        if prof.get("weights_dtype") and not any(k in cfg for k in ("torch_dtype", "dtype")):
            cfg["torch_dtype"] = prof["weights_dtype"]
        out[name] = cfg
    out.update(SYNTHETIC)
    return out


# --------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------

@dataclass(frozen=True)
class Case:
    model: str
    capability: tuple[int, int]
    cuda_version: str = "12.9"
    has_flashinfer: bool = True
    gpu_memory_mib: float | None = 81920.0
    flags: tuple[tuple[str, object], ...] = ()

    def flag_dict(self) -> dict:
        return dict(self.flags)

    def to_json(self) -> dict:
        # Unknown memory (a --capability device) means attn-select applies no
        # large-memory rule; a real SGLang always knows its memory, so the
        # oracle gets a small GPU, where no such rule applies either.
        memory = self.gpu_memory_mib if self.gpu_memory_mib is not None else 24576.0
        return {"config": model_configs()[self.model], "capability": list(self.capability),
                "cuda_version": self.cuda_version, "has_flashinfer": self.has_flashinfer,
                "gpu_memory_mib": memory, "flags": self.flag_dict()}

    def key(self) -> str:
        return json.dumps(self.to_json(), sort_keys=True)

    def label(self) -> str:
        parts = [self.model, f"sm{self.capability[0]}{self.capability[1]}", f"cuda{self.cuda_version}"]
        if not self.has_flashinfer:
            parts.append("no-flashinfer")
        parts += [f"{k}={v}" for k, v in self.flags]
        return " ".join(parts)


CAPS = ((7, 5), (8, 0), (8, 6), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0), (12, 1))
CUDA = ("12.9", "12.9", "12.9", "13.0", "12.6", "12.2")
PAGES = (None, None, None, 1, 16, 32, 64, 128, 256)
SPEC = (None, None, "EAGLE", "EAGLE3", "NEXTN", "STANDALONE", "NGRAM", "eagle")
BACKENDS = tuple(b for b in ATTENTION_BACKEND_CHOICES if b not in ("ascend", "intel_amx", "wave", "aiter"))


def sample_case(rng: random.Random, models: list[str]) -> Case:
    model = rng.choice(models)
    flags: dict = {}
    r = rng.random()
    if r < 0.35:
        flags["attention_backend"] = rng.choice(BACKENDS)
    elif r < 0.5:
        flags["prefill_attention_backend"] = rng.choice(BACKENDS + (None,))
        flags["decode_attention_backend"] = rng.choice(BACKENDS + (None,))
    page = rng.choice(PAGES)
    if page is not None:
        flags["page_size"] = page
    if rng.random() < 0.4:
        flags["kv_cache_dtype"] = rng.choice(KV_CACHE_DTYPES)
    algo = rng.choice(SPEC)
    if algo is not None:
        flags["speculative_algorithm"] = algo
        shape = rng.random()
        if shape < 0.5:
            topk = rng.choice((1, 1, 2, 4))
            steps = rng.choice((1, 3, 5))
            flags["speculative_eagle_topk"] = topk
            flags["speculative_num_steps"] = steps
            flags["speculative_num_draft_tokens"] = rng.choice((steps + 1, 8))
        elif shape < 0.6:
            flags["speculative_eagle_topk"] = rng.choice((1, 4))
        elif shape < 0.7:
            flags["speculative_num_steps"] = 3
    if rng.random() < 0.12:
        flags["enable_deterministic_inference"] = True
    if rng.random() < 0.1:
        flags["tp_size"] = rng.choice((2, 8))
    return Case(
        model=model, capability=rng.choice(CAPS), cuda_version=rng.choice(CUDA),
        has_flashinfer=rng.random() > 0.2, gpu_memory_mib=rng.choice((81920.0, 24576.0, None)),
        flags=tuple(sorted((k, v) for k, v in flags.items() if v is not None)),
    )


# The scenarios of tests/selector/sglang (and the required answers),
# always in the grid: (model, capability, cuda, flashinfer, flags).
EXPLICIT = [
    ("llama-3.1-8b", (9, 0), "12.2", True, {}),
    ("llama-3.1-8b", (10, 0), "12.6", True, {}),
    ("llama-3.1-8b", (10, 3), "12.9", True, {}),
    ("llama-3.1-8b", (10, 0), "12.9", True, {"speculative_algorithm": "EAGLE"}),
    ("llama-3.1-8b", (9, 0), "12.9", True, {"kv_cache_dtype": "fp8_e5m2"}),
    ("llama-3.1-8b", (9, 0), "12.9", True, {"speculative_algorithm": "EAGLE", "speculative_eagle_topk": 1,
                                            "speculative_num_steps": 3, "speculative_num_draft_tokens": 4,
                                            "page_size": 16}),
    ("llama-3.1-8b", (10, 0), "12.9", True, {"attention_backend": "fa4", "speculative_algorithm": "EAGLE",
                                             "speculative_eagle_topk": 4, "speculative_num_steps": 3,
                                             "speculative_num_draft_tokens": 8}),
    ("llama-3.1-8b", (9, 0), "12.9", True, {"attention_backend": "triton", "prefill_attention_backend": "fa3",
                                            "decode_attention_backend": "fa3"}),
    ("llama-3.1-8b", (9, 0), "12.9", True, {"prefill_attention_backend": "fa3",
                                            "decode_attention_backend": "flashinfer"}),
    ("llama-3.1-8b", (10, 0), "12.9", True, {"kv_cache_dtype": "nvfp4"}),
    ("llama-3.1-8b", (12, 0), "12.9", True, {"kv_cache_dtype": "nvfp4"}),
    ("llama-3.1-8b", (9, 0), "12.9", True, {"speculative_algorithm": "medusa"}),
    ("llama-3.1-8b", (9, 0), "12.9", True, {"speculative_algorithm": "EAGLE", "speculative_num_steps": 3}),
    ("deepseek-v3", (10, 0), "12.9", True, {"attention_backend": "tokenspeed_mla"}),
    ("deepseek-v3", (10, 0), "12.9", True, {"enable_deterministic_inference": True}),
    ("deepseek-v3", (9, 0), "12.9", True, {"attention_backend": "flashmla", "page_size": 32}),
    ("gpt-oss-20b", (8, 0), "12.9", True, {"attention_backend": "flashinfer"}),
    ("mistral-asym-kv", (10, 0), "12.9", True, {}),
    ("deepseek-v2-lite", (10, 0), "12.9", True, {}),
]


def cases(n: int = DEFAULT_CASES, seed: int = 23) -> list[Case]:
    rng = random.Random(seed)
    models = sorted(model_configs())
    out = [Case(m, cap, cuda, fi, flags=tuple(sorted(f.items()))) for m, cap, cuda, fi, f in EXPLICIT]
    # Every model on every capability with default flags first.
    for model in models:
        for cap in CAPS:
            out.append(Case(model, cap))
            out.append(Case(model, cap, has_flashinfer=False))
    while len(out) < n:
        out.append(sample_case(rng, models))
    return out


# --------------------------------------------------------------------------
# attn-select's answer
# --------------------------------------------------------------------------

@lru_cache(maxsize=None)
def _model(name: str, cap: tuple[int, int], tp: int):
    cfg = model_configs()[name]
    facts = model_facts(cfg, name=name, tp=tp, capability=Capability(*cap), engine="sglang")
    return sglang_model(facts)


def ours(case: Case) -> dict:
    """The answer in the oracle's shape; "skip" says why a case is out of scope."""
    flags = ServerFlags(**case.flag_dict())
    try:
        flags.validate()
        model = _model(case.model, case.capability, flags.tp_size)
    except UserError as e:
        return {"skip": str(e)}
    if model.arch in NOT_MODELLED:
        return {"skip": f"{model.arch} not modelled"}
    platform = Platform(Capability(*case.capability), parse_cuda_version(case.cuda_version),
                        case.has_flashinfer, case.gpu_memory_mib)
    r = resolve(flags, platform, model)
    return {
        "final": dict(r.final),
        "changes": [[s.source, s.field, s.old, s.new] for s in r.trail],
        "error": None if r.error is None else {"kind": r.error.kind, "message": r.error.message},
    }


# --------------------------------------------------------------------------
# The oracle, with a cache
# --------------------------------------------------------------------------

def _cache_dir() -> Path | None:
    value = os.environ.get(CACHE_ENV)
    if value == "0":
        return None
    return Path(value) if value else Path(tempfile.gettempdir()) / "attn-select-sglang-oracle"


def oracle_results(todo: list[Case], python: str) -> list[dict]:
    salt = hashlib.sha256(ORACLE.read_bytes() + RESOLUTION.read_bytes() + python.encode()).hexdigest()[:16]
    folder = _cache_dir()
    results: list[dict | None] = [None] * len(todo)
    missing: list[int] = []
    for i, c in enumerate(todo):
        path = folder / salt / (hashlib.sha256(c.key().encode()).hexdigest()[:24] + ".json") if folder else None
        if path is not None and path.exists():
            results[i] = json.loads(path.read_text())
        else:
            missing.append(i)
    if missing:
        # Two workers on the two cores; each pays one SGLang import (~8 s).
        halves = [missing[0::2], missing[1::2]]
        procs = []
        for part in halves:
            if not part:
                continue
            payload = json.dumps([todo[i].to_json() for i in part])
            p = subprocess.Popen([python, str(ORACLE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)
            procs.append((part, p, payload))
        for part, p, payload in procs:
            out, err = p.communicate(payload)
            if p.returncode != 0:
                raise RuntimeError(f"SGLang oracle failed (rc {p.returncode}):\n{err[-4000:]}")
            for i, r in zip(part, json.loads(out)):
                results[i] = r
                if folder is not None:
                    path = folder / salt / (hashlib.sha256(todo[i].key().encode()).hexdigest()[:24] + ".json")
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_text(json.dumps(r))
    return results  # type: ignore[return-value]


# --------------------------------------------------------------------------
# Comparison
# --------------------------------------------------------------------------

@dataclass
class Divergence:
    case: Case
    what: str  # "<final>", "<error>", "<trail>", "<oracle>"
    signature: str
    detail: str


def compare(case: Case, mine: dict, theirs: dict) -> list[Divergence]:
    """Differences between attn-select's and SGLang's answers for one case."""
    if "skip" in mine:
        return []
    if theirs.get("oracle_error"):
        return [Divergence(case, "<oracle>", theirs["oracle_error"].split(":")[0], theirs["oracle_error"])]
    out: list[Divergence] = []
    e_mine = mine["error"]
    # the class and text; where SGLang raised is reported, not part of the answer
    e_theirs = theirs["error"] and {k: theirs["error"][k] for k in ("kind", "message")}
    if e_mine != e_theirs:
        sig = f"ours {e_mine and e_mine['kind']} / SGLang {e_theirs and e_theirs['kind']}"
        out.append(Divergence(case, "<error>", sig, f"ours: {e_mine}\nSGLang: {e_theirs}"))
        return out
    if e_mine is None:
        for f in FOLLOWED_FIELDS:
            a, b = mine["final"].get(f), theirs["final"].get(f)
            if a != b:
                out.append(Divergence(case, "<final>", f"{f}: ours {a!r} / SGLang {b!r}",
                                      f"{f}: ours {a!r}, SGLang {b!r}"))
    ours_steps = [tuple(c[:2]) + (c[3],) for c in mine["changes"]]
    their_steps = [tuple(c[:2]) + (c[3],) for c in theirs["changes"] if c[1] in FOLLOWED_FIELDS]
    if e_mine is None and ours_steps != their_steps:
        only_ours = [s for s in ours_steps if s not in their_steps]
        only_theirs = [s for s in their_steps if s not in ours_steps]
        sig = f"ours only {[s[:2] for s in only_ours]} / SGLang only {[s[:2] for s in only_theirs]}"
        out.append(Divergence(case, "<trail>", sig, f"ours:   {ours_steps}\nSGLang: {their_steps}"))
    return out


@dataclass
class Report:
    checked: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    divergences: list[Divergence] = field(default_factory=list)

    def summary(self, show: int = 30) -> str:
        lines = [f"{self.checked} cases compared with SGLang {SGLANG_VERSION}; "
                 f"{sum(self.skipped.values())} skipped (out of attn-select's scope); "
                 f"{len(self.divergences)} divergences"]
        for why, n in sorted(self.skipped.items(), key=lambda kv: -kv[1])[:8]:
            lines.append(f"  skipped {n:5d}: {why}")
        groups: dict[tuple[str, str], list[Divergence]] = defaultdict(list)
        for d in self.divergences:
            groups[(d.what, d.signature)].append(d)
        for (what, sig), ds in sorted(groups.items(), key=lambda kv: -len(kv[1]))[:show]:
            lines.append(f"{len(ds):5d} {what} {sig}")
            lines.append(f"      e.g. {ds[0].case.label()}")
            for ln in ds[0].detail.splitlines():
                lines.append(f"           {ln}")
        return "\n".join(lines)


def run(n: int = DEFAULT_CASES, seed: int = 23) -> Report:
    python, why = sglang_python()
    if python is None:
        raise RuntimeError(why)
    todo = cases(n, seed)
    mine = [ours(c) for c in todo]
    in_scope = [i for i, m in enumerate(mine) if "skip" not in m]
    theirs = oracle_results([todo[i] for i in in_scope], python)
    report = Report()
    for m in mine:
        if "skip" in m:
            key = m["skip"].split(";")[0][:90]
            report.skipped[key] = report.skipped.get(key, 0) + 1
    for i, t in zip(in_scope, theirs):
        report.checked += 1
        report.divergences += compare(todo[i], mine[i], t)
    return report


# --------------------------------------------------------------------------
# pytest
# --------------------------------------------------------------------------

def test_compare_reports_each_kind_of_difference():
    """The comparison itself, without SGLang: it must see every kind of difference."""
    case = Case("llama-3.1-8b", (9, 0))
    base = {"final": {f: None for f in FOLLOWED_FIELDS}, "changes": [["a", "page_size", None, 1]], "error": None}
    assert compare(case, base, dict(base)) == []
    other_final = {**base, "final": {**base["final"], "attention_backend": "fa3"}}
    assert [d.what for d in compare(case, base, other_final)] == ["<final>"]
    other_trail = {**base, "changes": [["b", "page_size", None, 1]]}
    assert [d.what for d in compare(case, base, other_trail)] == ["<trail>"]
    other_error = {**base, "error": {"kind": "ValueError", "message": "x"}}
    assert [d.what for d in compare(case, base, other_error)] == ["<error>"]
    assert [d.what for d in compare(case, base, {"oracle_error": "crash: X"})] == ["<oracle>"]
    assert compare(case, {"skip": "out of scope"}, other_error) == []


def test_every_grid_model_parses():
    """Every model of the grid goes through attn-select's config parser."""
    for name in model_configs():
        assert _model(name, (9, 0), 1).architectures


@pytest.fixture(scope="module")
def report() -> Report:
    python, why = sglang_python()
    if python is None:
        pytest.skip(why)
    return run()


def test_sglang_agrees_on_the_grid(report: Report):
    assert report.checked > 1000
    assert not report.divergences, "\n" + report.summary()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="attn-select's SGLang engine vs SGLang 0.5.23's own resolution")
    ap.add_argument("--cases", type=int, default=DEFAULT_CASES)
    ap.add_argument("--seed", type=int, default=23)
    ap.add_argument("--show", type=int, default=30, help="divergence groups to print")
    ap.add_argument("--json", help="write every divergence here")
    args = ap.parse_args(argv)
    report = run(args.cases, args.seed)
    print(report.summary(args.show))
    if args.json:
        Path(args.json).write_text(json.dumps(
            [{"case": d.case.label(), "what": d.what, "signature": d.signature, "detail": d.detail}
             for d in report.divergences], indent=1))
    return 1 if report.divergences else 0


if __name__ == "__main__":
    sys.exit(main())
