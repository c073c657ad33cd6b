"""SGLang 0.5.23's resolution of the attention fields, in the order of
``run_resolution_pipeline`` (sglang/srt/arg_groups/pipeline.py):

1. ``handle_deprecated_args``: deprecated backend names renamed.
2. ``handle_model_specific_adjustments``: the per-architecture declarations
   (``model_overrides``), the DeepSeek DSA KV-cache dtype and split backends,
   the per-architecture backend asserts, the hybrid-Mamba cache strategy.
3. ``handle_deterministic_inference``.
4. ``handle_nvfp4_prefill_kv_dequant_dtype``.
5. ``handle_attention_backend_compatibility``: the split-backend override and
   the default rule (``get_default_attn_backend``), then the fix-ups: MLA /
   TRT-LLM / CuteDSL / HPC-Ops page sizes, TRT-LLM MLA KV dtypes, the CuteDSL
   prefill fill, TRT-LLM MHA platform checks, fa3 + fp8_e5m2 -> triton, the
   FA4 page size, the Intel XPU page sizes.
6. ``handle_kv4_compatibility``, ``handle_mxfp8_kv_cache_compatibility``.
7. ``_page_size_default``.
8. ``handle_speculative_decoding``: algorithm names, automatic parameters,
   the topk checks.

The hooks between these that do not touch the attention fields (memory,
CUDA graphs, MoE, parallelism, ...) are not run.
"""

from __future__ import annotations

from dataclasses import dataclass

from attn_select.selector.sglang import passes as P
from attn_select.selector.sglang.default_rule import DefaultRule
from attn_select.selector.sglang.inputs import ServerFlags
from attn_select.selector.sglang.model import SGLangModel
from attn_select.selector.sglang.platform import Platform
from attn_select.selector.sglang.state import SGLangError, State, Step

# The SGLang fields resolution may declare that attn-select follows, with the
# defaults of the ones that are not attn-select inputs.
FIXED_DEFAULTS: dict[str, object] = {
    "speculative_draft_attention_backend": None,
    "speculative_attention_mode": "prefill",
    "speculative_draft_model_path": None,
    "prefill_kv_cache_dequant_dtype": "auto",
    "dsa_prefill_backend": None,
    "dsa_decode_backend": None,
    "mamba_radix_cache_strategy": "auto",
    "uses_mamba_radix_cache": False,
    "disable_overlap_schedule": False,
    "disable_radix_cache": False,
    "linear_attn_backend": "triton",
}
# Not fields of ServerArgs' attention group but read by the passes.
MODEL_PATH = "<model>"

FOLLOWED_FIELDS = (
    "attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
    "kv_cache_dtype", "speculative_algorithm", "speculative_eagle_topk", "speculative_num_steps",
    "speculative_num_draft_tokens", "speculative_draft_attention_backend", "speculative_attention_mode",
    "prefill_kv_cache_dequant_dtype", "dsa_prefill_backend", "dsa_decode_backend",
    "mamba_radix_cache_strategy", "uses_mamba_radix_cache", "disable_overlap_schedule",
)


@dataclass(frozen=True)
class Resolution:
    flags: ServerFlags
    platform: Platform
    model: SGLangModel
    default_rule: DefaultRule | None  # None when _attention_backend_default did not consult it
    default_rule_skipped: str | None  # why it was not consulted
    final: dict[str, object]  # every followed field, after resolution (up to the error)
    trail: tuple[Step, ...]  # declarations that changed a field, in order
    error: SGLangError | None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def attention_backend(self) -> object:
        return self.final["attention_backend"]

    @property
    def prefill_backend(self) -> object:
        return P.attention_backends_of(_View(self.final))[0]

    @property
    def decode_backend(self) -> object:
        return P.attention_backends_of(_View(self.final))[1]

    @property
    def hybrid(self) -> bool:
        return self.prefill_backend != self.decode_backend

    @property
    def page_size(self) -> object:
        return self.final["page_size"]

    def last_step(self, field: str) -> Step | None:
        steps = [s for s in self.trail if s.field == field]
        return steps[-1] if steps else None

    def page_size_source(self) -> str:
        step = self.last_step("page_size")
        if step is not None:
            return step.source
        return "--page-size" if self.flags.page_size is not None else "unset"

    def kv_cache_dtype_rewrite(self) -> Step | None:
        return self.last_step("kv_cache_dtype")


class _View:
    def __init__(self, values: dict) -> None:
        self.__dict__.update(values)


def initial_state(flags: ServerFlags) -> State:
    values: dict[str, object] = dict(FIXED_DEFAULTS)
    for name in ("attention_backend", "prefill_attention_backend", "decode_attention_backend", "page_size",
                 "kv_cache_dtype", "speculative_algorithm", "speculative_eagle_topk", "speculative_num_steps",
                 "speculative_num_draft_tokens", "enable_deterministic_inference", "tp_size"):
        values[name] = getattr(flags, name)
    values["model_path"] = MODEL_PATH
    return State(values)


def resolve(flags: ServerFlags, platform: Platform, model: SGLangModel) -> Resolution:
    """Run the passes; a raise stops resolution where SGLang's would."""
    s = initial_state(flags)
    rule: DefaultRule | None = None
    error: SGLangError | None = None
    consulted = False
    try:
        P.handle_deprecated_args(s)
        P.handle_model_specific_adjustments(s, platform, model)
        P.handle_deterministic_inference(s, platform, model)
        P.handle_nvfp4_prefill_kv_dequant_dtype(s, platform)
        before = s.snapshot()
        rule = P.handle_attention_backend_compatibility(s, platform, model)
        consulted = True
        P.handle_kv4_compatibility(s, platform, model)
        P.handle_mxfp8_kv_cache_compatibility(s, platform)
        P._page_size_default(s)
        P.handle_speculative_decoding(s, model)
    except SGLangError as exc:
        error = exc
    skipped = None
    if rule is None:
        skipped = _why_skipped(s, before if consulted else None, flags)
    final = {k: s.get(k) for k in FOLLOWED_FIELDS}
    trail = tuple(st for st in s.trail if st.field in FOLLOWED_FIELDS)
    return Resolution(flags, platform, model, rule, skipped, final, trail, error)


def _why_skipped(s: State, before: dict | None, flags: ServerFlags) -> str:
    if before is None:
        return "resolution stopped before the default rule"
    if before["prefill_attention_backend"] is not None and (
            before["prefill_attention_backend"] == before["decode_attention_backend"]):
        return "prefill and decode backends are equal, so they set the backend"
    if flags.attention_backend is not None:
        return "--attention-backend given"
    setters = [st.source for st in s.trail if st.field == "attention_backend"]
    if setters:
        return f"attention_backend already declared by {setters[0]}"
    return "attention_backend already set"
