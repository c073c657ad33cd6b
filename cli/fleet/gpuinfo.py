"""A GPU's identity and state (name, UUID, clocks, temperature, power, the
active clock-slowdown reasons), read through NVML when ``pynvml`` is
importable and through ``nvidia-smi`` otherwise, without initializing CUDA.

Workers read their GPU before and after their run, so a GPU that throttled
or heated up during it shows that beside its timings. Indices here are
NVML's (PCI bus order, what nvidia-smi prints); workers are pinned by UUID
so CUDA's own device order never matters.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import asdict, dataclass

# NVML's clock-event (throttle) reason bits that explain a slow GPU.
REASONS = {
    0x1: "idle",
    0x2: "app-clocks",
    0x4: "sw-power-cap",
    0x8: "hw-slowdown",
    0x10: "sync-boost",
    0x20: "sw-thermal",
    0x40: "hw-thermal",
    0x80: "hw-power-brake",
    0x100: "display-clocks",
}


class GpuQueryError(Exception):
    """Neither NVML nor nvidia-smi could answer; the message says why."""


@dataclass
class GpuState:
    index: int | None
    name: str
    uuid: str
    sm_clock_mhz: int | None = None
    mem_clock_mhz: int | None = None
    max_sm_clock_mhz: int | None = None
    temperature_c: int | None = None
    power_w: float | None = None
    slowdown: list[str] | None = None  # active clock-event reasons (idle excluded)
    source: str = ""  # nvml | nvidia-smi

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict | None) -> "GpuState | None":
        if not d:
            return None
        known = {k: d[k] for k in cls.__dataclass_fields__ if k in d}
        return cls(**known)


def reasons(mask: int | None) -> list[str] | None:
    if mask is None:
        return None
    # "idle" is every GPU between kernels: not a slowdown worth a line
    return [name for bit, name in REASONS.items() if mask & bit and bit != 0x1]


def _num(text: str, kind=int):
    text = text.strip()
    if not text or text.startswith("[") or text in ("N/A", "Not Supported"):
        return None
    try:
        return kind(float(text)) if kind is int else kind(text)
    except ValueError:
        return None


# --- nvidia-smi -------------------------------------------------------------------

SMI_FIELDS = ("index", "name", "uuid", "clocks.sm", "clocks.mem", "clocks.max.sm", "temperature.gpu",
              "power.draw")
# renamed in newer drivers; the first one this driver knows is used
SMI_REASON_FIELDS = ("clocks_event_reasons.active", "clocks_throttle_reasons.active")


def parse_smi(text: str, with_reasons: bool) -> list[GpuState]:
    """nvidia-smi --query-gpu=SMI_FIELDS[,reasons] --format=csv,noheader,nounits."""
    out = []
    for line in text.splitlines():
        if not line.strip():
            continue
        cells = [c.strip() for c in line.split(",")]
        if len(cells) < len(SMI_FIELDS) + (1 if with_reasons else 0):
            raise GpuQueryError(f"nvidia-smi printed an unexpected line: {line.strip()!r}")
        mask = None
        if with_reasons:
            raw = cells[len(SMI_FIELDS)]
            mask = int(raw, 16) if raw.lower().startswith("0x") else None
        out.append(GpuState(
            index=_num(cells[0]), name=cells[1], uuid=cells[2], sm_clock_mhz=_num(cells[3]),
            mem_clock_mhz=_num(cells[4]), max_sm_clock_mhz=_num(cells[5]), temperature_c=_num(cells[6]),
            power_w=_num(cells[7], float), slowdown=reasons(mask), source="nvidia-smi",
        ))
    return out


def _smi(ref: str | None, timeout_s: float) -> list[GpuState]:
    exe = shutil.which("nvidia-smi")
    if exe is None:
        raise GpuQueryError("neither pynvml nor nvidia-smi is available")
    last = ""
    for extra in (*SMI_REASON_FIELDS, None):
        fields = ",".join(SMI_FIELDS + ((extra,) if extra else ()))
        cmd = [exe, f"--query-gpu={fields}", "--format=csv,noheader,nounits"] + (["-i", ref] if ref else [])
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            raise GpuQueryError(f"nvidia-smi did not answer within {timeout_s:.0f} s") from None
        if p.returncode == 0:
            return parse_smi(p.stdout, with_reasons=extra is not None)
        last = (p.stdout + p.stderr).strip().splitlines()[-1:] or [f"exit {p.returncode}"]
        last = last[0]
        if "field" not in last.lower():  # not an unknown-field complaint: retrying will not help
            break
    raise GpuQueryError(f"nvidia-smi failed: {last}")


# --- NVML -------------------------------------------------------------------------

def _nvml_state(nv, handle) -> GpuState:
    def get(fn, *args, kind=int):
        try:
            return kind(getattr(nv, fn)(handle, *args))
        except Exception:  # a field this GPU or driver does not report
            return None

    def text(value) -> str:
        return value.decode() if isinstance(value, bytes) else str(value)

    mask = None
    for fn in ("nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"):
        if hasattr(nv, fn):
            mask = get(fn)
            break
    power_mw = get("nvmlDeviceGetPowerUsage")
    return GpuState(
        index=get("nvmlDeviceGetIndex"), name=text(nv.nvmlDeviceGetName(handle)),
        uuid=text(nv.nvmlDeviceGetUUID(handle)),
        sm_clock_mhz=get("nvmlDeviceGetClockInfo", nv.NVML_CLOCK_SM),
        mem_clock_mhz=get("nvmlDeviceGetClockInfo", nv.NVML_CLOCK_MEM),
        max_sm_clock_mhz=get("nvmlDeviceGetMaxClockInfo", nv.NVML_CLOCK_SM),
        temperature_c=get("nvmlDeviceGetTemperature", nv.NVML_TEMPERATURE_GPU),
        power_w=None if power_mw is None else power_mw / 1000.0, slowdown=reasons(mask), source="nvml",
    )


def _nvml(ref: str | None):
    try:
        import pynvml as nv
    except ImportError:
        return None
    try:
        nv.nvmlInit()
    except Exception as e:  # no driver: let nvidia-smi say so in its own words
        return None if shutil.which("nvidia-smi") else _raise(f"NVML could not start: {e}")
    try:
        if ref is None:
            return [_nvml_state(nv, nv.nvmlDeviceGetHandleByIndex(i)) for i in range(nv.nvmlDeviceGetCount())]
        if ref.isdigit():
            return [_nvml_state(nv, nv.nvmlDeviceGetHandleByIndex(int(ref)))]
        return [_nvml_state(nv, nv.nvmlDeviceGetHandleByUUID(ref))]
    except Exception as e:
        raise GpuQueryError(f"NVML: {ref or 'GPUs'}: {e}") from None
    finally:
        try:
            nv.nvmlShutdown()
        except Exception:
            pass


def _raise(msg: str):
    raise GpuQueryError(msg)


def list_gpus(timeout_s: float = 20.0) -> list[GpuState]:
    """Every GPU the driver sees, in NVML index order."""
    found = _nvml(None)
    return found if found is not None else _smi(None, timeout_s)


def query(ref: str, timeout_s: float = 20.0) -> GpuState:
    """One GPU by NVML index or UUID."""
    found = _nvml(ref)
    found = found if found is not None else _smi(ref, timeout_s)
    if not found:
        raise GpuQueryError(f"no GPU {ref}")
    return found[0]


def visible_ref(cuda_visible_devices: str | None) -> str | None:
    """The first entry of CUDA_VISIBLE_DEVICES: the GPU a pinned worker runs on."""
    if not cuda_visible_devices:
        return None
    first = cuda_visible_devices.split(",")[0].strip()
    return first or None
