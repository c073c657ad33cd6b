"""More cases for the config-parser differential (tests/selector/test_model_vs_vllm.py):
cut-down versions of published config.json files, each checked against vLLM 0.33.0's
own model build. See that module for what is compared."""

from __future__ import annotations


def cases() -> list[dict]:
    return []
