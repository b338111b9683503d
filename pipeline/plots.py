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


def _png(fig: Any, rect: tuple[float, float, float, float] | None = None) -> bytes:
    """PNG bytes of `fig`, laid out tight (within `rect`, figure fractions: room kept for a legend above)."""
    buf = io.BytesIO()
    fig.tight_layout(rect=rect)
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
class DotPanel:
    """One panel of `dot_panels`: per row (a model's label) every run's score with the group it belongs to (a
    pretraining replicate), and reference lines across the panel (floors: scores no network trained for)."""

    title: str
    ylabel: str
    rows: Sequence[tuple[str, Sequence[tuple[float, str]]]]
    lines: Mapping[str, float]


def dot_panels(panels_: Sequence[DotPanel], *, group_label: str, columns: int = 4) -> bytes:
    """Small multiples, one panel per task: each run a dot (coloured by its group, spread apart in its row), the
    row's mean a black bar, each reference line dashed with its name. Every run is seen, so a reader judges the
    spread between pretraining replicates and between fine-tuning seeds (MultiBERTs, Sellam et al. 2021, plot
    runs rather than bars) and where a floor lies; the size does not grow with the number of floors."""
    plt = _pyplot()
    from matplotlib.transforms import blended_transform_factory

    n = max(1, len(panels_))
    cols = min(columns, n)
    nrows = -(-n // cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(3.1 * cols, 2.9 * nrows), squeeze=False)
    groups = list(dict.fromkeys(g for p in panels_ for _, runs in p.rows for _, g in runs))
    colours = plt.get_cmap("tab10").colors
    for ax, panel in zip(axes.flat, panels_, strict=False):
        for x, (_, runs) in enumerate(panel.rows):
            ordered = sorted(runs, key=lambda r: groups.index(r[1]))
            k = len(ordered)
            for i, (value, group) in enumerate(ordered):
                dx = 0.0 if k == 1 else -0.25 + 0.5 * i / (k - 1)
                ax.plot([x + dx], [value], "o", markersize=3.5, color=colours[groups.index(group) % len(colours)])
            if k:
                mean = sum(v for v, _ in ordered) / k
                ax.plot([x - 0.32, x + 0.32], [mean, mean], color="black", linewidth=1.6)
        across = blended_transform_factory(ax.transAxes, ax.transData)
        for value in panel.lines.values():
            ax.axhline(value, color="tab:gray", linestyle="--", linewidth=0.9)
        low, high = ax.get_ylim()
        right, last = True, None  # a line's name at the right; one close above the last named goes to the left
        for name, value in sorted(panel.lines.items(), key=lambda kv: kv[1]):
            right = not right if last is not None and value - last < 0.05 * (high - low) else True
            ax.text(0.99 if right else 0.01, value, name, transform=across, ha="right" if right else "left",
                    va="bottom", fontsize=6, color="dimgray")
            last = value
        ax.set_xticks(range(len(panel.rows)), [label for label, _ in panel.rows], fontsize=7, rotation=15)
        ax.set_xlim(-0.6, len(panel.rows) - 0.4)
        ax.set_title(panel.title, fontsize=9)
        ax.set_ylabel(panel.ylabel, fontsize=8)
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    if len(groups) > 1:
        handles = [plt.Line2D([], [], marker="o", linestyle="", color=colours[i % len(colours)], label=g)
                   for i, g in enumerate(groups)]
        handles.append(plt.Line2D([], [], color="black", label="mean of the row's runs"))
        fig.legend(handles=handles, title=group_label, fontsize="small", title_fontsize="small",
                   loc="upper center", ncol=len(handles), bbox_to_anchor=(0.5, 1.0))
        return _png(fig, rect=(0, 0, 1, 1 - 0.5 / (2.9 * nrows)))
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
