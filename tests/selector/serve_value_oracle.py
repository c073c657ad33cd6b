"""Differential oracle for the values of a pasted vllm serve line: does vLLM
0.33.0 start from ``vllm serve MODEL OPTION=VALUE``, up to its engine config?
Never imports attn_select.

    /tmp/vllm-venv/bin/python tests/selector/serve_value_oracle.py < cases.json > results.json

Input: a JSON list of ``[option, value]``. Output, one per case:
``{"refused": "parse" | "bounds" | "other" | null, "detail": str}``:
"parse" where vLLM's parser refuses the value (argparse's usage error),
"bounds" where ``EngineArgs.create_engine_config()`` raises a pydantic
ValidationError for a field's bound, "other" for any other failure (not a value check), null
where the config builds. The model is a plain Llama config.json; the
platform and libcuda stand-in are model_oracle.py's (sm_90).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tools"))
_BOUND_ERRORS = {"greater_than", "greater_than_equal", "less_than", "less_than_equal", "finite_number"}


def main() -> None:
    results_out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # vLLM logs to stdout
    sys.stdout = sys.stderr
    from model_oracle import _setup

    _setup()
    from vllm.engine.arg_utils import EngineArgs
    from vllm.entrypoints.common.cli_args import make_arg_parser
    from vllm.utils.argparse_utils import FlexibleArgumentParser
    from vllm_serve_flags import _LLAMA

    parser = make_arg_parser(FlexibleArgumentParser(prog="vllm serve"))
    parser.exit_on_error = False
    results = []
    with tempfile.TemporaryDirectory(prefix="serve-value-oracle-") as folder:
        (Path(folder) / "config.json").write_text(json.dumps(_LLAMA))
        for option, value in json.load(sys.stdin):
            out: dict = {"refused": None, "detail": ""}
            results.append(out)
            try:
                args = parser.parse_args(["--model", folder, "--skip-tokenizer-init", "--load-format", "dummy",
                                          f"{option}={value}"])
            except (SystemExit, Exception) as exc:  # noqa: BLE001 - argparse's refusal is the answer
                out.update(refused="parse", detail=f"{type(exc).__name__}: {exc}"[:300])
                continue
            try:
                EngineArgs.from_cli_args(args).create_engine_config()
            except Exception as exc:  # noqa: BLE001 - vLLM's refusal is the answer
                # a bound of a field (Field(gt=..., le=...)); a model validator's ValueError is "other"
                types = {e.get("type") for e in exc.errors()} if hasattr(exc, "errors") else set()
                kind = "bounds" if types & _BOUND_ERRORS else "other"
                out.update(refused=kind, detail=f"{type(exc).__name__}: {exc}"[:300])
    json.dump(results, results_out)
    results_out.flush()


if __name__ == "__main__":
    main()
