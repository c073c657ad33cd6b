"""The inputs of vLLM 0.33.0's second MLA decision, the MLA prefill backend,
as plain hashable values.

An MLA layer runs its new prefill tokens (and the context chunks) as ordinary
multi-head attention over up-projected K/V, through a backend of its own
(vllm/v1/attention/backends/mla/prefill/). ``get_mla_prefill_backend``
(prefill/selector.py) picks it from a ``MLAPrefillSelectorConfig`` of two
facts, the model's dtype and its MLA dims, plus the GPU; what is installed
and ``VLLM_BATCH_INVARIANT`` come in through the backends' own checks.

Mirrored here: ``MLADimensions`` (prefill/base.py), ``MLAPrefillSelectorConfig``
and how ``get_mla_prefill_backend`` builds it from the ``VllmConfig``. Leaf
module apart from ``selector.config``; no torch (dtypes are names).
"""

from __future__ import annotations

from typing import NamedTuple

from attn_select.selector.config import Capability, EngineContext, Kernels

# torch.get_default_dtype() where get_mla_prefill_backend finds no
# model_config: nothing has set torch's default, so it is float32.
NO_MODEL_DTYPE = "float32"


class MLADimensions(NamedTuple):
    """vLLM ``MLADimensions``: the three head dims a prefill kernel is built
    for. Compared field by field, like the frozen dataclass."""

    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int

    def __str__(self) -> str:
        # MLADimensions.__str__, which vLLM's reasons and repr embed.
        return (
            f"(qk_nope_head_dim={self.qk_nope_head_dim}, "
            f"qk_rope_head_dim={self.qk_rope_head_dim}, "
            f"v_head_dim={self.v_head_dim})"
        )


# MLAPrefillSelectorConfig's default: no MLA dims at all.
NO_DIMENSIONS = MLADimensions(0, 0, 0)


class MLAPrefillSelectorConfig(NamedTuple):
    """vLLM ``MLAPrefillSelectorConfig``. ``dtype`` is the torch dtype's name
    without "torch."."""

    dtype: str
    mla_dimensions: MLADimensions = NO_DIMENSIONS

    def vllm_repr(self) -> str:
        """The hand-written ``__repr__``, which the no-valid-backend error embeds."""
        return (
            f"MLAPrefillSelectorConfig(dtype=torch.{self.dtype}, "
            f"mla_dimensions={self.mla_dimensions})"
        )


def _dim(value: int | None) -> int:
    # getattr(hf_text_config, name, 0): an absent attribute reads as 0.
    return 0 if value is None else value


def mla_prefill_selector_config(ctx: EngineContext, dtype: str) -> MLAPrefillSelectorConfig:
    """What ``get_mla_prefill_backend`` builds: the model's dtype and the MLA
    dims read off ``hf_text_config``; without a model, torch's default dtype
    and no dims. ``dtype`` is ``model_config.dtype`` (the resolved one)."""
    if not ctx.has_model:
        return MLAPrefillSelectorConfig(dtype=NO_MODEL_DTYPE)
    return MLAPrefillSelectorConfig(
        dtype=dtype,
        mla_dimensions=MLADimensions(
            _dim(ctx.mla_qk_nope_head_dim),
            _dim(ctx.mla_qk_rope_head_dim),
            _dim(ctx.mla_v_head_dim),
        ),
    )


class PrefillQuery(NamedTuple):
    """Everything one prefill backend's ``validate_configuration`` looks at:
    its two arguments, and the hidden state it probes (what is installed,
    ``envs.VLLM_BATCH_INVARIANT``) made explicit."""

    cfg: MLAPrefillSelectorConfig
    cap: Capability
    kernels: Kernels
    batch_invariant: bool = False
