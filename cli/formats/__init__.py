"""attn-select: cli/formats."""
