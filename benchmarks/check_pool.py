"""The correctness half of a device driver (run_gluon_mla.py,
run_gluon_prefill.py): each launch kind's checks in its own spawned process,
all at once (this also compiles every launch the timing will ask for into
the shared Triton cache), under one time cap.

A kernel that never finishes (a barrier waited on forever) must not eat the
device call: checks still running at the cap are reported as hangs and their
processes killed, and the driver goes on to timing what passed."""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import time
import traceback
from collections.abc import Callable, Iterator


def first_lines(e: BaseException, n: int = 4) -> str:
    """An exception as one short line (the device returns only its output's tail)."""
    text = [ln for ln in str(e).strip().splitlines() if ln.strip()]
    return f"{type(e).__name__}: " + " | ".join(text[:n])[:700]


def checked_rows(kind: str, page: int, budget_end: float, cases: list[tuple[dict, Callable[[], dict]]]) -> dict:
    """In a worker process: one (kind, page)'s checks, each ``(row, check)``
    with ``row`` updated by what ``check()`` returns; each in its own try (an
    exception's first lines are kept and the others go on), those past
    ``budget_end`` skipped."""
    t0 = time.time()
    res = dict(kind=kind, page=page, checks=[])
    for row, check in cases:
        if time.time() > budget_end:
            row["error"] = "skipped: out of budget"
        else:
            try:
                row.update(check())
            except Exception as e:
                row["error"] = first_lines(e)
                row["trace_tail"] = traceback.format_exc().strip().splitlines()[-3:]
        res["checks"].append(row)
    res["seconds"] = round(time.time() - t0, 1)
    res["all_ok"] = all(c.get("ok") for c in res["checks"])
    return res


def _failed(job, why: str) -> dict:
    kind, page = job[:2]
    return dict(kind=kind, page=page, checks=[dict(check="process", error=why)], all_ok=False)


def run_check_jobs(check_job: Callable, jobs: list[tuple], workers: int, end: float) -> Iterator[dict]:
    """``check_job(job)`` for every ``(kind, page, ...)`` job, each in a spawned
    process (CUDA needs spawn), yielded as they finish. A job whose process
    raised, or that has not finished at ``end`` (epoch seconds), yields a
    failed result; the unfinished ones' processes are killed."""
    ex = concurrent.futures.ProcessPoolExecutor(max_workers=max(1, min(workers, len(jobs))),
                                                mp_context=multiprocessing.get_context("spawn"))
    futures = {ex.submit(check_job, j): j for j in jobs}
    try:
        for fut in concurrent.futures.as_completed(futures, timeout=max(5.0, end - time.time())):
            try:
                yield fut.result()
            except Exception as e:
                yield _failed(futures[fut], first_lines(e))
    except concurrent.futures.TimeoutError:
        for fut, job in futures.items():
            if not fut.done():
                yield _failed(job, "not finished in time (a hang?); its process killed")
        for proc in list(getattr(ex, "_processes", {}).values()):  # the workers this pool started
            proc.kill()
    finally:
        ex.shutdown(wait=False, cancel_futures=True)


def print_check(res: dict, width: int) -> None:
    """One line a (kind, page), then each failed check in full: short enough
    for the device's 12 KB output tail."""
    errs = [c["err"] for c in res["checks"] if "err" in c]
    print(f"check {res['kind']:>{width}} page {res['page']:>2}: "
          f"{sum(bool(c.get('ok')) for c in res['checks'])}/{len(res['checks'])} ok, "
          f"max err {max(errs) if errs else float('nan'):.2e}, {res.get('seconds')} s", flush=True)
    for c in res["checks"]:
        if not c.get("ok"):
            heads = f"{c['heads']:>3} heads " if "heads" in c else ""
            msg = f"err {c['err']:.2e} WRONG" if "err" in c else f"FAIL {c.get('error')}"
            print(f"    {heads}{c['check']}: {msg}", flush=True)
