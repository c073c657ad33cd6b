"""`attn-select tune --plot FILE`: per-layer latency and achieved KV-read
bandwidth against batch and against context, one line per setting, vLLM's
default drawn thick and marked. Written as FILE.png and FILE.svg at a fixed
size (``SIZE_PX``). matplotlib (the ``[plot]`` extra) is imported only here.
"""

from __future__ import annotations

from pathlib import Path

from attn_select.selector.errors import UserError

FIG_IN = (12.0, 8.0)
DPI = 100
SIZE_PX = (int(FIG_IN[0] * DPI), int(FIG_IN[1] * DPI))  # the PNG's width x height


def require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise UserError("--plot needs matplotlib: pip install 'attn-select[plot]'") from None


def _series(points, setting, along: str, fixed: str, fixed_value: int, value: str):
    rows = sorted((r for r in points if r.setting == setting and r.ok and getattr(r, fixed) == fixed_value),
                  key=lambda r: getattr(r, along))
    return [getattr(r, along) for r in rows], [getattr(r, value) for r in rows]


def _fullest(values: list[int], along) -> int:
    """The value whose slice holds the most points; the middle one among ties."""
    if not values:
        return 0
    most = max(len(along(v)) for v in values)
    tied = [v for v in values if len(along(v)) == most]
    return tied[len(tied) // 2]


def save_plots(report, file: Path) -> list[Path]:
    """Draw the four panels and write PNG and SVG beside ``file``."""
    require_matplotlib()
    import matplotlib
    import matplotlib.ticker

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    decode = [r for r in report.points if r.kind == "decode"]
    # one page size and KV dtype per figure: the first swept (vLLM's default when swept)
    d = report.recommendation.default
    page = d[1] if d else (decode[0].page_size if decode else 16)
    kv = d[2] if d else (decode[0].kv_cache_dtype if decode else "auto")
    decode = [r for r in decode if r.page_size == page and r.kv_cache_dtype == kv]
    batches = sorted({r.batch for r in decode})
    contexts = sorted({r.context for r in decode})
    # each panel's fixed value: the one with the most measured points along the other axis (a
    # workload point added to the grid must not leave a panel with one column); ties: the middle one
    ref_ctx = _fullest(contexts, lambda c: {r.batch for r in decode if r.context == c and r.ok})
    ref_batch = _fullest(batches, lambda b: {r.context for r in decode if r.batch == b and r.ok})
    settings = list(dict.fromkeys(r.setting for r in decode))
    stand_in = {r.setting for r in decode if r.backends and set(r.backends) & set(report.stand_ins)}

    fig, axes = plt.subplots(2, 2, figsize=FIG_IN, dpi=DPI)
    panels = [
        (axes[0][0], "batch", "context", ref_ctx, "per_layer_us", f"latency per layer, context {ref_ctx}", "us"),
        (axes[0][1], "context", "batch", ref_batch, "per_layer_us", f"latency per layer, batch {ref_batch}", "us"),
        (axes[1][0], "batch", "context", ref_ctx, "kv_read_tbs", f"KV read bandwidth, context {ref_ctx}", "TB/s"),
        (axes[1][1], "context", "batch", ref_batch, "kv_read_tbs", f"KV read bandwidth, batch {ref_batch}", "TB/s"),
    ]
    for ax, along, fixed, fv, value, title, unit in panels:
        for s in settings:
            xs, ys = _series(decode, s, along, fixed, fv, value)
            if not xs:
                continue
            default = s == report.default_label
            label = s if "default" in s or not default else f"{s} (vLLM default)"
            ax.plot(xs, ys, marker="*" if default else "o", linewidth=3 if default else 1.2,
                    linestyle=":" if s in stand_in else "-", markersize=10 if default else 4,
                    label=label + (" (stand-in)" if s in stand_in else ""))
        ax.set_title(title, fontsize=10)
        ax.set_xlabel(along)
        ax.set_ylabel(unit)
        if len({r.batch if along == "batch" else r.context for r in decode}) > 1:
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
        if value == "per_layer_us" and ax.get_lines():
            ax.set_yscale("log")  # the grid spans three orders of magnitude
            plain = matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}")
            ax.yaxis.set_major_formatter(plain)
            ax.yaxis.set_minor_locator(matplotlib.ticker.LogLocator(base=10, subs=(2.0, 5.0)))  # 20, 50, 200, ...
            ax.yaxis.set_minor_formatter(plain)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, "no correct timings", ha="center", va="center", transform=ax.transAxes)
    fig.suptitle(f"attn-select tune {report.model} on {report.device} (page {page}, kv {kv})")
    fig.tight_layout()
    stem = file.with_suffix("") if file.suffix.lower() in (".png", ".svg") else file
    out = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    try:
        for p in out:
            fig.savefig(p, dpi=DPI)  # no bbox_inches: the PNG keeps SIZE_PX
    except OSError as e:
        raise UserError(f"--plot: cannot write {p}: {e.strerror or e}") from None
    finally:
        plt.close(fig)
    return out
