"""Differential check of the FlashAttention family against vLLM 0.33.0's own
source text, without importing vLLM.

The functions and classes that decide FLASH_ATTN / TRITON_FLASH_ATTN
(fa_utils.py, flash_attn_interface.py, backend.py, flash_attn.py,
triton_attn.py, triton_flash_attn.py, composite.py) are cut out of the
vLLM source tree with ``ast`` and executed against stand-ins for what they
read from the process: ``current_platform``, ``envs``, the current
VllmConfig, the installed FA builds. Then they answer the same grid of
questions as our mirror.

Skipped when the vLLM source is absent (set ATTN_SELECT_VLLM_SRC to the
folder that holds ``vllm/``).
"""

from __future__ import annotations

import __future__
import ast
import itertools
import sys
import types
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from enum import Enum
from types import SimpleNamespace as NS

import pytest

from attn_select.backends.flash_attn import FLASH_ATTN
from attn_select.backends.spec import MultipleOf, resolve
from attn_select.backends.triton_flash_attn import TRITON_FLASH_ATTN
from attn_select.selector import fa_version as fa
from attn_select.selector.config import (
    Capability,
    EngineContext,
    Kernels,
    Query,
    SelectorConfig,
    is_quantized_kv_cache,
)
from attn_select.selector.validate import check
from tests.vllm_source import vllm_source

SRC = vllm_source()
pytestmark = [
    pytest.mark.vllm,
    pytest.mark.skipif(not (SRC / "v1/attention/backends/flash_attn.py").exists(),
                       reason="vLLM source tree not found"),
]


# --- cutting vLLM's source ----------------------------------------------------------


def _nodes(rel: str, names: Iterable[str]) -> list[ast.stmt]:
    tree = ast.parse((SRC / rel).read_text())
    wanted = set(names)
    out = []
    for node in tree.body:
        name = getattr(node, "name", None)
        if name is None and isinstance(node, ast.Assign):
            name = getattr(node.targets[0], "id", None)
        if name in wanted:
            out.append(node)
            wanted.discard(name)
    assert not wanted, f"{rel}: not found {sorted(wanted)}"
    return out


def _run(ns: dict, rel: str, names: Iterable[str]) -> None:
    module = ast.Module(body=_nodes(rel, names), type_ignores=[])
    code = compile(module, str(SRC / rel), "exec",
                   flags=__future__.annotations.compiler_flag, dont_inherit=True)
    exec(code, ns)


class _Platform:
    cap: object = None

    def is_xpu(self):
        return False

    def is_rocm(self):
        return False

    def is_cuda(self):
        return True

    def get_device_capability(self, device_id=0):
        return self.cap

    def has_device_capability(self, capability, device_id=0):
        if isinstance(capability, tuple):
            return self.cap >= capability
        return self.cap.to_int() >= capability

    def is_device_capability_family(self, capability, device_id=0):
        return self.cap.to_int() // 10 == capability // 10


class _Logger:
    def __getattr__(self, name):
        return lambda *a, **k: None


class _Impl:
    supports_pcp = False
    supports_dcp = False
    supports_quant_query_input = True
    can_return_lse_for_decode = False
    lse_base_on_e = True
    need_to_return_lse_for_decode = False
    supports_mtp_with_cp_non_trivial_interleave_size = False


class _Builder:
    requires_block_table_width = False

    def __class_getitem__(cls, item):
        return cls

    @classmethod
    def get_cudagraph_support(cls, vllm_config, kv_cache_spec):
        return cls._cudagraph_support


