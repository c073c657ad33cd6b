"""A pasted ``vllm serve`` command line -> what attn-select reads from it.

``attn-select explain -- vllm serve MODEL --flag ...`` (or
``python -m vllm.entrypoints.openai.api_server --model MODEL ...``) takes the
line as vLLM 0.33.0's parser would: its option table (``vllm_serve_flags``,
generated from vLLM's own parser), FlexibleArgumentParser's rewrites
(``--max_model_len`` is ``--max-model-len``; ``--attention-config.backend X``
is a key of ``--attention-config``; ``-O3``) and argparse's rules (``--x=v``,
unique prefixes, how many values each option takes). An option vLLM does not
have is an error, as it is for vLLM.

The options that feed the selection become ``Overrides`` fields, through the
``vllm_flags`` and ``attention_config`` names each field declares; a few set
how the model is read (``--revision``, ``--download-dir``,
``--disable-sliding-window``, ``--language-model-only``,
``--trust-remote-code``). Every other option
is named in a note: ignored, or, for the few that can change vLLM's
selection in ways attn-select does not model, said to be so.
"""

from __future__ import annotations

import functools
import re
import typing
from typing import Any, NamedTuple

from attn_select.selector.engines import VLLM_VERSION
from attn_select.selector.errors import UserError
from attn_select.selector.overrides import FIELDS, Overrides
from attn_select.selector.vllm_names import dtype_error, human_readable_int, parse_max_model_len
from attn_select.selector.vllm_serve_flags import SERVE_BOUNDS, SERVE_CHOICES, SERVE_OPTIONS

WHERE = "the vllm serve line"
# ModelConfig.model's default: what vLLM serves when the line names no model
DEFAULT_MODEL = "Qwen/Qwen3-0.6B"
# python -m MODULE forms that run the same parser
_SERVE_MODULES = ("vllm.entrypoints.openai.api_server", "vllm.entrypoints.launchers.api_server.entry")
_CLI_MODULE = "vllm.entrypoints.cli.main"
_ECHO = 60
_OWN_OPTIONS_FIRST = "; attn-select's own options (--device, --engine, --format, ...) go before --"

# Options whose value vLLM's selection (or the config it builds first) can
# depend on, in ways attn-select does not read from a line: named in a note
# of their own, not as plainly ignored. By the option's first spelling.
NOT_MODELLED = {
    "--hf-overrides": "rewrites the model config",
    "--hf-config-path": "another config.json",
    "--config-format": "how the config is read",
    "--load-format": "mistral: params.json",
    "--code-revision": "remote model code",
    "--model-impl": "another model implementation",
    "--runner": "pooling runner",
    "--convert": "pooling conversion",
    "--quantization-config": "quantization config",
    "--allow-deprecated-quantization": "deprecated methods pass",
    "--kv-cache-dtype-skip-layers": "layers that keep kv auto",
    "--speculative-config": "use_adaptive_verification, drafter layers",
    "--spec-method": "speculative decoding",
    "--spec-model": "speculative decoding",
    "--spec-tokens": "speculative decoding",
    "--kv-transfer-config": "use_kv_connector; give --use-kv-connector",
    "--limit-mm-per-prompt": "all 0 clears use_mm_prefix",
    "--mm-encoder-attn-backend": "the encoder's own attention",
    "--additional-config": "platform plugins",
}


class _Option(NamedTuple):
    name: str  # its first spelling, e.g. --tensor-parallel-size
    arity: str  # argparse nargs: "0", "1", "?", "+"
    off: frozenset[str]  # spellings of an on/off option that turn it off
    kind: str = ""  # "int" / "float" / "hint" (+ "?"): how argparse converts each value (vllm_serve_flags)


@functools.cache
def _table() -> dict[str, _Option]:
    """Every spelling -> its option (built on first use: explain imports this
    module on every run, and reads a line rarely)."""
    out: dict[str, _Option] = {}
    for line in SERVE_OPTIONS.strip().splitlines():
        head, *spellings = line.split()
        arity, _, kind = head.partition(":")
        names = [s.lstrip("!") for s in spellings]
        opt = _Option(names[0], arity, frozenset(s[1:] for s in spellings if s.startswith("!")), kind)
        for n in names:
            out[n] = opt
    return out


_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


