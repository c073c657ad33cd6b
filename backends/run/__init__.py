"""attn-select: backends/run."""
