"""Write selector/vllm_serve_flags.py from vLLM's own `vllm serve` parser.

    ATTN_SELECT_VLLM_PYTHON=/tmp/vllm-venv/bin/python   (default)
    $ATTN_SELECT_VLLM_PYTHON tests/tools/vllm_serve_flags.py > selector/vllm_serve_flags.py

Runs in a python that has vLLM 0.33.0 (a CPU-only machine is enough: the
libcuda stand-in of tests/vllm_oracle/ lets vLLM's CUDA platform import).
tests/selector/test_vllm_serve.py runs it again and compares, when such a
python is there. Each line of the table is one option of the parser: how many
values it takes (argparse's nargs: 0, 1, ?, +) and its option strings.
"""

from __future__ import annotations

import argparse
import ctypes
import sys
from pathlib import Path

HEADER = '''"""The options of vLLM 0.33.0's `vllm serve` (and of
`python -m vllm.entrypoints.openai.api_server`, the same parser), as data:
one line per option, how many values it takes (argparse's nargs: 0, 1, ?, +),
":int" or ":float" when argparse converts each value with int() or float(),
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
    """":int" / ":float" for an option argparse converts with int() or
    float() (argparse refuses "--seed x" with "invalid int value"), else ""."""
    if action.nargs == 0:
        return ""
    return {int: ":int", float: ":float"}.get(action.type, "")


def table() -> list[str]:
    here = Path(__file__).resolve().parents[1] / "vllm_oracle"
    sys.path.insert(0, str(here))
    from build_libcuda_stub import build  # sibling helper, stdlib only

    ctypes.CDLL(str(build()), mode=ctypes.RTLD_GLOBAL)
    import vllm.platforms as platforms
    import vllm.platforms.cuda as cuda

    # DeviceConfig's default asks the platform for its device type
    platforms._current_platform = cuda.NonNvmlCudaPlatform()
    from vllm.entrypoints.common.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser

    parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
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


def main() -> None:
    sys.stdout.write(HEADER + "\n".join(table()) + '\n"""\n')


if __name__ == "__main__":
    main()
