"""Builders for the pretrain tests: a small WordPiece tokenizer with KLUE's special ids, document shards made
from the Korean fixture text, and stage contexts built by hand (no runner needed)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from corpora.shards import Doc, doc_id, meta_json, shard_name, write_docs
from pipeline.recipe import DEFAULT_LANGUAGE
from pipeline.stage import StageContext, StageInput

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "pretrain" / "corpus_ko.txt"


def fixture_lines() -> list[str]:
    return [line for line in FIXTURE.read_text(encoding="utf-8").splitlines() if line.strip()]


def make_tokenizer(out: Path, vocab_size: int = 700) -> Path:
    """A WordPiece trained on the fixture text and saved as the vocab stage saves one (`train_wordpiece`: the
    same ids every time)."""
    from testkit.tiny_model import train_wordpiece

    train_wordpiece(fixture_lines(), vocab_size=vocab_size).save_pretrained(str(out))
    return out


def make_doc_shards(out: Path, n_shards: int = 2, repeat: int = 1, extra_docs: list[str] | None = None) -> Path:
    """Fixture lines (x `repeat`) as documents, split contiguously into `n_shards` shards, two sources."""
    texts = fixture_lines() * repeat + list(extra_docs or [])
    docs = [Doc(doc_id("fixture", "corpus_ko.txt", i), t, "news" if i % 3 else "wiki", meta_json({"line": i}))
            for i, t in enumerate(texts)]
    per = -(-len(docs) // n_shards)
    for s in range(n_shards):
        write_docs(out / shard_name(s), docs[s * per:(s + 1) * per])
    return out


def context(out_dir: Path, params, inputs: dict[str, tuple[Path, dict]], seed: int = 7,
            workers: int = 1, language: str = DEFAULT_LANGUAGE) -> StageContext:
    """A stage context over hand-made input folders, their manifests holding `meta` (and, as a vocab stage's
    does, the corpus `language` the model card reads)."""
    out_dir.mkdir(parents=True, exist_ok=True)

    def manifest(name: str, meta: dict) -> dict:
        return {"meta": meta, **({"params": {"language": language}} if name == "vocab" else {})}

    return StageContext(
        out_dir=out_dir, params=params,
        inputs={k: StageInput(k, p, manifest(k, meta)) for k, (p, meta) in inputs.items()},
        recipe=SimpleNamespace(seed=seed, sources=[]), workers=workers,
    )


def pretrain_key(tmp_path: Path, *overrides: str) -> tuple[str, dict]:
    """The pretrain stage's key and params in the plan of the embedded sample recipe with `overrides` (`--set`
    values): the runner's own keying, for the launcher tests (what is in the key and what is not)."""
    from pipeline.recipe import load_recipe
    from pipeline.runner import Runner
    from pipeline.sample import SAMPLE_DIR

    rec = load_recipe(SAMPLE_DIR / "recipe.yaml", list(overrides), until="pretrain")
    planned = Runner(rec, tmp_path / "w", until="pretrain").plan()[-1]
    assert planned.stage == "pretrain"
    return planned.key, planned.params


def dropout_config(encoded, out: Path, **kw: Any):
    """The resilience tests' run (a `TrainConfig`, for `pretrain.train.train`): a tiny RoBERTa with dropout on (a
    resume must restore the RNG state too) on `encoded` (`encode_fixture`'s), one thread, micro-batch 4 x
    grad_accum 2 of 32 tokens; `kw` sets the steps, cadences and test hooks."""
    from pretrain.config import TrainConfig

    enc, vocab, _ = encoded
    return TrainConfig(**{"encode_dir": str(enc), "tokenizer_dir": str(vocab / "tok"), "out_dir": str(out),
                          "seq_len": 32, "batch_size": 4, "grad_accum": 2, "warmup_steps": 2, "lr": 2e-3,
                          "log_every": 1, "eval_batches": 2, "threads": 1,
                          "model_overrides": {"hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1},
                          **kw})


def two_rank_params(launcher: str, **more: Any):
    """The launcher tests' run: 2 CPU ranks x 1 thread, fp32, 6 steps of a tiny model on the fixture shards,
    checkpoints at 3 and 6; `more`: the launcher's own fields (`slurm`, `ray`) or longer runs."""
    from pretrain.config import PretrainParams

    return PretrainParams(**{"seq_len": 32, "batch_size": 4, "num_processes": 2, "max_steps": 6, "warmup_steps": 2,
                             "lr": 3e-3, "log_every": 1, "eval_every": 3, "eval_batches": 2, "checkpoint_every": 3,
                             "threads": 1, "mixed_precision": "no", "launcher": launcher, **more})


def encode_fixture(root: Path, *, n_shards: int = 2, repeat: int = 1, eval_fraction: float = 0.1,
                   workers: int = 1, extra_docs: list[str] | None = None, vocab_dir: Path | None = None):
    """Tokenizer + doc shards + the encode stage run on them; returns (encode dir, vocab dir, result)."""
    from pretrain.stages.encode import EncodeParams, EncodeStage

    vocab_dir = vocab_dir or root / "vocab"
    if not (vocab_dir / "tok").is_dir():
        make_tokenizer(vocab_dir / "tok")
    docs = make_doc_shards(root / "docs", n_shards=n_shards, repeat=repeat, extra_docs=extra_docs)
    ctx = context(root / "encode", EncodeParams(eval_fraction=eval_fraction),
                  {"pii": (docs, {}), "vocab": (vocab_dir, {"tokenizer_dir": "tok"})}, workers=workers)
    result = EncodeStage().run(ctx)
    return ctx.out_dir, vocab_dir, result


def train_samples(encode_dir: Path | str, tok, seq_len: int):
    """The train split of an encode stage's output packed into `seq_len` samples, with `tok`'s special ids: what
    the trainer feeds on, built the one way the tests that look at batches need it."""
    from pretrain.data import PackedSamples, SpecialIds, TokenStream

    return PackedSamples(TokenStream(Path(encode_dir), "train"), seq_len, SpecialIds.from_tokenizer(tok))


def spy_steps_read(monkeypatch) -> list[int]:
    """The steps whose samples the loop reads from now on (a resume must read no step twice)."""
    import pretrain.data

    steps_read: list[int] = []
    real = pretrain.data.SampleOrder.indices

    def spy(self, step, micro, rank):
        steps_read.append(step)
        return real(self, step, micro, rank)

    monkeypatch.setattr(pretrain.data.SampleOrder, "indices", spy)
    return steps_read
