"""attn-select: backends."""
