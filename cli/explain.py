"""`attn-select explain`: vLLM 0.33.0's attention backend selection, every
reason, the FlashAttention version and FlashInfer's dispatch; with
``--engine sglang`` SGLang 0.5.23's resolution and its trail, with
``--engine both`` the two side by side."""

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
    engine: o.EngineOpt = o.Engine.vllm,
    attention_backend: o.AttentionBackendOpt = None,
    prefill_attention_backend: o.PrefillBackendOpt = None,
    decode_attention_backend: o.DecodeBackendOpt = None,
    page_size: o.PageSizeOpt = None,
    speculative_algorithm: o.SpecAlgoOpt = None,
    speculative_eagle_topk: o.SpecTopkOpt = None,
    speculative_num_steps: o.SpecStepsOpt = None,
    speculative_num_draft_tokens: o.SpecDraftOpt = None,
    enable_deterministic_inference: o.DeterministicOpt = False,
    cuda_version: o.CudaVersionOpt = None,
) -> None:
    """Explain which attention backend vLLM 0.33.0 selects, and why.

    Exit 0 when every attention group has a backend, 1 when vLLM would raise
    (nothing valid, or an explicit --backend that is invalid) or SGLang would
    raise at configuration time, 2 for bad input.
    """
    from attn_select.cli.inputs import resolve_device, resolve_kernels

    sglang_given = {
        "--attention-backend": attention_backend, "--prefill-attention-backend": prefill_attention_backend,
        "--decode-attention-backend": decode_attention_backend, "--page-size": page_size,
        "--speculative-algorithm": speculative_algorithm, "--speculative-eagle-topk": speculative_eagle_topk,
        "--speculative-num-steps": speculative_num_steps,
        "--speculative-num-draft-tokens": speculative_num_draft_tokens,
        "--enable-deterministic-inference": enable_deterministic_inference or None, "--cuda-version": cuda_version,
    }
    # explain's what-if flags, one for one the fields of selector.explain.Overrides
    vllm_overrides = dict(
        dtype=dtype, kv_cache_dtype=kv_cache_dtype, block_size=block_size, backend=backend, tp=tp,
        num_heads=num_heads, flash_attn_version=flash_attn_version,
        use_trtllm_attention=use_trtllm_attention, dcp_size=dcp_size, head_size=head_size,
        use_mla=use_mla, has_sink=has_sink, use_sparse=use_sparse, use_mm_prefix=use_mm_prefix,
        use_per_head_quant_scales=use_per_head_quant_scales, attn_type=attn_type,
        has_sliding_window=has_sliding_window, use_non_causal=use_non_causal,
        use_batch_invariant=use_batch_invariant, use_kv_connector=use_kv_connector,
        use_pcp=use_pcp, use_adaptive_verification=use_adaptive_verification,
        use_dcp=use_dcp, use_rswa=use_rswa,
    )
    if engine is not o.Engine.vllm:
        report = _explain_other_engine(
            engine.value, model, device, capability, kernels, sglang_given, vllm_overrides
        )
        from attn_select.cli.formats import render

        typer.echo(render(report, fmt.value), nl=False)
        raise typer.Exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)
    named = [flag for flag, value in sglang_given.items() if value is not None]
    if named:
        from attn_select.selector.errors import UserError

        raise UserError(f"{named[0]} is an SGLang flag; add --engine sglang or --engine both "
                        "(vLLM's are --backend and --block-size)")

    from attn_select.selector.explain import Overrides, check_overrides, explain

    ov = Overrides(**vllm_overrides)
    check_overrides(ov, flag=True)
    dev = resolve_device(device, capability)
    kern = resolve_kernels(kernels, probed_device=device is None and capability is None)
    facts = None
    if model is not None:
        from attn_select.selector.profiles import load_model

        # vLLM's "auto" dtype depends on the GPU (no bfloat16 before 8.0).
        facts = load_model(model, tp=tp, dtype=dtype or "auto", capability=dev.capability)
    report = explain(facts, dev, kern, ov)

    from attn_select.cli.formats import render

    typer.echo(render(report, fmt.value), nl=False)
    raise typer.Exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)


