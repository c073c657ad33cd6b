"""Fan ``attn-select run`` out to workers and merge what they found.

Each worker runs exactly the local command's code (``cli.run.execute``),
so a GPU of a node or a Ray task on a cluster answers the same question as
``attn-select run`` on one machine; this package only starts the workers,
watches them, and merges their ``RunReport`` s into one ``FleetReport``.

- ``job``: what one worker runs (``Job``) and the worker body ``run_job``,
  shared by the local process pool and the Ray task.
- ``worker``: ``python -m attn_select.cli.fleet.worker JOB OUT``, one process.
- ``gpuinfo``: a GPU's name, UUID, clocks and temperature (NVML or nvidia-smi).
- ``units``: one worker's outcome (``Unit``), rebuilt from its payload.
- ``pool``: local worker processes in parallel, with a time limit each.
- ``merge``: units -> ``FleetReport``: per-unit verdicts, the pivot table,
  run-to-run noise and the slow-unit lines, the exit code.
- ``node``: ``run MODEL --gpus``: one worker per GPU of this node.
- ``ray_cluster``, ``ray_run``, ``ray_check``: ``run``/``check`` over a Ray
  cluster (the ``fleet`` extra); Ray is imported only there.

No torch here: the workers import it through ``execute``.
"""