class ServeLine(NamedTuple):
    """What attn-select reads from a pasted vllm serve line."""

    model: str
    values: dict[str, Any]  # Overrides fields
    given_as: dict[str, str]  # Overrides field -> the vLLM option that set it
    load: dict[str, Any]  # load_model options: revision, cache_dir, disable_sliding_window, mm_inputs,
    # trust_remote_code
    notes: tuple[str, ...]


def command_tokens(model: str | None, rest: list[str] | None) -> list[str] | None:
    """explain's MODEL and the arguments after it -> the pasted command line's
    words, when they are one; None for a plain MODEL. Extra arguments after a
    MODEL that starts no vLLM command are an error."""
    rest = list(rest or ())
    if model is None:
        return None
    words = [model, *rest]
    if not rest and any(ch.isspace() for ch in model.strip()):
        import shlex

        try:
            # a multi-line paste keeps its shell line continuations; sh removes
            # backslash-newline before splitting, shlex would make it a "\n" word
            words = shlex.split(re.sub(r"\\\r?\n", "", model))
        except ValueError as exc:
            # a folder name with a space and a quote ("my 'model") is no command line:
            # only a line that starts a vLLM command is one that cannot be split
            if _command_start(model.split()) is None:
                return None
            raise UserError(f"cannot split the pasted command line: {exc}") from None
    start = _command_start(words)
    if start is None:
        if rest:
            raise UserError(f"unexpected arguments after MODEL: {' '.join(rest)[:_ECHO]}; to paste a command "
                            "line write: attn-select explain [OPTIONS] -- vllm serve MODEL --flag ...")
        return None
    return words


def _assignments(words: list[str]) -> int:
    """How many leading words are shell VAR=value assignments."""
    i = 0
    while i < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[i], re.S):
        i += 1
    return i


def _command_start(words: list[str]) -> int | None:
    """Index of the first vLLM argument after the command (and any leading
    VAR=value assignments), or None when ``words`` is no vllm serve line."""
    i = _assignments(words)
    head = words[i:]
    prog = head[0].rsplit("/", 1)[-1] if head else ""
    if prog == "vllm" and head[1:2] == ["serve"]:
        return i + 2
    if re.fullmatch(r"python[0-9.]*", prog) and head[1:2] == ["-m"]:
        if head[2:3] and head[2] in _SERVE_MODULES:
            return i + 3
        if head[2:4] == [_CLI_MODULE, "serve"]:
            return i + 4
    return None


def _is_serve(words: list[str], start: int) -> bool:
    return words[start - 1] == "serve"


def _flexible(args: list[str]) -> list[str]:
    """FlexibleArgumentParser.parse_args' rewrites before argparse runs:
    underscores in option names, -O<level>, dotted JSON keys."""
    out: list[str] = []
    for i, arg in enumerate(args):
        if arg.startswith("--"):
            key, eq, value = arg.partition("=")
            head, dot, tail = key[2:].partition(".")
            out.append("--" + head.replace("_", "-") + dot + tail + eq + value)
        elif arg.startswith("-O") and arg != "-O":
            out += ["--optimization-level", arg[3:] if arg[2:3] == "=" else arg[2:]]
        elif arg == "-O" and i + 1 < len(args) and args[i + 1] in {"0", "1", "2", "3"}:
            out.append("--optimization-level")
        else:
            out.append(arg)
    return _dotted(out)


def _dotted(args: list[str]) -> list[str]:
    """--json-arg.key value / --json-arg.key=value / --json-arg.key+ a,b ->
    --json-arg '{"key": value}', merged per option, as vLLM does."""
    import json

    dicts: dict[str, dict[str, Any]] = {}
    out: list[str] = []
    skip = False
    for i, arg in enumerate(args):
        if skip:
            skip = False
            continue
        if not (arg.startswith("-") and "." in arg) or _NEGATIVE_NUMBER.match(arg):
            out.append(arg)
            continue
        key, eq, value = arg.partition("=")
        if eq and "." not in key:
            out.append(arg)  # the dot was in the value
            continue
        if not eq:
            if i + 1 >= len(args):
                raise UserError(f"{WHERE}: argument {key[:_ECHO]}: expected one argument")
            value, skip = args[i + 1], True
        if key.endswith("+"):
            key, value = key[:-1], json.dumps(value.split(","))
        base, *path = key.split(".")
        try:
            parsed: Any = json.loads(value)
        except ValueError:
            try:
                parsed = parse_max_model_len(value) if re.fullmatch(r"\d+(\.\d+)?[kKmMgGtT]", value) else value
            except ValueError:
                parsed = value
        node = dicts.setdefault(base, {})
        for p in path[:-1]:
            inner = node.get(p)
            if not isinstance(inner, dict):
                inner = node[p] = {}
            node = inner
        leaf = path[-1]
        if isinstance(parsed, list) and isinstance(node.get(leaf), list):
            node[leaf] += parsed  # --key+ values add to the list
        else:
            node[leaf] = parsed
    for base, value in dicts.items():
        out += [base, json.dumps(value)]
    return out


