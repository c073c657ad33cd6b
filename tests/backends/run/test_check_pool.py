"""benchmarks/check_pool.py, the device drivers' parallel checks, on the CPU:
results come back as their processes finish, a process that raises is one
failed row, and a check that never finishes is reported as a hang instead of
holding the driver (its process killed)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

from check_pool import checked_rows, print_check, run_check_jobs  # noqa: E402


def _job(job) -> dict:
    """A driver's check_job stand-in (module level: spawned processes import it)."""
    kind, page, seconds = job
    if kind == "raises":
        raise RuntimeError("boom\nsecond line")
    time.sleep(seconds)
    return checked_rows(kind, page, time.time() + 60, [(dict(check="slept"), lambda: dict(ok=True, err=0.0))])


def test_results_failures_and_hangs_each_come_back_once():
    jobs = [("quick", 16, 0.0), ("raises", 16, 0.0), ("hangs", 64, 3600.0)]
    got = {r["kind"]: r for r in run_check_jobs(_job, jobs, workers=3, end=time.time() + 20)}
    assert set(got) == {"quick", "raises", "hangs"}
    assert got["quick"]["all_ok"] and got["quick"]["checks"] == [dict(check="slept", ok=True, err=0.0)]
    assert not got["raises"]["all_ok"]
    assert got["raises"]["checks"][0]["error"] == "RuntimeError: boom | second line"
    assert not got["hangs"]["all_ok"] and got["hangs"]["page"] == 64
    assert "not finished in time" in got["hangs"]["checks"][0]["error"]


def test_checked_rows_keeps_going_after_a_failure_and_skips_past_the_budget():
    def fails():
        raise ValueError("bad shape")

    res = checked_rows("tl", 16, time.time() + 60, [(dict(check="a"), fails), (dict(check="b"), lambda: dict(ok=True))])
    assert [c.get("ok") for c in res["checks"]] == [None, True] and not res["all_ok"]
    assert res["checks"][0]["error"] == "ValueError: bad shape" and res["checks"][0]["trace_tail"]
    late = checked_rows("tl", 16, time.time() - 1, [(dict(check="a"), lambda: dict(ok=True))])
    assert late["checks"] == [dict(check="a", error="skipped: out of budget")] and not late["all_ok"]


def test_print_check_names_each_failed_check(capsys):
    res = dict(kind="g64x2s", page=16, seconds=1.5, all_ok=False,
               checks=[dict(check="32 x 4096", heads=128, ok=True, err=1e-3),
                       dict(check="poisoned", heads=64, ok=False, err=0.5), dict(check="process", error="hang")])
    print_check(res, 7)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "check  g64x2s page 16: 1/3 ok, max err 5.00e-01, 1.5 s"
    assert lines[1:] == ["     64 heads poisoned: err 5.00e-01 WRONG", "    process: FAIL hang"]
