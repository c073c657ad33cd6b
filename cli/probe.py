"""Where ``cli/installed_engine.py`` still imports the machine probes from:
the code lives in ``selector/host/kernel_probe.py``. Re-exports only; goes
away once that module imports from there."""

from attn_select.selector.host.kernel_probe import driver_present, kernels_in

__all__ = ["driver_present", "kernels_in"]