def _explain_other_engine(
    engine: str,
    model: str | None,
    device: str | None,
    capability: str | None,
    kernels: str | None,
    sglang_given: dict[str, object],
    vllm_overrides: dict[str, object],
) -> object:
    """--engine sglang: SGLang's resolution; --engine both: vLLM's selection
    beside it. SGLang's flags go to the SGLang side only; --kv-cache-dtype
    serves both, each engine reading it under its own name (docs/sglang.md)."""
    from attn_select.cli.inputs import resolve_device, resolve_kernels
    from attn_select.selector.errors import UserError
    from attn_select.selector.sglang.explain import explain_sglang, sglang_kv_cache_dtype, vllm_kv_cache_dtype
    from attn_select.selector.sglang.inputs import ServerFlags

    if model is None:
        raise UserError(f"--engine {engine} needs a MODEL: SGLang resolves one backend per server from the "
                        "model's config (a raw selector config is vLLM's)")
    dev = resolve_device(device, capability)
    kern = resolve_kernels(kernels, probed_device=device is None and capability is None)
    kv_given = vllm_overrides["kv_cache_dtype"]
    sgl_kv, sgl_note = sglang_kv_cache_dtype(kv_given, engine)  # type: ignore[arg-type]
    flags = ServerFlags(
        attention_backend=sglang_given["--attention-backend"],  # type: ignore[arg-type]
        prefill_attention_backend=sglang_given["--prefill-attention-backend"],  # type: ignore[arg-type]
        decode_attention_backend=sglang_given["--decode-attention-backend"],  # type: ignore[arg-type]
        page_size=sglang_given["--page-size"],  # type: ignore[arg-type]
        kv_cache_dtype=sgl_kv,
        speculative_algorithm=sglang_given["--speculative-algorithm"],  # type: ignore[arg-type]
        speculative_eagle_topk=sglang_given["--speculative-eagle-topk"],  # type: ignore[arg-type]
        speculative_num_steps=sglang_given["--speculative-num-steps"],  # type: ignore[arg-type]
        speculative_num_draft_tokens=sglang_given["--speculative-num-draft-tokens"],  # type: ignore[arg-type]
        enable_deterministic_inference=bool(sglang_given["--enable-deterministic-inference"]),
        tp_size=int(vllm_overrides["tp"]),  # type: ignore[call-overload]
    )
    flags.validate()
    notes = (sgl_note,) if sgl_note else ()
    from attn_select.selector.profiles import load_model

    dtype = vllm_overrides["dtype"]
    facts = load_model(model, tp=flags.tp_size, dtype=dtype or "auto", capability=dev.capability)  # type: ignore[arg-type]
    if engine == "sglang":
        vllm_only = [k for k, v in vllm_overrides.items() if v is not None and k not in ("tp", "kv_cache_dtype", "dtype")]
        if vllm_only:
            flag = "--" + vllm_only[0].replace("_", "-")
            raise UserError(f"{flag} is a vLLM what-if; SGLang's flags are --attention-backend, --page-size, ... "
                            "(use --engine both to see both engines)")
        return explain_sglang(facts, dev, kern, flags, sglang_given["--cuda-version"], notes)  # type: ignore[arg-type]

    from attn_select.selector.explain import Overrides, check_overrides, explain
    from attn_select.selector.sglang.compare import compare

    vllm_kv, vllm_note = vllm_kv_cache_dtype(kv_given)  # type: ignore[arg-type]
    if vllm_note:
        notes += (vllm_note,)
    ov = Overrides(**{**vllm_overrides, "kv_cache_dtype": vllm_kv})  # type: ignore[arg-type]
    check_overrides(ov, flag=True)
    sgl = explain_sglang(facts, dev, kern, flags, sglang_given["--cuda-version"], notes)  # type: ignore[arg-type]
    return compare(explain(facts, dev, kern, ov), sgl)