def _lookup(name: str) -> _Option:
    """An option by its spelling or, as argparse allows, a unique prefix."""
    if name in _table():
        return _table()[name]
    dashes = "--" if name.startswith("--") else "-"
    spellings = sorted(s for s in _table() if s.startswith(name) and (s.startswith("--") == (dashes == "--")))
    options = {_table()[s].name for s in spellings}
    if len(options) == 1:
        return _table()[spellings[0]]
    if spellings:
        shown = ", ".join(spellings[:6]) + (", ..." if len(spellings) > 6 else "")
        raise UserError(f"{WHERE}: ambiguous option: {name[:_ECHO]} could match {shown}{_OWN_OPTIONS_FIRST}")
    raise UserError(f"{WHERE}: unrecognized arguments: {name[:_ECHO]} (vLLM {VLLM_VERSION}'s vllm serve has no such "
                    f"option{_OWN_OPTIONS_FIRST})")


def _is_option(arg: str) -> bool:
    return arg.startswith("-") and arg != "-" and not _NEGATIVE_NUMBER.match(arg)


def _parse(args: list[str]) -> tuple[dict[str, tuple[str, Any]], list[str]]:
    """argparse over the table: {first spelling: (spelling used, value)},
    and the positionals. The last of a repeated option wins, as in argparse."""
    seen: dict[str, tuple[str, Any]] = {}
    positionals: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            positionals += args[i:]
            break
        if not _is_option(arg):
            positionals.append(arg)
            continue
        name, eq, explicit = arg.partition("=")
        if arg in _table():
            name, eq, explicit = arg, "", ""
        opt = _lookup(name)
        spelled = name if name in _table() else opt.name
        if opt.arity == "0":
            if eq:
                raise UserError(f"{WHERE}: argument {opt.name}: ignored explicit argument {explicit[:_ECHO]!r}")
            seen[opt.name] = (spelled, spelled not in opt.off)
            continue
        if eq:
            _check_type(opt, [explicit])
            seen[opt.name] = (spelled, explicit if opt.arity in ("1", "?") else [explicit])
            continue
        values: list[str] = []
        while i < len(args) and not _is_option(args[i]) and (opt.arity in ("+", "*") or not values):
            values.append(args[i])
            i += 1
        if not values and opt.arity in ("1", "+"):
            what = "expected one argument" if opt.arity == "1" else "expected at least one argument"
            raise UserError(f"{WHERE}: argument {opt.name}: {what}")
        _check_type(opt, values)
        seen[opt.name] = (spelled, values if opt.arity in ("+", "*") else (values[0] if values else None))
    return seen, positionals


def _check_type(opt: _Option, values: list[str]) -> None:
    """argparse's type=int / type=float, and vLLM's human_readable_int and
    optional_type: a value that does not convert is vLLM's usage error, for an
    option attn-select only notes too (--seed x, --gpu-memory-utilization abc,
    --max-num-batched-tokens 1.5K)."""
    for value in values:
        _converted(opt, value)


def _converted(opt: _Option, value: str) -> int | float | None:
    """The number argparse makes of one value of ``opt`` (None: no number, or
    an option whose values are not numbers)."""
    kind = opt.kind.rstrip("?")
    if not kind or (opt.kind.endswith("?") and value in ("", "None")):
        return None
    try:
        if kind == "hint":
            return human_readable_int(value)
        if len(value) > 4300:  # int()'s own limit; float() of such a string is inf, not refused
            raise ValueError
        return int(value) if kind == "int" else float(value)
    except ValueError:
        shown = "int" if kind == "hint" else kind
        raise UserError(f"{WHERE}: argument {opt.name}: invalid {shown} value: {value[:_ECHO]!r}") from None


