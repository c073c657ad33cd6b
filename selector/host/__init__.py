"""What this machine and another Python have, read at the edge of a
command: package metadata (``engine_packages.py``), the kernels vLLM would
find and the visible GPU (``kernel_probe.py``), and doctor's findings
(``doctor_probe.py``).

The one part of ``selector/`` that looks at the machine: it reads files and
runs bounded subprocesses (nvidia-smi, a probe script in another Python),
and never imports torch, an engine or a kernel package in this process.
What it finds is handed to the pure modules (``selector/installed.py``,
``selector/doctor.py``, ``selector/vllm_installed.py``) to judge.
"""

import os

# ``python -c`` puts the working directory first on sys.path: the other
# Python runs from this folder, which holds no module an engine imports
# (keep it so: no file here may share a name with a top-level package), so
# what it reports is its own installation, not whatever lies where
# attn-select was started.
NEUTRAL_CWD = os.path.dirname(os.path.abspath(__file__))
