"""The machine facts SGLang's resolution reads through ``get_platform()``
(``runtime_context._PLATFORM_PROBES`` -> ``utils/common.py``), as explicit
inputs: the compute capability, the CUDA version torch was built with
(``torch.version.cuda``), whether the ``flashinfer`` package is importable,
and the GPU's memory (one model override reads it).

Only NVIDIA CUDA is modelled: ``is_cuda`` is true, ``is_hip``/``is_npu``/
``is_xpu``/``is_mps``/``is_musa`` false, no out-of-tree platform.
"""

from __future__ import annotations

from dataclasses import dataclass

from attn_select.selector.config import Capability

DEFAULT_CUDA_VERSION = (12, 9)


def parse_cuda_version(text: str) -> tuple[int, int]:
    """"12.9" / "13.0" / "12.9.1" -> (12, 9), as ``_check_cuda_device_version``
    reads ``torch.version.cuda`` (major.minor). Raises ValueError."""
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts[:2]):
        raise ValueError(f"not a CUDA version: {text!r} (write it as MAJOR.MINOR, e.g. 12.9)")
    return int(parts[0]), int(parts[1])


@dataclass(frozen=True)
class Platform:
    capability: Capability
    cuda_version: tuple[int, int] = DEFAULT_CUDA_VERSION
    has_flashinfer: bool = True  # is_flashinfer_available(): find_spec("flashinfer")
    gpu_memory_mib: float | None = None  # get_device_memory_capacity(); None = unknown
    cuda_version_source: str = "default"

    # _check_cuda_device_version(majors, version): get_device_sm() // 10 in
    # majors and torch.version.cuda >= version.
    def _arch(self, majors: tuple[int, ...], cuda: tuple[int, int]) -> bool:
        return self.device_sm // 10 in majors and self.cuda_version >= cuda

    @property
    def device_sm(self) -> int:
        """get_device_sm(): major * 10 + minor."""
        return self.capability.major * 10 + self.capability.minor

    @property
    def is_hopper_with_cuda_12_3(self) -> bool:
        return self._arch((9,), (12, 3))

    @property
    def is_sm90(self) -> bool:  # is_sm90_supported: same test
        return self._arch((9,), (12, 3))

    @property
    def is_sm100(self) -> bool:
        return self._arch((10,), (12, 8))

    @property
    def is_sm100_or_sm110(self) -> bool:
        return self._arch((10, 11), (12, 8))

    @property
    def is_sm110(self) -> bool:
        return self._arch((11,), (12, 8))

    @property
    def is_sm120(self) -> bool:
        return self._arch((12,), (12, 8))

    @property
    def is_blackwell(self) -> bool:
        return self._arch((10, 11, 12), (12, 8))

    @property
    def device_capability(self) -> tuple[int, int]:
        """torch.cuda.get_device_capability()"""
        return self.capability.major, self.capability.minor

    def cuda_text(self) -> str:
        return f"{self.cuda_version[0]}.{self.cuda_version[1]}"

    def arch_names(self) -> list[str]:
        """The probes that are true, for the report."""
        names = ("is_sm90", "is_sm100", "is_sm110", "is_sm120", "is_blackwell")
        return [n for n in names if getattr(self, n)]
