"""Where ``cli/installed_engine.py`` still imports the machine probes from:
the code lives in ``selector/host/kernel_probe.py``. Goes away once that
module imports from there."""

from __future__ import annotations

from typing import Callable

from attn_select.selector.config import Kernels
from attn_select.selector.host import kernel_probe
from attn_select.selector.host.kernel_probe import driver_present

__all__ = ["driver_present", "kernels_in"]


def kernels_in(vllm_dir: str, has_module: Callable[[str], bool], source: str = "probe (the installed vLLM") -> Kernels:
    # installed_engine.py passes its source as "probe (WHAT", once closed by
    # the probe and then wrapped in a second pair of parentheses by every
    # renderer; the probe now takes WHAT alone
    return kernel_probe.kernels_in(vllm_dir, has_module, where=source.removeprefix("probe ("))
