"""Options and help texts shared by explain, run, lock and matrix.

The what-if flags are not written here: each is built from its field of
``selector.overrides.Overrides`` (``what_if_option``), and ``what_if_options``
gives a command all of them at once."""

from __future__ import annotations

import inspect
from enum import Enum
from typing import Annotated, Any, Callable, Optional

import typer

from attn_select.selector.config import Kernels
from attn_select.selector.engines import SGLANG_VERSION, VLLM_VERSION
from attn_select.selector.overrides import FIELDS, WHAT_IF_PANEL, Field, Overrides


class Format(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"


class TextOrJson(str, Enum):
    """--format of the commands whose report is text or JSON only."""

    text = "text"
    json = "json"


TextOrJsonOpt = Annotated[TextOrJson, typer.Option("--format", "-f", help="Output format.")]


class Engine(str, Enum):
    vllm = "vllm"
    sglang = "sglang"
    both = "both"
    vllm_installed = "vllm-installed"  # the installed vLLM's own selection code
    sglang_installed = "sglang-installed"  # the installed SGLang's own resolution code


_IN = "Inputs"


def _float_range_type() -> type:
    """click's FloatRange: vendored in typer 0.28, click's own before."""
    try:
        from typer._click.types import FloatRange
    except ImportError:  # typer < 0.28 runs on click
        from click.types import FloatRange  # type: ignore[no-redef]
    return FloatRange


def seconds(min: float, infinite: bool = True) -> Any:
    """The click type of a float option counted in seconds, at least ``min``:
    click's FloatRange lets nan through (every comparison with it is
    false), so a timeout of nan would never expire and a NaN sleep would
    raise deep inside the subprocess module. ``infinite`` False refuses inf
    too (a span timed until it ends)."""
    base = _float_range_type()

    class Seconds(base):  # type: ignore[misc, valid-type]
        name = "seconds"

        def convert(self, value: Any, param: Any, ctx: Any) -> Any:
            import math

            rv = super().convert(value, param, ctx)
            if math.isnan(rv):
                self.fail(f"{value!r} is not a number of seconds", param, ctx)
            if not infinite and math.isinf(rv):
                self.fail(f"{value!r}: give a finite number of seconds", param, ctx)
            return rv

    return Seconds(min=min)


def complete_device(incomplete: str) -> list[str]:
    """Shell completion of --device: the device profiles."""
    from attn_select.selector.profiles import device_profile_names

    return [n for n in device_profile_names() if n.startswith(incomplete)]


def complete_model(incomplete: str) -> list[str]:
    """Shell completion of MODEL: the model profiles (the shell adds paths)."""
    from attn_select.selector.profiles import model_profile_names

    return [n for n in model_profile_names() if n.startswith(incomplete)]


DeviceOpt = Annotated[Optional[str], typer.Option("--device", help="Device profile (h100, b200, a100, ...; `attn-select profiles` lists them). Default: the visible GPU.", rich_help_panel=_IN, autocompletion=complete_device)]
CapabilityOpt = Annotated[Optional[str], typer.Option("--capability", help="Compute capability X.Y instead of a device profile.", rich_help_panel=_IN)]
# --kernels' vocabulary, for its help texts
KERNEL_NAMES = ",".join(Kernels.NAMES)

KernelsOpt = Annotated[Optional[str], typer.Option("--kernels", help=f"Installed kernels, comma-separated, from {KERNEL_NAMES} (or none). Default with --device/--capability: all that vLLM's wheel ships; on a live GPU: probed.", rich_help_panel=_IN)]
_ENG = "Installed engines"
VllmPythonOpt = Annotated[Optional[str], typer.Option("--vllm-python", metavar="PATH", help=f"The Python of the environment that runs vLLM (default: this one). Its vLLM version is read from package metadata; when it is not {VLLM_VERSION}, the output says so. With --engine vllm-installed, the vLLM whose own selection code runs.", rich_help_panel=_ENG)]
SglangPythonOpt = Annotated[Optional[str], typer.Option("--sglang-python", metavar="PATH", help=f"The Python of the environment that runs SGLang (default: this one); warns when its SGLang is not {SGLANG_VERSION}. With --engine sglang-installed, the SGLang whose own resolution code runs.", rich_help_panel=_ENG)]


def attach_warnings(report: object, warnings: tuple) -> object:
    """``report`` with its engine warnings (a NamedTuple or a frozen dataclass)."""
    if not warnings:
        return report
    if hasattr(report, "_replace"):
        return report._replace(warnings=warnings)  # type: ignore[attr-defined]
    import dataclasses

    return dataclasses.replace(report, warnings=warnings)  # type: ignore[type-var]


FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output format.")]

# --engine sglang|both: SGLang's server flags, under SGLang's names.
_SGL = "SGLang server flags (--engine sglang|both)"
EngineOpt = Annotated[Engine, typer.Option("--engine", help=f"Which engine's selection: vllm ({VLLM_VERSION}, attn-select's mirror), sglang ({SGLANG_VERSION}), both side by side, vllm-installed: the installed vLLM's own selection code (this Python's, or --vllm-python's), run in a subprocess, with every difference from the {VLLM_VERSION} mirror; sglang-installed: the same for the installed SGLang's resolution (--sglang-python) against the {SGLANG_VERSION} mirror.")]
EngineTimeoutOpt = Annotated[float, typer.Option("--engine-timeout", click_type=seconds(1), help="Seconds the installed engine may take to import its selection code, and then for each deployment (--engine vllm-installed or sglang-installed, check --vllm-python).", rich_help_panel=_ENG)]
# vLLM's and SGLang's flag of the same name: which engine reads it is
# selector.vllm_names.route_attention_backend's rule (docs/sglang.md).
AttentionBackendOpt = Annotated[Optional[str], typer.Option("--attention-backend", help="--engine vllm or vllm-installed: vLLM --attention-backend (FLASH_ATTN, FLASHINFER, ...; --backend is its alias). --engine sglang: SGLang's (fa3, fa4, flashinfer, triton, trtllm_mha, ...). --engine both: an UPPER-case name is vLLM's, a lower-case one SGLang's.")]
AttentionConfigOpt = Annotated[Optional[str], typer.Option("--attention-config", "-ac", help="vLLM --attention-config JSON, vLLM's AttentionConfig field names: backend, flash_attn_version, use_trtllm_attention, use_non_causal.", rich_help_panel=WHAT_IF_PANEL)]
TrustRemoteCodeOpt = Annotated[bool, typer.Option("--trust-remote-code", help=f"vLLM's --trust-remote-code: read a config whose config class or model class is the checkpoint's own code (auto_map), which vLLM {VLLM_VERSION} refuses without it. attn-select runs no code from the model folder either way.", rich_help_panel=_IN)]
RevisionOpt = Annotated[Optional[str], typer.Option("--revision", help="With a Hugging Face id: the cached snapshot of this branch, tag or commit (default main).", rich_help_panel=_IN)]
PrefillBackendOpt = Annotated[Optional[str], typer.Option("--prefill-attention-backend", help="SGLang --prefill-attention-backend.", rich_help_panel=_SGL)]
DecodeBackendOpt = Annotated[Optional[str], typer.Option("--decode-attention-backend", help="SGLang --decode-attention-backend.", rich_help_panel=_SGL)]
PageSizeOpt = Annotated[Optional[int], typer.Option("--page-size", help="SGLang --page-size.", rich_help_panel=_SGL)]
SpecAlgoOpt = Annotated[Optional[str], typer.Option("--speculative-algorithm", help="SGLang --speculative-algorithm: EAGLE, EAGLE3, NEXTN, STANDALONE, NGRAM.", rich_help_panel=_SGL)]
SpecTopkOpt = Annotated[Optional[int], typer.Option("--speculative-eagle-topk", help="SGLang --speculative-eagle-topk.", rich_help_panel=_SGL)]
SpecStepsOpt = Annotated[Optional[int], typer.Option("--speculative-num-steps", help="SGLang --speculative-num-steps.", rich_help_panel=_SGL)]
SpecDraftOpt = Annotated[Optional[int], typer.Option("--speculative-num-draft-tokens", help="SGLang --speculative-num-draft-tokens.", rich_help_panel=_SGL)]
DeterministicOpt = Annotated[bool, typer.Option("--enable-deterministic-inference", help="SGLang --enable-deterministic-inference.", rich_help_panel=_SGL)]
CudaVersionOpt = Annotated[Optional[str], typer.Option("--cuda-version", help="CUDA version SGLang's torch was built with (its Hopper and Blackwell rules read it). Default: the device profile's, else 12.9.", rich_help_panel=_SGL)]


def versioned(command: Callable[..., None]) -> Callable[..., None]:
    """Fill {vllm} and {sglang} in a command's docstring (its --help) with
    the engine versions."""
    command.__doc__ = (command.__doc__ or "").format(vllm=VLLM_VERSION, sglang=SGLANG_VERSION)
    return command


_FIELDS = {f.name: f for f in FIELDS}


def _option_text(name: str, own_panel: bool = True, taken: frozenset[str] = frozenset()) -> tuple[list[str], dict[str, Any]]:
    """The flag declarations and keyword arguments of the ``Overrides``
    field ``name``'s option: a switch also has the --no- form; vLLM's
    spellings of the flag are aliases, except those in ``taken`` (flags the
    command declares itself, e.g. explain's --attention-backend, which is
    SGLang's too)."""
    field = _FIELDS[name]
    w = field.what_if
    decl = f"{field.flag}/--no-{field.flag[2:]}" if field.switch else field.flag
    kwargs: dict[str, Any] = {"help": w.help, "min": w.min, "rich_help_panel": w.panel if own_panel else None}
    if w.parse is not None:
        kwargs["parser"] = _keeping_the_reason(w.parse)
    return [decl, *(a for a in field.aliases if a not in taken)], kwargs


def _keeping_the_reason(parse: Callable[[str], object]) -> Callable[[str], object]:
    """``parse`` for typer's ``parser=``: click reports a ValueError from it
    as the bare value ("invalid value for '--max-model-len': 1_000"), so its
    reason (what to write instead) goes out as click's BadParameter."""

    def parser(text: str) -> object:
        try:
            return parse(text)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None

    parser.__name__ = getattr(parse, "__name__", "parser")
    return parser


def what_if_option(name: str, own_panel: bool = True, taken: frozenset[str] = frozenset()) -> Any:
    """The option of the ``Overrides`` field ``name``, for ``Annotated``;
    with ``own_panel`` False it is listed among the command's plain options."""
    decls, kwargs = _option_text(name, own_panel, taken)
    return typer.Option(*decls, **kwargs)


def _declared_flags(params: list[inspect.Parameter]) -> frozenset[str]:
    """The flags a command's own options declare (in their default or in
    ``Annotated`` metadata)."""
    out: set[str] = set()
    for p in params:
        infos = [p.default, *getattr(p.annotation, "__metadata__", ())]
        for info in infos:
            decls = list(getattr(info, "param_decls", None) or ())
            # typer.Option("--flag", ...) in Annotated: the flag arrives as the default
            first = getattr(info, "default", None)
            if isinstance(first, str) and first.startswith("-"):
                decls.append(first)
            for decl in decls:
                out.update(d for d in decl.split("/") if d.startswith("-"))
    return frozenset(out)


def _help_order(fields: tuple[Field, ...]) -> list[Field]:
    # Bare switches (no help text: the raw selector fields) are listed after
    # the options that explain themselves, in one block.
    return sorted(fields, key=lambda f: f.what_if.help is None)


def what_if_options(command: Callable[..., None]) -> Callable[..., None]:
    """``command`` with one option per ``Overrides`` field in place of its
    ``ov: Overrides`` parameter.

    typer builds a command's options from ``inspect.signature``; the wrapper
    returned carries a ``__signature__`` where ``ov`` is replaced by the
    fields, and hands ``command`` their values as one ``Overrides``.
    """
    params = list(inspect.signature(command, eval_str=True).parameters.values())
    names = [p.name for p in params]
    at = names.index("ov")
    clash = set(names) & set(Overrides._fields)
    if clash:
        raise TypeError(f"{command.__name__} has parameters named like Overrides fields: {sorted(clash)}")
    generated = []
    taken = _declared_flags(params)
    for f in _help_order(FIELDS):
        decls, kwargs = _option_text(f.name, taken=taken)
        option = typer.Option(f.default, *decls, **kwargs)
        generated.append(inspect.Parameter(f.name, inspect.Parameter.POSITIONAL_OR_KEYWORD,
                                           default=option, annotation=f.type))

    def with_overrides(**values: Any) -> None:
        ov = Overrides(**{name: values.pop(name) for name in Overrides._fields})
        command(ov=ov, **values)

    for attr in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(with_overrides, attr, getattr(command, attr))
    signature = inspect.Signature(params[:at] + generated + params[at + 1:], return_annotation=None)
    setattr(with_overrides, "__signature__", signature)
    return with_overrides
