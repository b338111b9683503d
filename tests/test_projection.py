"""bench/projection.py's arithmetic (issue 49, item 5) on a two-stage record whose numbers are worked by hand."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

spec = importlib.util.spec_from_file_location("projection", Path(__file__).resolve().parent.parent / "bench" /
                                              "projection.py")
assert spec is not None and spec.loader is not None
projection = importlib.util.module_from_spec(spec)
sys.modules["projection"] = projection  # dataclasses look their module up by name
spec.loader.exec_module(projection)

BENCH = {"stages": {
    "collect": [{"gb": 0.1, "workers": 1, "input_mb": 100, "mb_per_cpu_s": 99, "peak_rss_mb": 1, "disk_mb": 1},
                {"gb": 0.5, "workers": 1, "input_mb": 1000, "mb_per_cpu_s": 10, "peak_rss_mb": 200, "disk_mb": 400},
                {"gb": 0.5, "workers": 2, "input_mb": 1000, "mb_per_cpu_s": 1, "peak_rss_mb": 900, "disk_mb": 400}],
    "vocab": [{"gb": 0.5, "workers": 1, "input_mb": 500, "mb_per_cpu_s": 5, "peak_rss_mb": 300, "disk_mb": 0}],
}}


def test_projection_of_a_hand_worked_record():
    costs = projection.stage_costs(BENCH)  # the largest size's one-worker rows
    assert [(c.stage, c.share, c.mb_per_cpu_s, c.peak_rss_mb, c.disk_ratio) for c in costs] == [
        ("collect", 1.0, 10, 200, 0.4), ("vocab", 0.5, 5, 300, 0.0)]
    collect, vocab, total = projection.project(costs, 10, {"n4": 4})
    # 10 GB = 10,000 MB at 10 MB/CPU-s: 1,000 CPU s = 0.2778 h, over 4 cores 0.0694 h; vocab reads half of it at
    # 5 MB/CPU-s: the same 0.2778 h, serial on any machine
    assert collect["cpu_h"] == pytest.approx(1000 / 3600) and collect["n4"] == pytest.approx(250 / 3600)
    assert vocab["cpu_h"] == pytest.approx(1000 / 3600) and vocab["n4"] == pytest.approx(1000 / 3600)
    assert total["cpu_h"] == pytest.approx(2000 / 3600) and total["n4"] == pytest.approx(1250 / 3600)
    assert (total["rss_mb"], collect["disk_gb"], total["disk_gb"]) == (300, 4.0, 4.0)
    assert "| vocab | 0.3 | 0.28 | 300 | 0 |" in projection.markdown([collect, vocab, total], 10, {"n4": 4})


def test_rates_on_real_text_scale_each_measured_stage_and_mark_the_others():
    """`--text`: a stage measured on both texts runs at its real-over-scale ratio; one that is not keeps its
    rate and is marked (and `vocab*` stays serial)."""
    real = {"stages": {"collect": {"stage_mb_per_cpu_s": 2.5}, "dedup": {"stage_mb_per_cpu_s": 1.0}}}
    scale = {"stages": {"collect": {"stage_mb_per_cpu_s": 5.0}}}
    ratios = projection.text_ratios(real, scale)
    assert ratios == {"collect": 0.5}
    collect, vocab = projection.on_text(projection.stage_costs(BENCH), ratios)
    assert (collect.stage, collect.mb_per_cpu_s) == ("collect", 5.0)
    assert (vocab.stage, vocab.mb_per_cpu_s) == ("vocab*", 5)
    _, v, total = projection.project([collect, vocab], 10, {"n4": 4})
    assert v["n4"] == pytest.approx(1000 / 3600)  # serial: its CPU hours on any machine
    assert total["cpu_h"] == pytest.approx(3000 / 3600)  # collect now 2,000 CPU s
