"""Turn command-line inputs into selector inputs, once, at the edge:
the device (profile, --capability or the visible GPU) and the installed
kernels (--kernels, a live probe, or the default)."""

from __future__ import annotations

from attn_select.selector.config import Capability, Kernels
from attn_select.selector.device import Device
from attn_select.selector.errors import UserError


def parse_capability(text: str) -> Capability:
    """--capability X.Y, or a one-line user error."""
    try:
        return Capability.parse(text)
    except ValueError:
        raise UserError(
            f"--capability {text!r} is not a compute capability; write it as X.Y, e.g. 9.0"
        ) from None


def resolve_device(device: str | None, capability: str | None) -> Device:
    if device is not None and capability is not None:
        raise UserError("give either --device or --capability, not both")
    if capability is not None:
        cap = parse_capability(capability)
        return Device(name=f"SM{cap.to_int()}", capability=cap, source=f"--capability {cap}")
    from attn_select.selector import profiles

    if device is not None:
        return profiles.load_device(device)
    from attn_select.selector.host.kernel_probe import probe_gpu

    found = probe_gpu()
    if found is None:
        raise UserError(
            "no CUDA GPU visible here; pass --device NAME ("
            + ", ".join(profiles.device_profile_names())
            + ") or --capability X.Y"
        )
    return found


def resolve_kernels(kernels: str | None, probed_device: bool) -> Kernels:
    """--kernels wins; on a live GPU, probe what vLLM would find; otherwise
    the default: everything vLLM's CUDA wheel ships."""
    if kernels is not None:
        if not any(n.strip() for n in kernels.split(",")):
            # an empty value (--kernels "$UNSET") had meant "nothing installed", silently
            raise UserError(f"--kernels {kernels!r} names no kernel; give names from {', '.join(Kernels.NAMES)}, "
                            "or none for nothing installed")
        try:
            return Kernels.from_names(kernels.split(","), source="--kernels")
        except ValueError as exc:
            raise UserError(f"--kernels: {exc}") from None
    if probed_device:
        from attn_select.selector.host.kernel_probe import probe_kernels

        found = probe_kernels()
        if found is not None:
            return found
        return Kernels(source="default: vLLM is not installed here, assuming what its wheel ships")
    return Kernels(source="default: all that vLLM's wheel ships")