@functools.cache
def _bounds() -> dict[str, list[tuple[str, tuple[tuple[str, float], ...]]]]:
    """option (first spelling) -> [(vLLM's Class.field, its bounds as (op, number))], the
    field the option is named for first (a value can also break a field vLLM derives from it)."""
    out: dict[str, list[tuple[str, tuple[tuple[str, float], ...]]]] = {}
    for line in SERVE_BOUNDS.strip().splitlines():
        option, where, *bounds = line.split()
        out.setdefault(option, []).append(
            (where, tuple((op, float(n)) for op, _, n in (b.partition(":") for b in bounds))))
    return out


@functools.cache
def _choices() -> dict[str, tuple[str, frozenset[str]]]:
    """option (first spelling) -> (how a value is read first, the values vLLM's parser takes)."""
    out = {}
    for line in SERVE_CHOICES.strip().splitlines():
        option, read, *values = line.split()
        out[option] = (read, frozenset(values))
    return out


def _check_choices(opt: _Option, spelled: str, value: Any) -> None:
    """argparse's choices: a value outside vLLM's list is its usage error
    (vllm serve exits 2), for an option attn-select only notes too."""
    if opt.name not in _choices():
        return
    read, allowed = _choices()[opt.name]
    for one in value if isinstance(value, list) else [value]:
        if not isinstance(one, str) or (read == "?" and one in ("", "None")):
            continue
        if read == ":int":
            number = _converted(opt, one)
            seen = one if number is None else str(number)
        else:
            seen = one.lower().replace("-", "_") if read == "lower_" else one
        if seen not in allowed:
            shown = ", ".join(sorted(allowed)[:12]) + (", ..." if len(allowed) > 12 else "")
            raise UserError(f"{WHERE}: argument {spelled}: invalid choice: {one[:_ECHO]!r} (choose from {shown})")


_HOLDS = {"gt": lambda v, n: v > n, "ge": lambda v, n: v >= n, "lt": lambda v, n: v < n, "le": lambda v, n: v <= n}
_SAID = {"gt": "greater than", "ge": "at least", "lt": "less than", "le": "at most"}


def _check_bounds(opt: _Option, spelled: str, value: Any) -> None:
    """A value past a bound of the config field it sets: vLLM builds its
    config from the line and refuses it (a pydantic ValidationError; vllm
    serve does not start), for an option attn-select only notes too."""
    if opt.name not in _bounds() or not isinstance(value, str):
        return
    number = _converted(opt, value)
    broken = [(where, bounds) for where, bounds in _bounds()[opt.name]
              if number is not None and not all(_HOLDS[op](number, n) for op, n in bounds)]
    if not broken:
        return
    where, bounds = broken[0]
    want = " and ".join(f"{_SAID[op]} {n:g}" for op, n in bounds)
    raise UserError(f"{WHERE}: argument {spelled}: {value[:_ECHO]!r} is refused by vLLM {VLLM_VERSION} ({where} must be "
                    f"{want}); give a value in that range")


def _int(option: str, text: Any) -> int:
    try:
        if isinstance(text, str) and len(text) <= 20 and text.strip().lstrip("-").isdigit():
            return int(text)
    except ValueError:
        pass
    raise UserError(f"{WHERE}: argument {option}: invalid int value: {str(text)[:_ECHO]!r}")


@functools.cache
def _field_by_option() -> dict[str, Any]:
    """vLLM option (first spelling) -> the Overrides field it sets: the
    field's vllm_flags, and its own flag where vLLM has the same one (--dtype)."""
    table = _table()
    out = {table[flag].name: f for f in FIELDS for flag in f.what_if.vllm_flags if flag in table}
    out.update({table[f.flag].name: f for f in FIELDS if f.flag in table})
    return out


# What a line can set besides the Overrides fields
_LOAD_OPTIONS = {"--revision": "revision", "--download-dir": "cache_dir",
                 "--disable-sliding-window": "disable_sliding_window", "--language-model-only": "mm_inputs",
                 "--trust-remote-code": "trust_remote_code"}


