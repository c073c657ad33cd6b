"""Where ``cli/installed_engine.py`` still imports engine detection from:
the code lives in ``selector/host/engine_packages.py``. Re-exports only;
goes away once that module imports from there."""

from attn_select.selector.host import NEUTRAL_CWD
from attn_select.selector.host.engine_packages import find_engine

__all__ = ["NEUTRAL_CWD", "find_engine"]