class _Oracle:
    """vLLM's code, bound to stand-ins that a test sets per question."""

    def __init__(self):
        self.platform = _Platform()
        self.envs = NS(VLLM_BATCH_INVARIANT=False)
        self.vllm_config = None
        self.interface = types.ModuleType("vllm.vllm_flash_attn.flash_attn_interface")
        self.ns = ns = {
            "__name__": __name__,  # dataclasses look the module up in sys.modules
            "current_platform": self.platform,
            "envs": self.envs,
            "logger": _Logger(),
            "init_logger": lambda name: _Logger(),
            "torch": NS(float16="float16", bfloat16="bfloat16", float32="float32"),
            "is_quantized_kv_cache": is_quantized_kv_cache,
            "get_current_vllm_config_or_none": lambda: self.vllm_config,
            "Any": object, "ClassVar": object, "Protocol": object, "cast": lambda t, v: v,
            "ABC": object, "abstractmethod": lambda f: f, "dataclass": dataclass,
            "replace": replace, "Enum": Enum, "defaultdict": defaultdict,
            "Iterable": Iterable, "Sequence": Sequence,
            "NamedTuple": __import__("typing").NamedTuple,
            "functools": __import__("functools"), "math": __import__("math"),
            "AttentionSpec": type("AttentionSpec", (), {}),
            "KVCacheSpec": type("KVCacheSpec", (), {}),
            "AttentionImpl": _Impl,
            "AttentionMetadataBuilder": _Builder,
            "KVQuantMode": NS(FP8_PER_TENSOR=1, NONE=0),
        }
        _run(ns, "platforms/interface.py", ["DeviceCapability"])
        # kv_cache_layout.py's logical axis indices [L, B, H, N, C].
        ns.update(_DIM_L=0, _DIM_B=1, _DIM_H=2, _DIM_N=3, _DIM_C=4)
        _run(ns, "v1/kv_cache_layout.py", ["KVCacheLayout"])
        _run(ns, "v1/attention/backend.py",
             ["AttentionType", "MultipleOf", "AttentionBackend", "AttentionCGSupport"])
        _run(ns, "v1/attention/backends/fa_utils.py", [
            "FA4_HD256_PAGE_SIZE", "get_flash_attn_version", "uses_fa4_hd256_kernel",
            "_fa4_hd256_fallback_reason", "is_fa_version_supported",
            "flash_attn_supports_kv_cache_dtype", "flash_attn_supports_sinks",
            "is_flash_attn_varlen_func_available",
        ])
        _run(ns, "v1/attention/backends/utils.py",
             ["_DEFAULT_LAYOUT_PREFERENCE", "get_supported_kv_cache_layouts"])
        # The impl and builder classes, reduced to the attributes selection reads.
        ns["FlashAttentionImpl"] = type("FlashAttentionImpl", (_Impl,), {"supports_dcp": True})
        ns["TritonAttentionImpl"] = type("TritonAttentionImpl", (_Impl,), {})
        builder_assign = next(
            n for n in _nodes("v1/attention/backends/flash_attn.py",
                              ["FlashAttentionMetadataBuilder"])[0].body
            if isinstance(n, ast.Assign) and n.targets[0].id == "_cudagraph_support"
        )
        self._fa_cg_expr = compile(ast.Expression(builder_assign.value), "flash_attn.py", "eval")
        ns["FlashAttentionMetadataBuilder"] = type("FlashAttentionMetadataBuilder", (_Builder,), {})
        ns["TritonAttentionMetadataBuilder"] = type(
            "TritonAttentionMetadataBuilder", (_Builder,),
            {"_cudagraph_support": ns["AttentionCGSupport"].ALWAYS},
        )
        _run(ns, "v1/attention/backends/flash_attn.py", ["FlashAttentionBackend"])
        _run(ns, "v1/attention/backends/triton_attn.py", ["TritonAttentionBackend"])
        _run(ns, "v1/attention/backends/composite.py", [
            "_has_unclamped_window", "CompositeAttentionRouting", "MMPrefixAttentionRouting",
            "_intersect_kernel_block_sizes", "create_composite_attention_backend",
        ])
        _run(ns, "v1/attention/backends/triton_flash_attn.py", ["_FABackend"])
        # Built per question: the composite caches nothing that depends on state.
        self._composite_node = _nodes("v1/attention/backends/triton_flash_attn.py",
                                      ["TritonFlashAttentionBackend"])
        # The real flash_attn_interface's support checks, with our FA flags.
        iface = self.interface.__dict__
        iface.update(DEFAULT_FA_VERSION=2)
        module = ast.Module(body=_nodes("vllm_flash_attn/flash_attn_interface.py", [
            "_is_fa2_supported", "_is_fa3_supported", "_is_fa4_supported",
            "is_fa_version_supported", "fa_version_unsupported_reason",
        ]), type_ignores=[])
        exec(compile(module, "flash_attn_interface.py", "exec"), iface)

    def set(self, monkeypatch, cap: Capability, kernels: Kernels, ctx: EngineContext,
            unclamped_window: bool = False):
        self.platform.cap = self.ns["DeviceCapability"](cap.major, cap.minor)
        self.envs.VLLM_BATCH_INVARIANT = ctx.batch_invariant
        model = None
        if ctx.has_model:
            model = NS(
                is_diffusion=ctx.is_diffusion,
                is_mm_prefix_lm=ctx.is_mm_prefix_lm,
                rswa_window=ctx.rswa_window,
                hf_text_config=NS(attn_logit_softcapping=30.0 if ctx.attn_logit_softcapping else None),
                get_head_size=lambda: ctx.model_head_size,
            )
        layer = NS(sliding_window=4096 if unclamped_window else None,
                   mm_prefix_clamp_sliding_window=False)
        self.vllm_config = NS(
            attention_config=NS(flash_attn_version=ctx.flash_attn_version),
            model_config=model,
            cache_config=NS(cache_dtype=ctx.cache_dtype),
            parallel_config=NS(decode_context_parallel_size=ctx.dcp_size),
            compilation_config=NS(static_forward_context={"layer": layer}),
        )
        self.interface.__dict__.update(
            FA2_AVAILABLE=kernels.fa2, FA3_AVAILABLE=kernels.fa3, FA4_AVAILABLE=kernels.fa4,
            FA2_UNAVAILABLE_REASON="missing", FA3_UNAVAILABLE_REASON="missing",
            FA4_UNAVAILABLE_REASON="vllm.vllm_flash_attn.cute.interface not found",
        )
        package_ok = kernels.fa2 or kernels.fa3
        fake_vllm = types.ModuleType("vllm")
        monkeypatch.setitem(sys.modules, "vllm", fake_vllm)
        monkeypatch.setitem(sys.modules, "vllm.platforms", NS(current_platform=self.platform))
        monkeypatch.setitem(sys.modules, "vllm.config", NS(
            get_current_vllm_config_or_none=lambda: self.vllm_config))
        # composite.py imports MultipleOf lazily.
        monkeypatch.setitem(sys.modules, "vllm.v1.attention.backend",
                            NS(MultipleOf=self.ns["MultipleOf"]))
        # The package's __init__ raises without FA2/FA3: the submodule import fails.
        monkeypatch.setitem(sys.modules, "vllm.vllm_flash_attn",
                            types.ModuleType("vllm.vllm_flash_attn") if package_ok else None)
        monkeypatch.setitem(sys.modules, "vllm.vllm_flash_attn.flash_attn_interface",
                            self.interface if package_ok else None)
        # Class-level facts computed at import time.
        self.ns["FlashAttentionMetadataBuilder"]._cudagraph_support = eval(self._fa_cg_expr, self.ns)
        self.ns["create_composite_attention_backend"].cache_clear()
        exec(compile(ast.Module(body=self._composite_node, type_ignores=[]), "tfa", "exec"), self.ns)

    def __getitem__(self, name):
        return self.ns[name]


