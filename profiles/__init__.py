"""attn-select: profiles."""
