"""attn-select: selector."""
