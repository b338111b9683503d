"""The prepared GPU check (pretrain/examples/gpu_check.sh) runs every section at toy size on CPU, so a lent GPU's
minutes are not spent finding a typo; its cross-checks (resume, fp32 export, MFU recomputed) hold there too."""

from __future__ import annotations

import importlib.util
import json
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(importlib.util.find_spec("deepspeed") is None,
                                 reason="deepspeed is not installed (the optional `deepspeed` extra)")]


def test_gpu_check_runs_every_section_at_toy_size(tmp_path):
    out = tmp_path / "gpu-check"
    proc = subprocess.run(["bash", str(ROOT / "pretrain/examples/gpu_check.sh"), str(out), "--toy"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    res = json.loads((out / "results.json").read_text())
    assert list(res) == ["env", "matmul", "tiny", "small", "modernbert", "zero3", "finetune"]
    assert {r["status"] for r in res.values()} == {"ok"}, {k: r.get("error") for k, r in res.items()}
    assert res["tiny"]["resume_max_loss_diff"] == 0.0 and res["tiny"]["export_dtypes"] == ["torch.float32"]
    assert res["small"]["deepspeed"] == "zero2" and res["small"]["mixed_precision"] == "bf16"
    assert res["small"]["mfu_recomputed"] == pytest.approx(res["small"]["mfu_logged"], rel=0.05)
    assert res["modernbert"]["export_class"] == "ModernBertForMaskedLM"
    assert res["modernbert"]["export_dtypes"] == ["torch.float32"] and len(res["modernbert"]["fill_mask_top3"]) == 3
    assert res["modernbert"]["mfu_recomputed"] == pytest.approx(res["modernbert"]["mfu_logged"], rel=0.05)
    assert res["zero3"]["final_equals_fp32_masters"] is True
    assert (out / "results.md").read_text().count("| ok |") == 7 and (out / "log.txt").is_file()
