"""One backend, one query -> the list of reasons it is invalid (empty = valid).

Mirrors ``AttentionBackend.validate_configuration`` (vllm/v1/attention/backend.py)
check for check, in its order, followed by the one ``supports_combination``
string. The inputs are all in the ``Query``; nothing here probes anything.
"""

from __future__ import annotations

from attn_select.backends.spec import BackendSpec, resolve
from attn_select.selector import reasons as R
from attn_select.selector.config import Query


def validate(spec: BackendSpec, q: Query) -> list[str]:
    """The reasons ``spec`` cannot serve ``q``, in vLLM's order."""
    cfg = q.cfg
    out: list[str] = []
    if not spec.supports_head_size(q):
        out.append(R.HEAD_SIZE)
    if not spec.supports_dtype(q):
        out.append(R.DTYPE)
    if not spec.supports_kv_cache_dtype(q):
        out.append(R.KV_CACHE_DTYPE)
    if not spec.supports_block_size(q):
        out.append(R.BLOCK_SIZE)
    if cfg.use_mm_prefix and not resolve(spec.mm_prefix, q):
        out.append(R.MM_PREFIX)
    if cfg.use_mla != spec.is_mla:
        out.append(R.MLA if cfg.use_mla else R.NON_MLA)
    if cfg.has_sink and not resolve(spec.sink, q):
        out.append(R.SINK)
    if cfg.use_sparse != spec.is_sparse:
        out.append(R.SPARSE if cfg.use_sparse else R.NON_SPARSE)
    if cfg.use_per_head_quant_scales and not resolve(spec.per_head_quant_scales, q):
        out.append(R.PER_HEAD_QUANT_SCALES)
    if not spec.supports_capability(q):
        out.append(R.COMPUTE_CAPABILITY)
    if cfg.attn_type not in spec.attn_types:
        out.append(R.attn_type(cfg.attn_type))
    if cfg.has_sliding_window and not spec.sliding_window:
        out.append(R.SLIDING_WINDOW)
    if cfg.use_rswa and not spec.rswa:
        out.append(R.RSWA)
    if cfg.use_non_causal and not spec.non_causal:
        out.append(R.NON_CAUSAL)
    if cfg.use_mla and cfg.use_non_causal and cfg.use_dcp and not spec.non_causal_dcp:
        out.append(R.NON_CAUSAL_MLA_DCP)
    if cfg.use_batch_invariant and not spec.batch_invariance:
        out.append(R.BATCH_INVARIANCE)
    if cfg.use_kv_connector and not spec.kv_connector:
        out.append(R.KV_CONNECTOR)
    if cfg.use_pcp and not spec.pcp:
        out.append(R.PCP)
    if cfg.use_dcp and not spec.dcp:
        out.append(R.DCP)
    if cfg.use_adaptive_verification and not resolve(spec.device_cpu_query_lens_mismatch, q):
        out.append(R.QUERY_LENS_MISMATCH)
    if spec.combination is not None:
        reason = spec.combination(q)
        if reason is not None:
            out.append(reason)
    return out


def import_failure(spec: BackendSpec, q: Query) -> str | None:
    """"Type: message" when vLLM could not import the backend's class here."""
    return spec.import_error(q) if spec.import_error is not None else None


def check(spec: BackendSpec, q: Query) -> list[str]:
    """What vLLM's loop records for one backend: the import failure as the
    only reason when its class cannot be imported, else ``validate``."""
    failure = import_failure(spec, q)
    return [failure] if failure is not None else validate(spec, q)
