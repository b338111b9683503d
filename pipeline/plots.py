"""The report's figures: small matplotlib charts rendered to PNG bytes, the same bytes for the same data.

One place for the look of every figure (size, grid, fonts) so the report's charts read as one set. matplotlib's
Agg backend, no PNG metadata (which would carry the matplotlib version and make the bytes differ between
installs). Labels are the pipeline's own names (stages, sources, PII types, tasks, arms): ASCII in the shipped
recipes, so matplotlib's bundled font draws them everywhere; the numbers are in the tables beside every figure.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Figure:
    """A chart of the report: its file name (under `report_files/`), PNG bytes and a one-line caption."""

    name: str
    png: bytes
    caption: str


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update({"axes.grid": True, "grid.alpha": 0.3, "font.size": 9})
    return plt


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    import matplotlib.pyplot as plt

    plt.close(fig)
    return buf.getvalue()


def lines(series: Mapping[str, Sequence[tuple[float, float]]], *, xlabel: str, ylabel: str,
          xticks: Sequence[str] | None = None, log_y: bool = False, markers: bool = True) -> bytes:
    """One line per series (label -> [(x, y)]); `xticks` names the x positions 0..n-1 (stage names)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(7, 3.6))
    for label, points in series.items():
        if points:
            xs, ys = zip(*points, strict=True)
            ax.plot(xs, ys, "o-" if markers else "-", label=label, markersize=3)
    if xticks is not None:
        ax.set_xticks(range(len(xticks)), list(xticks), rotation=30, ha="right")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    if series:
        ax.legend(fontsize="small", ncol=2)
    return _png(fig)


def panels(rows: Sequence[tuple[str, Mapping[str, Sequence[tuple[float, float]]]]], *, xlabel: str,
           groups: Mapping[str, str] | None = None) -> bytes:
    """Side-by-side line charts sharing the x axis: [(y label, {series label: [(x, y)]})]. `groups` maps a
    series label to its group (a model's seeds): a group's series share a colour and differ in line style."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(rows), figsize=(3.6 * len(rows), 3.4), squeeze=False)
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    names = list(dict.fromkeys((groups or {}).values()))
    for ax, (ylabel, series) in zip(axes[0], rows, strict=True):
        seen: dict[str, int] = {}
        for label, points in series.items():
            if points:
                xs, ys = zip(*points, strict=True)
                style: dict[str, Any] = {}
                if groups and label in groups:
                    k = seen[groups[label]] = seen.get(groups[label], -1) + 1
                    style = {"color": palette[names.index(groups[label]) % len(palette)],
                             "linestyle": ["-", "--", ":", "-."][k % 4]}
                ax.plot(xs, ys, marker="o" if len(points) < 40 else None, label=label, markersize=3,
                        **{"linestyle": "-", **style})
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if series:
            ax.legend(fontsize="x-small")
    return _png(fig)


def bars(groups: Sequence[str], series: Mapping[str, Sequence[float | None]], *, ylabel: str,
         errors: Mapping[str, Sequence[float | None]] | None = None, horizontal: bool = False) -> bytes:
    """Grouped bars: one group per name in `groups`, one bar per series in each (None: no bar); `errors` are
    ± half-lengths (std over seeds)."""
    import numpy as np

    plt = _pyplot()
    n = max(1, len(series))
    width = 0.8 / n
    fig, ax = plt.subplots(figsize=(max(5.0, 0.9 * len(groups) * max(1, n / 2)), 3.6) if not horizontal
                           else (6, max(2.5, 0.35 * len(groups) + 1)))
    pos = np.arange(len(groups))
    for i, (label, values) in enumerate(series.items()):
        vals = np.array([np.nan if v is None else v for v in values], dtype=float)
        err = None
        if errors and label in errors:
            err = np.array([0.0 if e is None else e for e in errors[label]], dtype=float)
        offset = pos - 0.4 + width * (i + 0.5)
        if horizontal:
            ax.barh(offset, vals, height=width, xerr=err, label=label, capsize=2)
        else:
            ax.bar(offset, vals, width=width, yerr=err, label=label, capsize=2)
    if horizontal:
        ax.set_yticks(pos, list(groups))
        ax.set_xlabel(ylabel)
        ax.invert_yaxis()
    else:
        ax.set_xticks(pos, list(groups))
        ax.set_ylabel(ylabel)
    if n > 1:
        ax.legend(fontsize="small", ncol=min(n, 4))
    return _png(fig)


@dataclass(frozen=True)
class ForestRow:
    """One task of a forest plot: the difference with its interval (None: untested, drawn as a hollow point), and
    reference points on the same axis (a floor's score minus the comparison's baseline), by name."""

    label: str
    diff: float
    interval: tuple[float, float] | None = None
    marks: Mapping[str, float] | None = None


def forest(panels_: Sequence[tuple[str, Sequence[ForestRow]]], *, margin: float | None, xlabel: str) -> bytes:
    """Forest plots, one panel per comparison (title, rows): per row the difference and its interval, the zero line,
    the band ±`margin` (the equivalence margin) shaded, and each row's reference marks (floors) as crosses. A
    reader sees at once which intervals leave zero, which sit inside the band, and where a floor lies beyond
    the model's difference."""
    plt = _pyplot()
    heights = [max(1.6, 0.42 * len(rows) + 0.9) for _, rows in panels_]
    fig, axes = plt.subplots(len(panels_), 1, figsize=(7, sum(heights)), squeeze=False,
                             gridspec_kw={"height_ratios": heights})
    markers = ["x", "+", "1", "2", "3", "4", "^"]
    colours = ["tab:red", "tab:orange", "tab:purple", "tab:brown", "tab:pink", "tab:gray", "tab:olive", "tab:cyan"]
    for ax, (title, rows) in zip(axes[:, 0], panels_, strict=True):
        ys = list(range(len(rows)))[::-1]
        if margin:
            ax.axvspan(-margin, margin, color="tab:green", alpha=0.12, label=f"±{margin:g} (equivalence margin)")
        ax.axvline(0.0, color="black", linewidth=0.8)
        names = list(dict.fromkeys(n for r in rows for n in (r.marks or {})))
        labelled: set[str] = set()
        for y, row in zip(ys, rows, strict=True):
            if row.interval is not None:
                ax.plot(row.interval, [y, y], color="tab:blue", linewidth=2)
                ax.plot([row.diff], [y], "o", color="tab:blue")
            else:
                ax.plot([row.diff], [y], "o", markerfacecolor="none", color="tab:blue")
            for name, value in (row.marks or {}).items():
                k = names.index(name)  # a floor keeps its marker and colour across the panels' rows
                ax.plot([value], [y], markers[k % len(markers)], color=colours[k % len(colours)], markersize=7,
                        label=None if name in labelled else name)
                labelled.add(name)
        ax.set_yticks(ys, [r.label for r in rows])
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(xlabel)
        ax.legend(fontsize="x-small", loc="best")
    return _png(fig)


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A markdown table's lines (cells escaped): the one table writer of the report, its stage sections and the
    model card; beside the figures, the report's other building block."""
    def esc(x: str) -> str:
        return str(x).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(esc(h) for h in header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return out
