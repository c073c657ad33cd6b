"""Write selector/vllm_serve_flags.py from vLLM's own `vllm serve` parser.

    ATTN_SELECT_VLLM_PYTHON=/tmp/vllm-venv/bin/python   (default)
    $ATTN_SELECT_VLLM_PYTHON tests/tools/vllm_serve_flags.py > selector/vllm_serve_flags.py

Runs in a python that has vLLM 0.33.0 (a CPU-only machine is enough: the
libcuda stand-in of tests/vllm_oracle/ lets vLLM's CUDA platform import).
tests/selector/test_vllm_serve.py runs it again and compares, when such a
python is there. Each line of the table is one option of the parser: how many
values it takes (argparse's nargs: 0, 1, ?, +) and its option strings.

The second table, the value bounds, comes from the numeric constraints
(pydantic ``Field(ge=, gt=, le=, lt=)``) on vLLM's config classes: those of
the field an option's dest names, and those vLLM's own ValidationError names
when a numeric option is given -2, -1, 0 or a huge value (--spec-tokens sets
SpeculativeConfig.num_speculative_tokens). Each is kept only where vLLM was
seen to enforce it for a plain model: a ``vllm serve``-parsed line with a
value just past the bound fails in ``EngineArgs.create_engine_config()`` with
that bound's error, and the value at the bound raises none for that field.
Bounds on configs a plain line never builds (LoRA without --enable-lora,
multimodal on a text model) are left out, since vLLM does not check them
there. The third table is argparse's choices. Probing takes a minute or two.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HEADER = '''"""The options of vLLM 0.33.0's `vllm serve` (and of
`python -m vllm.entrypoints.openai.api_server`, the same parser), as data:
one line per option, how many values it takes (argparse's nargs: 0, 1, ?, +),
":int" or ":float" when argparse converts each value with int() or float(),
":hint" for vLLM's human_readable_int (2k, 2K, 2048), each with "?" where
vLLM's optional_type also takes "" or "None" for no value,
and every option string the parser accepts for it (help hides some); "!"
marks the strings of an on/off option that turn it off. Generated from
vLLM's parser by tests/tools/vllm_serve_flags.py; do not edit by hand.
"""

SERVE_OPTIONS = """
'''


def arity(action: argparse.Action) -> str:
    if action.nargs == 0:
        return "0"
    if action.nargs is None:
        return "1"
    if action.nargs in ("?", "+", "*"):
        return str(action.nargs)
    return "1" if action.nargs == 1 else str(action.nargs)


def value_type(action: argparse.Action) -> str:
    """How argparse converts each value, where a value can be refused:
    ":int" / ":float" (int(), float(): argparse refuses "--seed x" with
    "invalid int value"), ":hint" (vLLM's human_readable_int: 2k, 2K, 2048),
    and the same with "?" where vLLM's optional_type also takes "" and
    "None" for no value; else ""."""
    if action.nargs == 0:
        return ""
    from vllm.utils.argparse_utils import human_readable_int

    names = {int: "int", float: "float", human_readable_int: "hint"}
    if action.type in names:
        return ":" + names[action.type]
    t = action.type
    if getattr(t, "__qualname__", "") == "optional_type.<locals>._optional_type" and t.__closure__:
        (inner,) = [c.cell_contents for c in t.__closure__]
        if inner in names:
            return f":{names[inner]}?"
    return ""


def _parser():
    # vLLM's CUDA platform on the libcuda stand-in, reporting an sm_90 device (the engine-config
    # oracle's): DeviceConfig's default asks it for its device type, and building a config (bounds)
    # for a capability; set before vLLM's modules bind it at import
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "selector"))
    from model_oracle import _setup

    _setup()
    from vllm.entrypoints.common.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    return make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))


def table(parser) -> list[str]:
    strings: dict[int, list[str]] = {}
    for option, action in parser._option_string_actions.items():
        strings.setdefault(id(action), []).append(option)
    rows = []
    for action in parser._actions:
        if not action.option_strings:
            continue
        # the visible spellings first, in the parser's order, then the hidden ones
        opts = list(action.option_strings)
        opts += sorted(o for o in strings[id(action)] if o not in opts)
        negative = set(getattr(action, "negative_option_strings", ()))
        if isinstance(action, argparse.BooleanOptionalAction) and not negative:
            negative = {o for o in opts if o.startswith("--no-")}
        if isinstance(action, argparse._StoreFalseAction):
            negative = set(opts)
        shown = [("!" + o) if o in negative else o for o in opts]
        rows.append(f"{arity(action)}{value_type(action)} {' '.join(shown)}")
    return sorted(rows, key=lambda r: r.split()[1].lstrip("-!"))


BOUNDS_HEADER = '''
# Value bounds vLLM 0.33.0 enforces when it builds its config from a plain
# `vllm serve MODEL --option VALUE` line: option, Class.field, then each bound
# as gt / ge / lt / le and the number (see the generator's docstring).
SERVE_BOUNDS = """
'''

# a plain Llama model folder, as the engine-config oracle writes one
_LLAMA = dict(architectures=["LlamaForCausalLM"], model_type="llama", hidden_size=4096, num_attention_heads=32,
              num_key_value_heads=8, head_dim=128, num_hidden_layers=32, intermediate_size=14336,
              vocab_size=128256, max_position_embeddings=131072, rms_norm_eps=1e-5, rope_theta=500000.0,
              torch_dtype="bfloat16")


def _bounded_fields() -> dict[str, list[tuple[str, str, str, float]]]:
    """field name -> [(class, field, op, number)] over vLLM's pydantic config classes."""
    import importlib
    import inspect
    import pkgutil

    import annotated_types as at
    import vllm.config

    out: dict[str, list[tuple[str, str, str, float]]] = {}
    seen = set()
    for info in pkgutil.iter_modules(vllm.config.__path__):
        module = importlib.import_module(f"vllm.config.{info.name}")
        for obj in vars(module).values():
            if not (inspect.isclass(obj) and obj.__module__.startswith("vllm") and
                    hasattr(obj, "__pydantic_fields__")) or obj in seen:
                continue
            seen.add(obj)
            for name, field in obj.__pydantic_fields__.items():
                for m in field.metadata:
                    for op, kind in (("gt", at.Gt), ("ge", at.Ge), ("lt", at.Lt), ("le", at.Le)):
                        if isinstance(m, kind):
                            out.setdefault(name, []).append((obj.__name__, name, op, getattr(m, op)))
    return out


def _past_and_at(op: str, number: float, is_float: bool) -> tuple[str, str]:
    """A value just past the bound, and one at (or, for a strict bound, just inside) it."""
    step = 0.5 if is_float else 1
    past = {"gt": number, "ge": number - step, "lt": number, "le": number + step}[op]
    at = {"gt": number + step, "ge": number, "lt": number - step, "le": number}[op]
    fmt = (lambda v: repr(float(v))) if is_float else (lambda v: str(int(v)))
    return fmt(past), fmt(at)


_BOUND_ERRORS = {"greater_than": "gt", "greater_than_equal": "ge", "less_than": "lt", "less_than_equal": "le"}


def bounds(parser) -> list[str]:
    import json
    import tempfile

    from vllm.engine.arg_utils import EngineArgs

    folder = tempfile.mkdtemp(prefix="serve-bounds-")
    (Path(folder) / "config.json").write_text(json.dumps(_LLAMA))

    def refusal(option: str, value: str) -> set[tuple[str, str, str, float]] | None:
        """The field bounds vLLM's ValidationError names for this line, as
        (class, field, op, number); empty for any other failure; None when the
        config builds."""
        try:
            args = parser.parse_args(["--model", folder, "--skip-tokenizer-init", "--load-format", "dummy",
                                      f"{option}={value}"])
        except SystemExit:  # the parser's own refusal (a choice, a type): no config built
            return set()
        try:
            EngineArgs.from_cli_args(args).create_engine_config()
        except Exception as exc:  # noqa: BLE001 - vLLM's refusal is the answer
            if not hasattr(exc, "errors"):
                return set()
            return {(exc.title, str(e["loc"][-1]), _BOUND_ERRORS[e["type"]], e["ctx"][_BOUND_ERRORS[e["type"]]])
                    for e in exc.errors() if e.get("type") in _BOUND_ERRORS}
        return None

    # candidates: the bounded fields an option's dest names, and every bound vLLM names when a
    # numeric option gets a value past the usual ones (an option may set a field of another name:
    # --spec-tokens sets SpeculativeConfig.num_speculative_tokens)
    fields = _bounded_fields()
    rows = []
    for action in parser._actions:
        kind = value_type(action)
        if not action.option_strings or action.nargs not in (None, 1) or not (kind or action.dest in fields):
            continue
        option, is_float = action.option_strings[0], kind.startswith(":float")
        found = {(c, f, op, n) for c, f, op, n in fields.get(action.dest, ())}
        if kind:
            for probe in (("-2", "-1", "0", "0.5", "1.5", "1e12") if is_float else ("-2", "-1", "0", str(1 << 40))):
                found |= refusal(option, probe) or set()
        kept: dict[str, list[str]] = {}
        for cls, name, op, number in sorted(found):
            past, at = _past_and_at(op, number, is_float)
            refused_past, refused_at = refusal(option, past), refusal(option, at)
            if refused_past and (cls, name, op, number) in refused_past and not any(
                    (c, f) == (cls, name) for c, f, _, _ in refused_at or ()):
                kept.setdefault(f"{cls}.{name}", []).append(f"{op}:{number!r}")
        # the field the option is named for first: a value past both bounds is reported by it
        own = sorted(kept.items(), key=lambda kv: kv[0].split(".")[1] != action.dest)
        rows += [f"{option} {where} {' '.join(b)}" for where, b in own]
    return sorted(rows, key=lambda r: r.split()[0].lstrip("-"))  # stable: an option's rows keep their order


CHOICES_HEADER = '''
# The values an option takes where vLLM's parser has a fixed list (argparse
# choices; any other value is its usage error): option, how a value is read
# before the check (-: as written; lower_: lowercased, "-" made "_"; :int:
# int(); ?: "" and "None" are no value), then the values.
SERVE_CHOICES = """
'''


def choices(parser) -> list[str]:
    rows = []
    for action in parser._actions:
        if not action.option_strings or action.choices is None or action.nargs == 0:
            continue
        t = action.type
        values = [c for c in action.choices if c is not None]
        if t is int:
            read = ":int"
        elif getattr(t, "__qualname__", "") == "optional_type.<locals>._optional_type":
            (inner,) = [c.cell_contents for c in t.__closure__]
            assert inner is str and None in action.choices, (action.option_strings, inner)
            read = "?"
        elif t in (None, str):
            read = "-"
        else:  # a converter of its own (--moe-backend's): what it makes of a mixed-case, dashed name
            assert t("Ab-C") == "ab_c", action.option_strings
            read = "lower_"
        assert all(str(v) and not any(ch.isspace() for ch in str(v)) for v in values), action.option_strings
        rows.append(f"{action.option_strings[0]} {read} {' '.join(map(str, values))}")
    return sorted(rows, key=lambda r: r.split()[0].lstrip("-"))


def main() -> None:
    import os

    result = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # vLLM logs to stdout while it builds configs
    sys.stdout = sys.stderr
    parser = _parser()
    result.write(HEADER + "\n".join(table(parser)) + '\n"""\n' + BOUNDS_HEADER + "\n".join(bounds(parser))
                 + '\n"""\n' + CHOICES_HEADER + "\n".join(choices(parser)) + '\n"""\n')
    result.flush()


if __name__ == "__main__":
    main()
