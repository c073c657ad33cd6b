"""Differential oracle: SGLang 0.5.23's OWN server-argument resolution, run on a
CPU-only machine, JSON cases in, JSON results out.

Run it with the python of a venv that has ``sglang==0.5.23`` installed (never
with attn-select's python; this file never imports attn_select):

    /tmp/sglang-venv/bin/python tests/sglang_oracle/oracle.py < cases.json > results.json

Input: a JSON list of cases::

    {"config": {a config.json mapping},
     "capability": [9, 0], "cuda_version": "12.9", "has_flashinfer": true,
     "gpu_memory_mib": 81920 | null,
     "flags": {ServerArgs field: value}}   # attention_backend, page_size, ...

Output: a JSON list, one result per case, in order::

    {"final": {field: resolution_result(server_args, field) for each followed field},
     "changes": [[source, field, old, new], ...],   # declarations that changed a followed field
     "error": {"kind": exception class name, "message": str(exc)} | null,
     "oracle_error": null | why the case could not be put to SGLang, ...}

The resolution itself, and how each input reaches SGLang, is attn-select's
own ``backends/run/probes/sglang_resolution.py`` (``Resolver``), the code
``explain --engine sglang-installed`` runs: one copy for both. This file adds
only the batch protocol and the libcuda.so.1 stand-in (always: the oracle
runs on a CPU machine).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

PROBES = Path(__file__).resolve().parents[2] / "backends" / "run" / "probes"
sys.path.insert(0, str(PROBES))
from sglang_resolution import Resolver  # noqa: E402  (stdlib + SGLang only)


def main() -> int:
    from answer_lines import real_stdout  # the probes' stdout handling, stdlib only
    from libcuda_standin import build  # the stand-in's builder, stdlib only

    cases = json.load(sys.stdin)
    out = real_stdout()  # everything SGLang, torch or C code prints goes to stderr

    oracle = Resolver(libcuda=str(build()), platform=True)
    results = []
    for case in cases:
        try:
            results.append(oracle.run_case(case))
        except BaseException as e:  # noqa: BLE001 - one bad case must not lose the rest
            results.append({"final": None, "changes": None, "error": None,
                            "oracle_error": f"crash: {type(e).__name__}: {e}"})
    json.dump(results, out)
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
