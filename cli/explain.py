"""`attn-select explain`: vLLM 0.33.0's attention backend selection, every
reason, the FlashAttention version and FlashInfer's dispatch."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from attn_select.cli import options as o
from attn_select.cli.exit import ExitCode

app = typer.Typer()


@app.command("explain")
def explain_cmd(
    model: Annotated[Optional[str], typer.Argument(help="Built-in model profile, config.json, or a folder holding one. Omit to explain a raw selector config given by flags.", show_default=False)] = None,
    device: o.DeviceOpt = None,
    capability: o.CapabilityOpt = None,
    kernels: o.KernelsOpt = None,
    fmt: o.FormatOpt = o.Format.text,
    dtype: o.DtypeOpt = None,
    kv_cache_dtype: o.KvDtypeOpt = None,
    block_size: o.BlockSizeOpt = None,
    backend: o.BackendOpt = None,
    tp: o.TpOpt = 1,
    num_heads: o.NumHeadsOpt = None,
    flash_attn_version: o.FaVersionOpt = None,
    use_trtllm_attention: o.TrtllmOpt = None,
    dcp_size: o.DcpOpt = None,
    head_size: o.HeadSizeOpt = None,
    attn_type: o.AttnTypeOpt = None,
    use_mla: o.UseMla = None,
    has_sink: o.HasSink = None,
    use_sparse: o.UseSparse = None,
    use_mm_prefix: o.UseMmPrefix = None,
    use_per_head_quant_scales: o.UsePerHead = None,
    has_sliding_window: o.HasSlidingWindow = None,
    use_non_causal: o.UseNonCausal = None,
    use_batch_invariant: o.UseBatchInvariant = None,
    use_kv_connector: o.UseKvConnector = None,
    use_pcp: o.UsePcp = None,
    use_adaptive_verification: o.UseAdaptiveVerification = None,
    use_dcp: o.UseDcp = None,
    use_rswa: o.UseRswa = None,
) -> None:
    """Explain which attention backend vLLM 0.33.0 selects, and why.

    Exit 0 when every attention group has a backend, 1 when vLLM would raise
    (nothing valid, or an explicit --backend that is invalid), 2 for bad input.
    """
    from attn_select.cli.inputs import resolve_device, resolve_kernels
    from attn_select.selector.explain import Overrides, explain

    dev = resolve_device(device, capability)
    kern = resolve_kernels(kernels, probed_device=device is None and capability is None)
    ov = Overrides(
        dtype=dtype, kv_cache_dtype=kv_cache_dtype, block_size=block_size, backend=backend,
        tp=tp, num_heads=num_heads, flash_attn_version=flash_attn_version,
        use_trtllm_attention=use_trtllm_attention, dcp_size=dcp_size, head_size=head_size,
        use_mla=use_mla, has_sink=has_sink, use_sparse=use_sparse, use_mm_prefix=use_mm_prefix,
        use_per_head_quant_scales=use_per_head_quant_scales, attn_type=attn_type,
        has_sliding_window=has_sliding_window, use_non_causal=use_non_causal,
        use_batch_invariant=use_batch_invariant, use_kv_connector=use_kv_connector,
        use_pcp=use_pcp, use_adaptive_verification=use_adaptive_verification,
        use_dcp=use_dcp, use_rswa=use_rswa,
    )
    facts = None
    if model is not None:
        from attn_select.selector.profiles import load_model

        # vLLM's "auto" dtype depends on the GPU (no bfloat16 before 8.0).
        facts = load_model(model, tp=tp, dtype=dtype or "auto", capability=dev.capability)
    report = explain(facts, dev, kern, ov)

    from attn_select.cli.formats import render

    typer.echo(render(report, fmt.value), nl=False)
    raise typer.Exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)
