"""SGLang server flags attn-select takes, named as SGLang's fields, with
their SGLang defaults. Every other SGLang flag is at its default (no PD
disaggregation, no DP/CP attention, no HiCache/HiSparse, overlap schedule on,
radix cache on, linear-attention backend triton, device cuda)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from attn_select.selector.errors import UserError
from attn_select.selector.sglang.choices import (
    ATTENTION_BACKEND_CHOICES,
    KV_CACHE_DTYPES,
    MODELLED_SPECULATIVE,
    SPECULATIVE_ALGORITHMS,
    SPECULATIVE_ALIASES,
)


@dataclass(frozen=True)
class ServerFlags:
    attention_backend: str | None = None  # --attention-backend
    prefill_attention_backend: str | None = None  # --prefill-attention-backend
    decode_attention_backend: str | None = None  # --decode-attention-backend
    page_size: int | None = None  # --page-size
    kv_cache_dtype: str = "auto"  # --kv-cache-dtype
    speculative_algorithm: str | None = None  # --speculative-algorithm
    speculative_eagle_topk: int | None = None  # --speculative-eagle-topk
    speculative_num_steps: int | None = None  # --speculative-num-steps
    speculative_num_draft_tokens: int | None = None  # --speculative-num-draft-tokens
    enable_deterministic_inference: bool = False  # --enable-deterministic-inference
    tp_size: int = 1  # --tp-size

    def given(self) -> dict[str, object]:
        """Flags that differ from SGLang's defaults, for the report."""
        defaults = ServerFlags()
        return {k: v for k, v in asdict(self).items() if v != getattr(defaults, k)}

    def validate(self) -> None:
        """What SGLang's argparse rejects (exit 2 there too), plus what
        attn-select does not model, as one-line user errors."""
        for name in ("attention_backend", "prefill_attention_backend", "decode_attention_backend"):
            value = getattr(self, name)
            if value is not None and value not in ATTENTION_BACKEND_CHOICES:
                import difflib

                close = difflib.get_close_matches(value, ATTENTION_BACKEND_CHOICES, n=1)
                hint = f"did you mean {close[0]!r}? " if close else ""
                flag = "--" + name.replace("_", "-")
                raise UserError(f"{flag}: unknown SGLang attention backend {value!r}; {hint}"
                                f"choose from {', '.join(ATTENTION_BACKEND_CHOICES)}")
        if self.kv_cache_dtype not in KV_CACHE_DTYPES:
            raise UserError(f"--kv-cache-dtype: {self.kv_cache_dtype!r} is not an SGLang KV-cache dtype; "
                            f"choose from {', '.join(KV_CACHE_DTYPES)}")
        for name in ("page_size", "speculative_eagle_topk", "speculative_num_steps",
                     "speculative_num_draft_tokens", "tp_size"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UserError(f"--{name.replace('_', '-')} must be a positive integer, got {value}")
        algo = self.speculative_algorithm
        if algo is not None:
            upper = algo.upper()
            if upper in SPECULATIVE_ALGORITHMS + SPECULATIVE_ALIASES and upper not in MODELLED_SPECULATIVE:
                raise UserError(
                    f"--speculative-algorithm {algo}: attn-select models "
                    f"{', '.join(MODELLED_SPECULATIVE)}; SGLang resolves {upper} from its draft "
                    "checkpoint, which attn-select does not read"
                )


FIELD_NAMES = tuple(f.name for f in fields(ServerFlags))
