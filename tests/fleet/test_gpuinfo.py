"""A GPU's state from nvidia-smi's CSV and from NVML (a stand-in pynvml
module with pynvml's call names), and the slowdown-reason bits."""

from __future__ import annotations

import sys
import types

import pytest

from attn_select.cli.fleet import gpuinfo

SMI = """\
0, NVIDIA H200, GPU-5d3e0c8a-0000-0000-0000-000000000000, 1980, 3201, 1980, 34, 115.27, 0x0000000000000001
1, NVIDIA H200, GPU-71aa1f2e-0000-0000-0000-000000000000, 1395, 3201, 1980, 87, 690.10, 0x0000000000000060
"""


def test_nvidia_smi_csv():
    a, b = gpuinfo.parse_smi(SMI, with_reasons=True)
    assert (a.index, a.name, a.uuid[:12], a.sm_clock_mhz, a.temperature_c, a.power_w) == (
        0, "NVIDIA H200", "GPU-5d3e0c8a", 1980, 34, 115.27)
    assert a.slowdown == []  # idle only: not a slowdown
    assert b.slowdown == ["sw-thermal", "hw-thermal"] and b.source == "nvidia-smi"


def test_nvidia_smi_na_fields_and_no_reason_column():
    (s,) = gpuinfo.parse_smi("3, NVIDIA A100-SXM4-80GB, GPU-x, [N/A], 1593, 1410, 40, [N/A]\n", with_reasons=False)
    assert s.sm_clock_mhz is None and s.power_w is None and s.slowdown is None and s.max_sm_clock_mhz == 1410


def test_nvidia_smi_short_line_is_an_error():
    with pytest.raises(gpuinfo.GpuQueryError, match="unexpected line"):
        gpuinfo.parse_smi("0, NVIDIA H200\n", with_reasons=False)


def test_nvml_when_pynvml_is_importable(monkeypatch):
    nv = types.ModuleType("pynvml")
    nv.NVML_CLOCK_SM, nv.NVML_CLOCK_MEM, nv.NVML_TEMPERATURE_GPU = 1, 2, 0
    gpus = [{"name": b"NVIDIA H200", "uuid": "GPU-a", "clk": {1: 1980, 2: 3201}, "max": 1980, "t": 41, "p": 120500,
             "r": 0x4}, {"name": "NVIDIA H200", "uuid": "GPU-b", "clk": {1: 1900, 2: 3201}, "max": 1980, "t": 44,
                         "p": 118000, "r": 0}]
    calls = []
    nv.nvmlInit = lambda: calls.append("init")
    nv.nvmlShutdown = lambda: calls.append("shutdown")
    nv.nvmlDeviceGetCount = lambda: len(gpus)
    nv.nvmlDeviceGetHandleByIndex = lambda i: i
    nv.nvmlDeviceGetHandleByUUID = lambda u: [g["uuid"] for g in gpus].index(u)
    nv.nvmlDeviceGetIndex = lambda h: h
    nv.nvmlDeviceGetName = lambda h: gpus[h]["name"]
    nv.nvmlDeviceGetUUID = lambda h: gpus[h]["uuid"]
    nv.nvmlDeviceGetClockInfo = lambda h, kind: gpus[h]["clk"][kind]
    nv.nvmlDeviceGetMaxClockInfo = lambda h, kind: gpus[h]["max"]
    nv.nvmlDeviceGetTemperature = lambda h, kind: gpus[h]["t"]
    nv.nvmlDeviceGetPowerUsage = lambda h: gpus[h]["p"]
    nv.nvmlDeviceGetCurrentClocksThrottleReasons = lambda h: gpus[h]["r"]
    monkeypatch.setitem(sys.modules, "pynvml", nv)
    a, b = gpuinfo.list_gpus()
    assert (a.name, a.uuid, a.sm_clock_mhz, a.mem_clock_mhz, a.power_w, a.slowdown, a.source) == (
        "NVIDIA H200", "GPU-a", 1980, 3201, 120.5, ["sw-power-cap"], "nvml")
    one = gpuinfo.query("GPU-b")
    assert (one.index, one.temperature_c) == (1, 44)
    assert calls.count("init") == calls.count("shutdown") == 2


def test_visible_ref_is_the_first_entry():
    assert gpuinfo.visible_ref("GPU-a,GPU-b") == "GPU-a" and gpuinfo.visible_ref("3") == "3"
    assert gpuinfo.visible_ref("") is None and gpuinfo.visible_ref(None) is None
