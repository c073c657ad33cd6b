"""Where the tests that read vLLM 0.33.0's source find it: ATTN_SELECT_VLLM_SRC
(the folder that holds ``vllm/``), else /work/vllm-src or /tmp/vsrc (where
`pip download --no-deps vllm==0.33.0` was unzipped). Those tests skip when
none holds it."""

from __future__ import annotations

import os
from pathlib import Path


def vllm_source() -> Path:
    """The ``vllm/`` package folder of the unpacked source, or a path that does not exist."""
    for root in (os.environ.get("ATTN_SELECT_VLLM_SRC"), "/work/vllm-src", "/tmp/vsrc"):
        if root and (Path(root) / "vllm" / "config" / "attention.py").exists():
            return Path(root) / "vllm"
    return Path("/nonexistent/vllm")
