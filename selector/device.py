"""The GPU a selection is for: from a profile, a --capability, or a live probe."""

from __future__ import annotations

from typing import NamedTuple

from attn_select.selector.config import Capability


class Device(NamedTuple):
    name: str  # "NVIDIA H100 80GB HBM3", or the profile's display name
    capability: Capability
    memory_gib: float | None = None
    bandwidth_tbs: float | None = None  # peak HBM bandwidth, TB/s
    source: str = "profile"  # "profile h100", "--capability 9.0", "nvidia-smi probe, GPU 0"
    profile: str | None = None  # profile key, e.g. "h100"
    cuda_version: str | None = None  # CUDA version of the engine build, from the profile (SGLang reads it)
