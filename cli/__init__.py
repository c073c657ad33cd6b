"""attn-select: the command line (typer commands and rich rendering only)."""
__version__ = "0.1.0"