@pytest.fixture(scope="module")
def oracle():
    return _Oracle()


# --- the grid ---------------------------------------------------------------------------


CAPS = [Capability(*c) for c in ((7, 5), (8, 0), (8, 9), (9, 0), (10, 0), (10, 3), (11, 0), (12, 0))]
KERNELS = [Kernels(fa2=a, fa3=b, fa4=c) for a, b, c in itertools.product((True, False), repeat=3)]
CTXS = [
    EngineContext(),
    EngineContext(flash_attn_version=2),
    EngineContext(flash_attn_version=3),
    EngineContext(flash_attn_version=4),
    EngineContext(batch_invariant=True),
    EngineContext(cache_dtype="fp8"),
    EngineContext(dcp_size=2),
    EngineContext(has_model=True, model_head_size=256, attn_logit_softcapping=True),
    EngineContext(has_model=True, model_head_size=512, cache_dtype="fp8"),
    EngineContext(has_model=True, model_head_size=256, is_mm_prefix_lm=True),
    EngineContext(has_model=True, model_head_size=256, rswa_window=128),
    EngineContext(has_model=True, model_head_size=256, is_diffusion=True),
    EngineContext(has_model=True, model_head_size=256, flash_attn_version=4),
]
CALLS = [
    {},
    {"head_size": 128},
    {"head_size": 192, "head_size_v": 128},
    {"head_size": 192, "head_size_v": 192},
    {"head_size": 256},
    {"head_size": 256, "supports_fa4_hd256": True},
    {"head_size": 256, "head_size_v": 256, "supports_fa4_hd256": True, "kv_cache_block_size": 16},
    {"head_size": 256, "supports_fa4_hd256": True, "kv_cache_block_size": 384},
    {"head_size": 256, "supports_fa4_hd256": True, "has_sinks": True},
    {"head_size": 256, "supports_fa4_hd256": True, "requires_softcap": True},
    {"head_size": 512},
    {"head_size": 128, "head_size_v": 64, "has_sinks": True},
    {"requires_alibi": True},
    {"requires_alibi": True, "head_size": 512},
]


