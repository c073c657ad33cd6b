"""SGLang 0.5.23's attention-backend resolution, as plain functions of
explicit inputs (no torch, no sglang import, no environment reads).

SGLang does not select per layer like vLLM: its server-argument resolution
pipeline (``sglang/srt/arg_groups/pipeline.py``) settles one attention
backend (or a prefill/decode pair) and one page size for the whole server.
``resolve.resolve`` runs the passes of that pipeline that decide those
fields, in SGLang's order, and keeps a trail of every change.

Modules: ``choices`` (SGLang's value sets), ``platform`` (the probes of
``utils/common.py``), ``model`` (the ModelConfig facts read),
``inputs`` (server flags), ``state`` (declarations and the trail),
``default_rule`` (``get_default_attn_backend``), ``model_overrides``
(the per-architecture declarations), ``passes`` (the hooks),
``resolve`` (the pipeline order), ``kernels`` (what each backend runs) and
``compare`` (vLLM beside SGLang).
"""

from attn_select.selector.engines import SGLANG, SGLANG_VERSION

ENGINE, ENGINE_VERSION = SGLANG, SGLANG_VERSION
