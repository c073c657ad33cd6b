"""One local worker process: ``python -m attn_select.cli.fleet.worker JOB OUT``.

Reads a ``Job`` (JSON) from JOB, runs it with ``job.run_job`` and writes
the payload to OUT (through a temporary file, so OUT exists only complete).
Progress goes to stderr, one line each, for the pool to relay. A worker
that dies leaves no OUT: the pool reports how it ended instead.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m attn_select.cli.fleet.worker JOB.json OUT.json", file=sys.stderr)
        return 2
    from attn_select.cli.fleet.job import Job, run_job

    job = Job.from_json(Path(argv[0]).read_text())

    def progress(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    payload = run_job(job, progress)
    out = Path(argv[1])
    tmp = out.with_suffix(".partial")
    tmp.write_text(json.dumps(payload))
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
