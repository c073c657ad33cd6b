"""The answer protocol of the engine probes (``vllm_selection.py``,
``sglang_resolution.py``): the request as JSON on stdin, then one line per
answer on the real stdout as soon as it is known, so the caller
(``cli/installed_engine.py``) can bound the engine's import and each case
separately::

    PREFIX_READY {"<dist>_version", "stand_ins"}   once the engine is loaded
    PREFIX_CASE {...}                              per case, in order
    PREFIX_ERROR {"<dist>_version", "error", "trace"}  the engine's code raised while loading

Standard library only, and never attn_select: the probes run as files in
the engine's Python, which finds this module beside them (the script's
folder is ``sys.path[0]``).
"""

from __future__ import annotations

import json
import os
import sys
import traceback


def real_stdout():
    """The process's stdout for answers only: whatever the engine, torch or
    C code prints goes to stderr from here on."""
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return out


def dist_version(dist):
    import importlib.metadata as md

    try:
        return md.version(dist)
    except md.PackageNotFoundError:
        return None


def serve(prefix, dist, load, answer, crashed):
    """Answer the request on stdin. ``load(request)``: the engine loaded with
    its stand-ins (an object with ``stand_ins``); ``answer(engine, case)``:
    one case's answer; ``crashed(exc)``: the answer for a case whose code
    raised (the trace is added)."""
    request = json.load(sys.stdin)
    out = real_stdout()
    key = f"{dist}_version"

    def say(kind, doc):
        out.write(f"{prefix}_{kind} " + json.dumps(doc) + "\n")
        out.flush()

    try:
        engine = load(request)
    except Exception as e:  # noqa: BLE001 - this release's code raised while being set up
        say("ERROR", {key: dist_version(dist), "error": f"{type(e).__name__}: {e}",
                      "trace": traceback.format_exc(limit=8)})
        return 0
    say("READY", {key: dist_version(dist), "stand_ins": engine.stand_ins})
    for case in request["cases"]:
        try:
            say("CASE", answer(engine, case))
        except Exception as e:  # noqa: BLE001 - one bad case must not lose the rest
            say("CASE", {**crashed(e), "trace": traceback.format_exc(limit=8)})
    return 0
