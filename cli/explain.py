"""`attn-select explain`: vLLM 0.33.0's attention backend selection, every
reason, the FlashAttention version and FlashInfer's dispatch; with
``--engine sglang`` SGLang 0.5.23's resolution and its trail, with
``--engine both`` the two side by side; with ``--engine vllm-installed`` /
``sglang-installed`` the installed engine's own code beside the mirror."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Optional

import typer

from attn_select.cli import options as o
from attn_select.cli.exit import ExitCode
from attn_select.selector.overrides import FIELDS, Overrides

if TYPE_CHECKING:
    from attn_select.selector.sglang.inputs import ServerFlags

app = typer.Typer()


@app.command("explain")
@o.versioned
@o.what_if_options
def explain_cmd(
    model: Annotated[Optional[str], typer.Argument(help="Built-in model profile (`attn-select profiles` lists them), config.json, a folder holding one, or a Hugging Face id in the local cache. Omit to explain a raw selector config given by flags. After --: a pasted `vllm serve MODEL --flag ...` line.", show_default=False, autocompletion=o.complete_model)] = None,
    vllm_command: Annotated[Optional[list[str]], typer.Argument(help="The rest of a pasted vllm serve line (after --).", show_default=False, metavar="[VLLM_SERVE_ARGS]...")] = None,
    device: o.DeviceOpt = None,
    capability: o.CapabilityOpt = None,
    kernels: o.KernelsOpt = None,
    revision: o.RevisionOpt = None,
    trust_remote_code: o.TrustRemoteCodeOpt = False,
    fmt: o.FormatOpt = o.Format.text,
    ov: Overrides = Overrides(),  # one flag per field (o.what_if_options)
    attention_config: o.AttentionConfigOpt = None,
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
    vllm_python: o.VllmPythonOpt = None,
    sglang_python: o.SglangPythonOpt = None,
    engine_timeout: o.EngineTimeoutOpt = 900,
) -> None:
    """Explain which attention backend vLLM {vllm} selects, and why.

    Exit 0 when every attention group has a backend, 1 when vLLM would raise
    (nothing valid, an explicit --attention-backend or --mla-prefill-backend
    that is invalid) or SGLang would raise at configuration time, 2 for bad input.
    """
    from attn_select.selector.host.engine_packages import engine_warnings
    from attn_select.cli.inputs import resolve_device, resolve_kernels
    from attn_select.selector.errors import UserError
    from attn_select.selector.vllm_inputs import read_vllm_inputs

    # --engine sglang-installed reads its inputs as --engine sglang does
    inputs_engine = "sglang" if engine is o.Engine.sglang_installed else engine.value
    model, ov, sglang_backend, load, input_notes = read_vllm_inputs(
        model, vllm_command, ov, engine=inputs_engine, attention_backend=attention_backend,
        attention_config=attention_config, revision=revision, trust_remote_code=trust_remote_code,
    )

    if engine not in (o.Engine.vllm, o.Engine.vllm_installed):
        from attn_select.selector.sglang.inputs import ServerFlags

        # kv_cache_dtype and tp_size come from the what-ifs, in SGLang's terms
        flags = ServerFlags(
            attention_backend=sglang_backend, prefill_attention_backend=prefill_attention_backend,
            decode_attention_backend=decode_attention_backend, page_size=page_size,
            speculative_algorithm=speculative_algorithm, speculative_eagle_topk=speculative_eagle_topk,
            speculative_num_steps=speculative_num_steps, speculative_num_draft_tokens=speculative_num_draft_tokens,
            enable_deterministic_inference=enable_deterministic_inference,
        )
        if engine is o.Engine.sglang_installed:
            report = _explain_sglang_installed(model, device, capability, kernels, flags, cuda_version, ov,
                                               sglang_python, engine_timeout, load, input_notes)
            from attn_select.cli.formats import render

            typer.echo(render(report, fmt.value), nl=False)
            raise typer.Exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)
        report = _explain_other_engine(engine.value, model, device, capability, kernels, flags, cuda_version, ov,
                                       load, input_notes)
        shown = ("sglang",) if engine is o.Engine.sglang else ("vllm", "sglang")
        report = o.attach_warnings(report, engine_warnings(shown, vllm_python, sglang_python,
                                                           own_code="--engine vllm-installed",
                                                           sglang_own_code="--engine sglang-installed"))
        from attn_select.cli.formats import render

        typer.echo(render(report, fmt.value), nl=False)
        raise typer.Exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)
    sglang_given = {
        "--prefill-attention-backend": prefill_attention_backend,
        "--decode-attention-backend": decode_attention_backend, "--page-size": page_size,
        "--speculative-algorithm": speculative_algorithm, "--speculative-eagle-topk": speculative_eagle_topk,
        "--speculative-num-steps": speculative_num_steps,
        "--speculative-num-draft-tokens": speculative_num_draft_tokens,
        "--enable-deterministic-inference": enable_deterministic_inference or None, "--cuda-version": cuda_version,
    }
    named = [flag for flag, value in sglang_given.items() if value is not None]
    if named:
        raise UserError(f"{named[0]} is an SGLang flag; add --engine sglang or --engine both "
                        "(vLLM's are --attention-backend and --block-size)")
    if engine is o.Engine.vllm_installed:
        report = _explain_installed(model, device, capability, kernels, ov, vllm_python, engine_timeout,
                                    load, input_notes)
        from attn_select.selector.vllm_installed import RefusalComparison

        if isinstance(report, RefusalComparison):  # the mirror refused: the engine configs compared
            import json

            if report.same:  # both releases refuse: bad input, as for the mirror alone
                raise UserError(report.both_refuse())
            typer.echo(json.dumps(report.to_dict(), indent=2) if fmt.value == "json" else report.text(), nl=False)
            raise typer.Exit(ExitCode.FINDINGS)
        from attn_select.cli.formats import render

        typer.echo(render(report, fmt.value), nl=False)
        raise typer.Exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)

    from attn_select.selector.explain import check_overrides, explain

    check_overrides(ov, flag=True)
    dev = resolve_device(device, capability)
    kern = resolve_kernels(kernels, probed_device=device is None and capability is None)
    facts = None
    if model is not None:
        from attn_select.selector.profiles import load_model

        # vLLM's "auto" dtype depends on the GPU (no bfloat16 before 8.0).
        facts = load_model(model, tp=ov.tp, dtype=ov.dtype or "auto", capability=dev.capability, **load)
    elif revision is not None:
        raise UserError("--revision needs a MODEL (a Hugging Face id in the local cache)")
    report = explain(facts, dev, kern, ov, input_notes)
    report = o.attach_warnings(report, engine_warnings(("vllm",), vllm_python, sglang_python,
                                                       own_code="--engine vllm-installed"))

    from attn_select.cli.formats import render

    typer.echo(render(report, fmt.value), nl=False)
    raise typer.Exit(ExitCode.OK if report.ok else ExitCode.FINDINGS)


def _explain_installed(model: str | None, device: str | None, capability: str | None, kernels: str | None,
                       ov: Overrides, vllm_python: str | None, timeout: float,
                       load: dict[str, object], input_notes: tuple[str, ...]) -> object:
    """--engine vllm-installed: the mirror's explanation, the installed vLLM's
    own answer for the same model, device and flags, and their differences.
    The mirror assumes the kernels that vLLM has (or --kernels, which the
    installed side then stands in for)."""
    from attn_select.cli import installed_engine as ie
    from attn_select.cli.inputs import resolve_device, resolve_kernels
    from attn_select.selector.errors import UserError
    from attn_select.selector.explain import EngineConfigRefusal, check_overrides, explain
    from attn_select.selector.profiles import load_model
    from attn_select.selector.vllm_installed import case_for, engine_case, installed_explanation, refusal_comparison

    if model is None:
        raise UserError("--engine vllm-installed needs a MODEL: vLLM's engine config is built from the model's "
                        "config.json (a raw selector config is the mirror's: use --engine vllm)")
    check_overrides(ov, flag=True)
    python, _ = ie.engine_python(vllm_python)
    live = device is None and capability is None
    dev = resolve_device(device, capability)
    given = resolve_kernels(kernels, probed_device=False) if kernels is not None else None
    kern = given if given is not None else ie.installed_kernels(python)
    facts = load_model(model, tp=ov.tp, dtype=ov.dtype or "auto", capability=dev.capability, **load)
    try:
        mirror = explain(facts, dev, kern, ov, input_notes)
    except EngineConfigRefusal as e:
        # 0.33.0's refusal need not be the installed release's: ask it about the engine config alone
        with ie.temp_models() as tmp:
            answer = ie.run_selection(python, [engine_case(ov, dev.capability, ie.model_folder(model, tmp, load),
                                                           load)],
                                      live=live, kernels=given, artifactory=kern.trtllm_cubins, timeout=timeout)
        return refusal_comparison(str(e), answer, python)
    with ie.temp_models() as tmp:
        case = case_for(mirror, ie.model_folder(model, tmp, load), load)
        answer = ie.run_selection(python, [case], live=live, kernels=given,
                                  artifactory=kern.trtllm_cubins, timeout=timeout)
    extra = ("per-layer inputs (head size, sinks, sliding window, attention type, MLA): attn-select's reading "
             "of the model, sent with each group; vLLM builds the engine config itself",)
    return installed_explanation(mirror, answer, python, extra)


def _explain_sglang_installed(model: str | None, device: str | None, capability: str | None, kernels: str | None,
                              flags: ServerFlags, cuda_version: str | None, ov: Overrides,
                              sglang_python: str | None, timeout: float, load: dict[str, object],
                              input_notes: tuple[str, ...]) -> object:
    """--engine sglang-installed: the mirror's resolution, the installed
    SGLang's own for the same model, device and flags, and their
    differences. The mirror assumes the FlashInfer that SGLang's Python has
    (or --kernels, which the installed side then stands in for) and, on this
    machine's own GPU, the CUDA version its torch was built with."""
    from attn_select.cli import installed_engine as ie
    from attn_select.selector.config import Kernels
    from attn_select.selector.errors import UserError
    from attn_select.selector.sglang_installed import case_for, installed_explanation

    if model is None:
        raise UserError("--engine sglang-installed needs a MODEL: SGLang resolves one backend per server from the "
                        "model's config (a raw selector config is vLLM's)")
    _no_vllm_what_ifs(ov)  # bad flags before the engine's Python is asked anything
    flags.validate()
    python, _ = ie.engine_python(sglang_python, "sglang")
    live = device is None and capability is None
    kern = None
    if kernels is None or (live and cuda_version is None):
        facts = ie.sglang_environment(python)
        if kernels is None:
            kern = Kernels(flashinfer_python=facts["flashinfer"], source=f"probe of the SGLang in {python}")
        if live and cuda_version is None:
            cuda_version = facts["torch_cuda"]
    mirror = _explain_other_engine("sglang", model, device, capability, kernels, flags, cuda_version, ov, load,
                                   input_notes, kern=kern)
    with ie.temp_models() as tmp:
        case = case_for(mirror, ie.model_folder(model, tmp, load))
        answer = ie.run_resolution(python, [case], live=live, timeout=timeout)
    return installed_explanation(mirror, answer, python)


