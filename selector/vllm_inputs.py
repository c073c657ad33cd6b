"""explain's inputs given in vLLM's terms, put together once: its
--attention-backend (vLLM's or SGLang's, by engine), --attention-config, and
a pasted vllm serve line, merged into the what-ifs with every value given
once. The command-line layer only hands its raw values in."""

from __future__ import annotations

from typing import NamedTuple

from attn_select.selector.errors import UserError
from attn_select.selector.overrides import Overrides
from attn_select.selector.vllm_names import may_be_command_line, route_attention_backend


class VllmInputs(NamedTuple):
    model: str | None
    overrides: Overrides
    sglang_backend: str | None  # --attention-backend when it is SGLang's
    load: dict[str, object]  # load_model options (revision, cache_dir, ...)
    notes: tuple[str, ...]  # about the inputs: the serve line's other flags


def read_vllm_inputs(
    model: str | None,
    rest: list[str] | None,
    ov: Overrides,
    *,
    engine: str,
    attention_backend: str | None = None,
    attention_config: str | None = None,
    revision: str | None = None,
    trust_remote_code: bool = False,
) -> VllmInputs:
    """MODEL (and the words after it), the generated what-ifs and the flags
    vLLM and attn-select share -> what explain runs."""
    vllm_backend, sglang_backend = route_attention_backend(attention_backend, engine)
    given_as: dict[str, str] = {}
    if vllm_backend is not None:
        if ov.backend is not None:
            raise UserError("--attention-backend and --backend are one flag (--backend is attn-select's alias "
                            "of vLLM's --attention-backend); give it once")
        ov = ov._replace(backend=vllm_backend)
        given_as["backend"] = "--attention-backend"
    if attention_config is not None:
        from attn_select.selector.attention_config import with_attention_config

        ov = with_attention_config(ov, attention_config, "--attention-config", given_as)
    load: dict[str, object] = {"revision": revision}
    if trust_remote_code:
        load["trust_remote_code"] = True
    if not may_be_command_line(model, rest):
        return VllmInputs(model, ov, sglang_backend, load, ())
    from attn_select.selector.vllm_serve import command_tokens, parse_serve_line, with_serve_line

    words = command_tokens(model, rest)
    if words is None:
        return VllmInputs(model, ov, sglang_backend, load, ())
    if engine == "sglang":
        raise UserError("a vllm serve line is vLLM's; use --engine vllm, or --engine both to see SGLang beside it")
    line = parse_serve_line(words)
    if revision is not None and line.load.get("revision") not in (None, revision):
        raise UserError("--revision is given before -- and in the vllm serve line; give it once")
    if trust_remote_code and line.load.get("trust_remote_code") is False:
        raise UserError("--trust-remote-code is given before -- and the vllm serve line turns it off "
                        "(--no-trust-remote-code); give it once")
    load.update({k: v for k, v in line.load.items() if v is not None})
    return VllmInputs(line.model, with_serve_line(ov, line), sglang_backend, load, line.notes)
