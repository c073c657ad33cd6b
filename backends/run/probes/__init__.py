"""Scripts that run in another Python: the one of the environment that runs
vLLM or SGLang (``--vllm-python``, or this one). Each is executed as a file
by that interpreter, so it uses the standard library and the engine only and
never imports attn_select; results come back as JSON on stdout.

- ``environment.py``: package versions, module locations and CUDA facts
  for ``attn-select doctor``, from metadata and files only.
- ``vllm_selection.py``: vLLM's own attention-backend selection for a model
  and device (``--engine vllm-installed``, ``check --vllm-python``).
- ``sglang_resolution.py``: SGLang's own server-argument resolution of the
  attention fields (``--engine sglang-installed``, the SGLang differential
  oracle).
- ``answer_lines.py``: the line protocol both of those answer with.
- ``libcuda_standin.py`` / ``libcuda_standin.c``: the ``libcuda.so.1``
  stand-in that lets vLLM's extension modules load without an NVIDIA driver.

Here, under backends/run/, because they import vLLM and torch (in that other
Python); nothing else of attn-select imports an engine. They ship as package
data of ``attn_select.backends.run.probes`` (the ``.c`` source too), and the
CLI finds them through ``FOLDER``.
"""

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