def test_get_flash_attn_version_matches(oracle, monkeypatch):
    for cap, kernels, ctx in itertools.product(CAPS, KERNELS, CTXS):
        oracle.set(monkeypatch, cap, kernels, ctx)
        for kw in CALLS:
            theirs = oracle["get_flash_attn_version"](**kw)
            ours = fa.resolve_fa_version(cap, kernels, ctx, **kw).version
            assert ours == theirs, (cap, kernels, ctx, kw)
        for v in (2, 3, 4):
            assert fa.is_fa_version_supported(v, cap, kernels) == oracle["is_fa_version_supported"](v)
        for kv in ("fp8", "fp8_e5m2"):
            for kw in ({}, {"head_size": 512}, {"head_size": 128, "head_size_v": 128}):
                assert fa.fa_supports_kv_cache_dtype(cap, kernels, ctx, kv, **kw) == \
                    oracle["flash_attn_supports_kv_cache_dtype"](kv, **kw), (cap, kernels, ctx, kv, kw)
        assert fa.fa_supports_sinks(cap, kernels, ctx) == oracle["flash_attn_supports_sinks"]()


SELECTOR_CONFIGS = [
    SelectorConfig(128, "bfloat16", "auto", None),
    SelectorConfig(72, "float16", "auto", 16),
    SelectorConfig(100, "bfloat16", "auto", None),
    SelectorConfig(192, "bfloat16", "fp8", 16),
    SelectorConfig(256, "bfloat16", "auto", 16),
    SelectorConfig(256, "bfloat16", "fp8", 128),
    SelectorConfig(256, "bfloat16", "auto", None, use_mm_prefix=True),
    SelectorConfig(256, "bfloat16", "fp8", None, use_mm_prefix=True),
    SelectorConfig(512, "bfloat16", "auto", 64, use_mm_prefix=True),
    SelectorConfig(512, "bfloat16", "fp8", 16),
    SelectorConfig(512, "bfloat16", "fp8_e4m3", 64, has_sink=True),
    SelectorConfig(264, "bfloat16", "auto", None),
    SelectorConfig(128, "float32", "fp8_e5m2", 8),
    SelectorConfig(128, "bfloat16", "int8_per_token_head", None),
    SelectorConfig(128, "bfloat16", None, None, has_sink=True, use_per_head_quant_scales=True),
    SelectorConfig(256, "bfloat16", "auto", 32, attn_type="encoder_only", has_sliding_window=True,
                   use_rswa=True, use_non_causal=True, use_batch_invariant=True),
    SelectorConfig(256, "float16", "auto", None, use_kv_connector=True, use_pcp=True,
                   use_dcp=True, use_adaptive_verification=True),
    SelectorConfig(128, "bfloat16", "auto", None, use_mla=True, use_sparse=True),
]


def _theirs(cls, cfg: SelectorConfig, oracle) -> list[str]:
    # vLLM's layers pass AttentionType members, not their string values.
    args = cfg._asdict()
    args["attn_type"] = oracle.ns["AttentionType"](cfg.attn_type)
    return cls.validate_configuration(device_capability=oracle.platform.cap, **args)


def _block_sizes(sizes, oracle):
    return tuple(MultipleOf(s.base) if isinstance(s, oracle["MultipleOf"]) else s for s in sizes)


