"""Where ``cli/installed_engine.py`` still imports doctor's environment
probe from: the code lives in ``selector/host/doctor_probe.py`` (gathering)
and ``selector/doctor.py`` (the judgements). Re-exports only; goes away once
that module imports from there."""

from attn_select.selector.host.doctor_probe import environment_facts

__all__ = ["environment_facts"]