def parse_serve_line(words: list[str]) -> ServeLine:
    """The words of a vllm serve line (from ``command_tokens``) -> ServeLine."""
    start = _command_start(words)
    if start is None:
        raise UserError("not a vllm serve command line; paste it as: vllm serve MODEL --flag ...")
    env = words[:_assignments(words)]
    seen, positionals = _parse(_flexible(words[start:]))
    notes: list[str] = []
    serve = _is_serve(words, start)
    if "--config" in seen:
        raise UserError(f"{WHERE}: --config {str(seen['--config'][1])[:_ECHO]}: attn-select does not read "
                        "vLLM's YAML config files; paste their options into the line")
    if "--help" in seen:
        raise UserError(f"{WHERE}: --help: remove it (attn-select explains the line; `vllm serve --help` lists "
                        "vLLM's options)")
    model = seen.pop("--model", (None, None))[1]
    if positionals:
        if len(positionals) > 1:
            raise UserError(f"{WHERE}: unrecognized arguments: {' '.join(positionals[1:])[:_ECHO]}")
        if serve:
            model = positionals[0]  # vllm serve MODEL beats --model (vLLM moves --model to the front)
        else:
            notes.append(f"ignored: the positional {positionals[0][:_ECHO]!r} (python -m ...api_server reads --model)")
    if model is None:
        model = DEFAULT_MODEL
        notes.append(f"the line names no model: vLLM's default {DEFAULT_MODEL}")
    values: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    load: dict[str, Any] = {}
    ignored: list[str] = []
    not_modelled: list[str] = []
    attention_config: Any = None
    for option, (spelled, value) in seen.items():
        field = _field_by_option().get(option)
        if field is None:  # the Overrides fields check their own values
            _check_choices(_table()[option], spelled, value)
            _check_bounds(_table()[option], spelled, value)
        if field is not None:
            values[field.name] = _field_value(field.name, option, value)
            given_as[field.name] = spelled
        elif option == "--attention-config":
            attention_config = value
        elif option in _LOAD_OPTIONS:
            key = _LOAD_OPTIONS[option]
            load[key] = (not value) if key == "mm_inputs" else value
        elif option in NOT_MODELLED:
            not_modelled.append(f"{spelled} ({NOT_MODELLED[option]})")
        else:
            ignored.append(spelled)
    if attention_config is not None:
        from attn_select.selector.attention_config import with_attention_config

        ov = with_attention_config(Overrides(**values), attention_config, "--attention-config", given_as)
        values = {k: v for k, v in ov._asdict().items() if k in values or v != Overrides._field_defaults[k]}
        for k in values:
            given_as.setdefault(k, "--attention-config")
    if values.get("backend") is not None and values["backend"].strip().lower() in ("auto", "none", ""):
        values["backend"] = None  # vLLM: "auto" (and optional_type's "None") is automatic selection
    if env:
        notes.append("not read: the environment assignments " + ", ".join(e.split("=", 1)[0] for e in env))
    if not_modelled:
        notes.append("not modelled, may change vLLM's selection: " + ", ".join(not_modelled))
    if ignored:
        notes.append("ignored (attn-select's model of vLLM's selection does not read them): " + ", ".join(ignored))
    return ServeLine(model, {k: v for k, v in values.items() if v is not None}, given_as, load, tuple(notes))


def _field_value(name: str, option: str, value: Any) -> Any:
    if name == "dtype":
        bad = dtype_error(value)
        if bad:
            raise UserError(f"{WHERE}: argument {option}: {bad}")
        return value
    if name == "max_model_len":
        try:
            return parse_max_model_len(value)
        except ValueError as exc:
            raise UserError(f"{WHERE}: argument {option}: {exc}") from None
    field = next(f for f in FIELDS if f.name == name)
    if field.type is int or int in typing.get_args(field.type):
        return _int(option, value)
    return value


def with_serve_line(ov: Overrides, line: ServeLine, before: str = "before --") -> Overrides:
    """explain's own what-if flags plus the line's; a value given both ways
    is an error naming both."""
    defaults = Overrides._field_defaults
    for name in line.values:
        if getattr(ov, name) != defaults[name]:
            flag = next(f.flag for f in FIELDS if f.name == name)
            raise UserError(f"{flag} is given {before} and as {line.given_as.get(name, name)} in the vllm "
                            "serve line; give it once")
    return ov._replace(**line.values)
