"""Whether this machine can run our Gluon (Triton 3.6) Hopper kernels at all.

TRITON_ATTN's prefill kernel (``attn_gluon.py``) and TRITON_MLA's decode
kernel (``mla_gluon.py``) share these conditions; each adapter then adds its
own (cache dtype, heads, page size). Gluon's API changes between Triton
releases and has no interpreter, so a GPU without sm_90, another Triton or a
failed import sends the layer to the ``tl`` kernel with the reason.
"""

from __future__ import annotations

import importlib

# The Triton release the Gluon kernels are written against (the H200 image's).
GLUON_TRITON = ("3.6.",)


def gluon_hopper_unavailable(is_cuda: bool, capability, kernel_module: str) -> str | None:
    """Why no Gluon kernel runs here (None: one can), before any shape check.
    ``kernel_module`` is the kernel's module under ``attn_select.backends.run``,
    imported here so that a Gluon API missing from this Triton is a reason."""
    if not is_cuda:
        return "no GPU (Gluon has no interpreter)"
    if capability is None or tuple(capability)[0] != 9:
        return f"compute capability {capability}: the Gluon kernel is Hopper's (sm_90)"
    try:
        import triton

        if not triton.__version__.startswith(GLUON_TRITON):
            return f"Triton {triton.__version__}: the Gluon kernel is written for {'/'.join(GLUON_TRITON)}x's API"
        importlib.import_module(f"attn_select.backends.run.{kernel_module}")
    except Exception as e:
        return f"Gluon Hopper API not importable: {type(e).__name__}: {e}"
    return None
