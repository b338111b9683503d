"""The Japanese recipe (`recipes/ja-tiny-cpu.yaml`, `language: ja`) end to end on a capped sample of the shared
Japanese corpus: every source's layout (one Shift_JIS file with CRLF), the funnels, Japanese PII, the MeCab-free
Metaspace tokenizer and a few steps of pretraining, whose model and tokenizer load where MeCab cannot be
imported."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
import yaml

pytest.importorskip("unidic_lite", reason="the `ja` extra is not installed (pip install -e '.[ja]')")

from pipeline.stage import Funnel  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RECIPE = REPO / "recipes" / "ja-tiny-cpu.yaml"
CAP = 150  # documents per source
TINY = ["stages.vocab.vocab_size=1500", "stages.vocab.report_max_texts=200", "stages.encode.eval_fraction=0.1",
        "stages.pretrain.max_steps=3", "stages.pretrain.warmup_steps=0", "stages.pretrain.batch_size=4",
        "stages.pretrain.seq_len=64", "stages.pretrain.eval_every=100", "stages.pretrain.eval_batches=1",
        "stages.pretrain.log_every=1", "stages.pretrain.checkpoint_every=100"]


@pytest.mark.shared_data
def test_the_japanese_recipe_runs_to_pretrain_on_a_capped_sample(shared_data, tmp_path):
    if not (shared_data / "ja" / "corpus").is_dir():
        pytest.skip(f"the shared data has no Japanese corpus: {shared_data / 'ja' / 'corpus'}")
    sources = yaml.safe_load(RECIPE.read_text(encoding="utf-8"))["sources"]
    sets = [a for i in range(len(sources)) for a in ("--set", f"sources.{i}.max_docs={CAP}")]
    sets += [a for s in TINY for a in ("--set", s)]
    wd = tmp_path / "ja"
    env = {**os.environ, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-m", "pipeline.cli", "run", str(RECIPE), "--workdir", str(wd),
                           "--workers", "2", *sets], cwd=REPO, env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    run = json.loads((wd / "run.json").read_text(encoding="utf-8"))
    assert run["status"] == "ok"
    (arm,) = run["arms"]
    ms = {s["stage"]: json.loads((wd / s["path"] / "manifest.json").read_text(encoding="utf-8"))
          for s in arm["stages"]}
    collect = ms["collect"]["by_source"]
    assert set(collect) == {s["name"] for s in sources}
    assert collect["aozora_sjis"]["docs_kept"] == 2  # both Shift_JIS works decoded, none quarantined
    assert all(0 < f["docs_kept"] <= CAP for f in collect.values())
    for st in ("collect", "filter", "dedup", "decontaminate", "pii", "pretokenize", "encode"):
        assert Funnel.from_json(ms[st]["funnel"]).problems() == [], st
    assert ms["filter"]["funnel"]["docs_in"] == ms["collect"]["funnel"]["docs_kept"]
    # the recipe's language reached every stage that has one
    assert ms["pii_detect"]["meta"]["report"]["language"] == "ja"
    assert {"[MY_NUMBER]", "[CORPORATE_NUMBER]", "[POSTAL_CODE]"} <= set(ms["pii"]["meta"]["placeholder_tokens"])
    assert ms["pretokenize"]["meta"]["training_scheme"] == "metaspace"
    assert ms["vocab"]["meta"]["pre_tokenizer"] == "metaspace" and ms["vocab"]["meta"]["algorithm"] == "bpe"
    assert ms["vocab"]["meta"]["report"]["unk_rate"] == 0.0  # byte fallback
    assert ms["pretrain"]["meta"]["report"]["steps"] == 3

    final = wd / "arms" / arm["name"] / "pretrain" / "final"
    sentence = "東京都に住んでいる田中さんは、毎朝ＪＲの電車で会社へ向かいます。"
    script = f"""
import json, sys
for m in ("MeCab", "unidic_lite", "corpora", "tokenizer", "pipeline"):
    sys.modules[m] = None
from transformers import AutoModelForMaskedLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained({str(final)!r})
model = AutoModelForMaskedLM.from_pretrained({str(final)!r}, use_safetensors=True)
ids = tok({sentence!r})["input_ids"]
out = model(input_ids=__import__("torch").tensor([ids])).logits
print(json.dumps([tok.decode(ids, skip_special_tokens=True), ids.count(tok.unk_token_id), list(out.shape),
                  len(tok), model.config.vocab_size]))
"""
    p = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=env)
    decoded, n_unk, shape, n_tok, n_vocab = json.loads(p.stdout.strip().splitlines()[-1])
    assert decoded == unicodedata.normalize("NFKC", sentence) and n_unk == 0
    assert shape[-1] == n_vocab == n_tok == ms["vocab"]["meta"]["vocab_size"]