# Both FA builds missing: vLLM cannot import either module (covered by the
# import_error tests), so the class-level comparison needs FA2 or FA3.
IMPORTABLE = [k for k in KERNELS if k.fa2 or k.fa3]


@pytest.mark.parametrize("name", ["FLASH_ATTN", "TRITON_FLASH_ATTN"])
def test_backend_matches(oracle, monkeypatch, name):
    spec = {"FLASH_ATTN": FLASH_ATTN, "TRITON_FLASH_ATTN": TRITON_FLASH_ATTN}[name]
    for cap, kernels, ctx in itertools.product(CAPS, IMPORTABLE, CTXS):
        for unclamped in (False, True):
            oracle.set(monkeypatch, cap, kernels, ctx._replace(), unclamped_window=unclamped)
            cls = oracle["FlashAttentionBackend" if name == "FLASH_ATTN" else "TritonFlashAttentionBackend"]
            q0 = Query(SELECTOR_CONFIGS[0], cap, kernels, ctx._replace(unclamped_sliding_window=unclamped))
            assert spec.block_sizes(q0) == _block_sizes(cls.get_supported_kernel_block_sizes(), oracle)
            builder = cls.get_builder_cls()
            assert resolve(spec.cudagraph_support, q0) == builder.get_cudagraph_support(
                oracle.vllm_config, None).name, (cap, kernels, ctx)
            layouts = cls.supported_kv_cache_layouts()
            assert resolve(spec.kv_cache_layouts, q0) == (
                None if layouts is None else tuple(x.name for x in layouts))
            if unclamped:
                continue
            for cfg in SELECTOR_CONFIGS:
                q = Query(cfg, cap, kernels, ctx)
                assert check(spec, q) == _theirs(cls, cfg, oracle), (cap, kernels, ctx, cfg)


def test_layer_call_matches_impl_arguments():
    # FlashAttentionImpl.__init__'s get_flash_attn_version call: the keyword
    # arguments it passes, read from the source (no head_size_v, no block size).
    tree = ast.parse((SRC / "v1/attention/backends/flash_attn.py").read_text())
    impl = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "FlashAttentionImpl")
    init = next(n for n in impl.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    calls = [n for n in ast.walk(init) if isinstance(n, ast.Call)
             and getattr(n.func, "id", None) == "get_flash_attn_version"]
    assert len(calls) == 1
    assert [k.arg for k in calls[0].keywords] == [
        "requires_alibi", "head_size", "has_sinks", "requires_softcap", "supports_fa4_hd256",
    ]


def _class(rel: str, name: str) -> ast.ClassDef:
    tree = ast.parse((SRC / rel).read_text())
    return next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def _version_calls(fn: ast.FunctionDef) -> list[list[str]]:
    calls = [
        n for n in ast.walk(fn)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "get_flash_attn_version"
    ]
    # ast.walk is breadth-first: put the calls back in source order.
    return [[k.arg for k in n.keywords] for n in sorted(calls, key=lambda n: (n.lineno, n.col_offset))]


def test_builder_calls_match_builder_fa_version():
    builder = _class("v1/attention/backends/flash_attn.py", "FlashAttentionMetadataBuilder")
    init = next(n for n in builder.body if isinstance(n, ast.FunctionDef) and n.name == "__init__")
    # The no-argument call (FA3 ahead-of-time scheduling), then builder_fa_version's.
    assert _version_calls(init) == [
        [], ["head_size", "head_size_v", "kv_cache_block_size", "supports_fa4_hd256"],
    ]


def test_impl_stub_attributes_match_source():
    # The oracle's FlashAttentionImpl stand-in: supports_dcp True, supports_pcp
    # inherited (False) from AttentionImpl.
    impl = _class("v1/attention/backends/flash_attn.py", "FlashAttentionImpl")
    assigned = {
        n.target.id: ast.literal_eval(n.value)
        for n in impl.body
        if isinstance(n, ast.AnnAssign) and n.value is not None
    }
    assert assigned.get("supports_dcp") is True
    assert "supports_pcp" not in assigned
    assert [b.id for b in impl.bases] == ["AttentionImpl"]