def _no_vllm_what_ifs(ov: Overrides) -> None:
    """The what-ifs SGLang has no name for are a user error with --engine sglang."""
    from attn_select.selector.errors import UserError

    vllm_only = [f for f in FIELDS if f.name in ov.given() and f.name not in ("tp", "kv_cache_dtype", "dtype")]
    if vllm_only:
        raise UserError(f"{vllm_only[0].flag} is a vLLM what-if; SGLang's flags are --attention-backend, "
                        "--page-size, ... (use --engine both to see both engines)")


def _explain_other_engine(
    engine: str,
    model: str | None,
    device: str | None,
    capability: str | None,
    kernels: str | None,
    flags: ServerFlags,
    cuda_version: str | None,
    ov: Overrides,
    load: dict[str, object] | None = None,
    input_notes: tuple[str, ...] = (),
    kern: object = None,
) -> object:
    """--engine sglang: SGLang's resolution; --engine both: vLLM's selection
    beside it. SGLang's flags go to the SGLang side only; --kv-cache-dtype
    serves both, each engine reading it under its own name (docs/sglang.md).
    ``kern``: the kernels already known (--engine sglang-installed), else
    from --kernels or the probe."""
    from dataclasses import replace

    from attn_select.cli.inputs import resolve_device, resolve_kernels
    from attn_select.selector.errors import UserError
    from attn_select.selector.sglang.explain import explain_sglang, sglang_kv_cache_dtype, vllm_kv_cache_dtype

    if model is None:
        raise UserError(f"--engine {engine} needs a MODEL: SGLang resolves one backend per server from the "
                        "model's config (a raw selector config is vLLM's)")
    dev = resolve_device(device, capability)
    kern = kern or resolve_kernels(kernels, probed_device=device is None and capability is None)
    sgl_kv, sgl_note = sglang_kv_cache_dtype(ov.kv_cache_dtype, engine)
    flags = replace(flags, kv_cache_dtype=sgl_kv, tp_size=ov.tp)
    flags.validate()
    notes = ((sgl_note,) if sgl_note else ()) + tuple(input_notes)
    from attn_select.selector.profiles import load_model

    # --engine sglang reads the model as SGLang does (from its config): a
    # model vLLM builds without a selection is still SGLang's to resolve.
    # --engine both reads it once for each engine, each with its own loader
    # (transformers 5.19 and SGLang's classes, or 5.20 and vLLM's)
    def read(as_engine: str) -> object:
        return load_model(model, tp=flags.tp_size, dtype=ov.dtype or "auto", capability=dev.capability,
                          engine=as_engine, **(load or {}))

    if engine == "sglang":
        _no_vllm_what_ifs(ov)
        return explain_sglang(read("sglang"), dev, kern, flags, cuda_version, notes)
    facts = read("vllm")
    sgl_facts = read("sglang")

    from attn_select.selector.explain import check_overrides, explain
    from attn_select.selector.sglang.compare import compare

    vllm_kv, vllm_note = vllm_kv_cache_dtype(ov.kv_cache_dtype)
    if vllm_note:
        notes += (vllm_note,)
    ov = ov._replace(kv_cache_dtype=vllm_kv)  # SGLang's spelling mapped to vLLM's first
    check_overrides(ov, flag=True)
    sgl = explain_sglang(sgl_facts, dev, kern, flags, cuda_version, notes)
    return compare(explain(facts, dev, kern, ov, input_notes), sgl)
