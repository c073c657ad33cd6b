"""``BackendSpec``: every fact one attention backend declares, as data.

Field defaults are vLLM 0.33.0's ``AttentionBackend`` base-class defaults
(vllm/v1/attention/backend.py). They are not uniformly conservative:
``kv_connector`` and the capability check default to True, an empty
``head_sizes`` means any head size, and a ``None`` block size is always
supported.

A fact that vLLM computes from hidden state (the installed FlashAttention
builds, the current config, the GPU) is a ``Rule``: a named function of one
``Query`` whose ``doc`` says in words what it decides, for ``matrix`` and the
docs. Static facts stay plain values.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Generic, NamedTuple, TypeVar, Union

from attn_select.selector.config import AttentionType, Capability, Query

T = TypeVar("T")


class MultipleOf(NamedTuple):
    """vLLM ``MultipleOf``: any block size divisible by ``base``."""

    base: int

    def __str__(self) -> str:
        return f"multiple of {self.base}"


BlockSize = Union[int, MultipleOf]


# Rule stays a dataclass, not a NamedTuple like the rest (selector/config.py
# says why those are): validate and matrix tell a Rule from a static tuple
# value with isinstance(value, tuple), and ``fn`` takes no part in equality.
@dataclass(frozen=True)
class Rule(Generic[T]):
    """A fact computed from the query. ``doc`` is the one-line description
    shown where a static value would be (matrix, docs)."""

    doc: str
    fn: Callable[[Query], T] = field(compare=False, repr=False)

    def __call__(self, q: Query) -> T:
        return self.fn(q)


def rule(doc: str) -> Callable[[Callable[[Query], T]], Rule[T]]:
    """Decorator: ``@rule("FA3 or FA4 resolves")`` turns a function into a Rule."""

    def wrap(fn: Callable[[Query], T]) -> Rule[T]:
        return Rule(doc, fn)

    return wrap


def resolve(value: T | Rule[T], q: Query) -> T:
    """A static value as is, a Rule evaluated for this query."""
    return value(q) if isinstance(value, Rule) else value


class CapabilityRange(NamedTuple):
    """Compute-capability support as data: an inclusive range and/or a set
    of majors (families). Both None/empty = any capability (vLLM's default)."""

    min: Capability | None = None
    max: Capability | None = None
    majors: tuple[int, ...] = ()

    def __call__(self, cap: Capability) -> bool:
        if self.min is not None and cap < self.min:
            return False
        if self.max is not None and cap > self.max:
            return False
        return not self.majors or cap.major in self.majors

    def __str__(self) -> str:
        parts = []
        if self.min is not None and self.max is not None:
            parts.append(f"{self.min}-{self.max}")
        elif self.min is not None:
            parts.append(f">= {self.min}")
        elif self.max is not None:
            parts.append(f"<= {self.max}")
        if self.majors:
            parts.append("major " + "/".join(f"{m}.x" for m in self.majors))
        return ", ".join(parts) or "any"


ANY_CAPABILITY = CapabilityRange()
DEFAULT_KV_CACHE_DTYPES = ("auto", "float16", "bfloat16")
HALF_DTYPES = ("float16", "bfloat16")
ALL_ATTN_TYPES = tuple(t.value for t in AttentionType)


class BackendSpec(NamedTuple):
    """One backend of vLLM's ``AttentionBackendEnum``, as declared facts.

    Fields are listed in the order ``validate_configuration`` checks them.
    """

    name: str
    vllm_class: str  # dotted path, the enum value in vLLM's registry.py
    family: str  # module family here: flash_attn, flashinfer, triton_attn, ..., mla
    summary: str = ""

    # 1. head_size: empty = any; a Rule replaces the list entirely
    head_sizes: tuple[int, ...] | Rule[bool] = ()
    # 2. activation dtypes
    dtypes: tuple[str, ...] = HALF_DTYPES
    # 3. KV-cache dtypes: empty tuple = any; a Rule replaces the membership test
    kv_cache_dtypes: tuple[str, ...] = DEFAULT_KV_CACHE_DTYPES
    kv_cache_dtype_rule: Rule[bool] | None = None
    # 4. kernel block sizes (get_supported_kernel_block_sizes); a Rule when
    #    they depend on the model/config. block_size_rule replaces the
    #    divisibility test when a backend overrides supports_block_size.
    kernel_block_sizes: tuple[BlockSize, ...] | Rule[tuple[BlockSize, ...]] = (MultipleOf(1),)
    block_size_rule: Rule[bool] | None = None
    # 5.-20. feature predicates (vLLM's supports_* / is_*)
    mm_prefix: bool | Rule[bool] = False
    is_mla: bool = False
    sink: bool | Rule[bool] = False
    is_sparse: bool = False
    per_head_quant_scales: bool | Rule[bool] = False
    capability: CapabilityRange | Rule[bool] = ANY_CAPABILITY
    attn_types: tuple[str, ...] = (AttentionType.DECODER.value,)
    sliding_window: bool = False
    rswa: bool = False
    non_causal: bool = False
    non_causal_dcp: bool = False  # builder's supports_non_causal_multi_token_dcp
    batch_invariance: bool = False
    kv_connector: bool = True
    pcp: bool = False  # impl's supports_pcp
    dcp: bool = False  # impl's supports_dcp
    device_cpu_query_lens_mismatch: bool | Rule[bool] = True
    # 21. supports_combination: one reason or None
    combination: Rule[str | None] | None = None

    # Raised while vLLM imports the backend class, as "Type: message", or None.
    # vLLM turns an ImportError/OSError there into the backend's only reason.
    import_error: Rule[str | None] | None = None

    # Not part of validation; reported per backend.
    cudagraph_support: str | Rule[str] = "NEVER"  # AttentionCGSupport member name
    kv_cache_shape: str = ""  # get_kv_cache_shape, symbolic
    # supported_kv_cache_layouts; a Rule when it depends on the GPU (FlashInfer)
    kv_cache_layouts: tuple[str, ...] | None | Rule[tuple[str, ...] | None] = None
    alibi_sqrt: bool = False
    # The impl's supports_dense_mha_prefill: whether an MLA layer on this
    # backend prefills through a separate MLA prefill backend. False (or a
    # Rule saying False) only for sparse impls that run the top-k MQA path
    # for every request; the layer then selects no MLA prefill backend.
    dense_mha_prefill: bool | Rule[bool] = True
    # "module:Class" of the GPU run adapter in attn_select.backends.run, or None
    # (attn-select run has no adapter for this backend).
    run_adapter: str | None = None
    # What the run adapter executes when it is not the kernel vLLM calls for this backend (our own
    # peer of it); "" when it is vLLM's (its build, or the library call vLLM makes). tune measures a
    # stand-in for comparison and never recommends its setting: vLLM would run its own kernel.
    run_stand_in: str = ""

    def block_sizes(self, q: Query) -> tuple[BlockSize, ...]:
        return resolve(self.kernel_block_sizes, q)

    # The supports_* classmethods of vLLM's AttentionBackend, asked of this
    # declaration. validate lists the reasons; composites combine children.

    def supports_head_size(self, q: Query) -> bool:
        sizes = self.head_sizes
        if not isinstance(sizes, tuple):
            return sizes(q)
        return not sizes or q.cfg.head_size in sizes

    def supports_dtype(self, q: Query) -> bool:
        return q.cfg.dtype in self.dtypes

    def supports_kv_cache_dtype(self, q: Query) -> bool:
        if self.kv_cache_dtype_rule is not None:
            return self.kv_cache_dtype_rule(q)
        kv = q.cfg.kv_cache_dtype
        if kv is None:
            return True
        return not self.kv_cache_dtypes or kv in self.kv_cache_dtypes

    def supports_block_size(self, q: Query) -> bool:
        """Base rule: None always fits; otherwise the block size must be a
        multiple of some kernel block size (hybrid blocks split a larger one)."""
        if self.block_size_rule is not None:
            return self.block_size_rule(q)
        if q.cfg.block_size is None:
            return True  # before the kernel sizes are asked for, as in vLLM
        return fits_kernel_block_sizes(q.cfg.block_size, self.block_sizes(q))

    def supports_capability(self, q: Query) -> bool:
        check = self.capability
        # A CapabilityRange looks at the capability alone; a Rule at the whole query.
        return check(q.cap) if isinstance(check, CapabilityRange) else check(q)


def fits_kernel_block_sizes(block_size: int | None, sizes: tuple[BlockSize, ...]) -> bool:
    """``AttentionBackend.supports_block_size`` over given kernel sizes: None
    or no sizes fit anything, else a multiple of one of them."""
    if block_size is None or not sizes:
        return True
    return any(block_size % (s.base if isinstance(s, MultipleOf) else s) == 0 for s in sizes)
