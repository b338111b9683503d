"""Count-based reference points for the MLM loss: unigram and bigram cross-entropy of an encode output.

Why: a loss curve alone does not say whether a model has learned anything beyond word frequencies. A bigram
table needs no optimisation, so its held-out cross-entropy is what a model that only looks at one neighbour can
reach; a model whose `eval_mask_loss` sits far above it is still in the MLM plateau
(docs/experiments/2026-11-30-plateau.md).

    python -m pretrain.ngram ENCODE_DIR [--max-tokens N] [--lam 0.9]

Counts come from the first `max_tokens` tokens of the train split (bounded memory); scores from the eval split.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from pretrain.data import TokenStream


def _bigram_ce(prev_tr: np.ndarray, cur_tr: np.ndarray, prev_ev: np.ndarray, cur_ev: np.ndarray,
               unigram: np.ndarray, vocab: int, lam: float) -> float:
    """Cross-entropy of cur given prev, P = lam * count(prev, cur) / count(prev) + (1 - lam) * P_unigram(cur)."""
    pairs, counts = np.unique(prev_tr * vocab + cur_tr, return_counts=True)
    context = np.bincount(prev_tr, minlength=vocab).astype(np.float64)
    query = prev_ev * vocab + cur_ev
    idx = np.minimum(np.searchsorted(pairs, query), len(pairs) - 1)
    seen = np.where(pairs[idx] == query, counts[idx], 0).astype(np.float64)
    p_bigram = np.divide(seen, context[prev_ev], out=np.zeros_like(seen), where=context[prev_ev] > 0)
    return float(-np.log(lam * p_bigram + (1 - lam) * unigram[cur_ev]).mean())


def ngram_baselines(encode_dir: Path, *, max_tokens: int = 50_000_000, lam: float = 0.9) -> dict[str, float]:
    """Held-out cross-entropy (nats/token) of the unigram and of left/right bigram tables."""
    train, held = TokenStream(encode_dir, "train"), TokenStream(encode_dir, "eval")
    if len(held) < 2:
        raise ValueError(f"{encode_dir}: the eval split holds {len(held)} tokens; encode with eval_fraction > 0")
    x = train.tokens(0, min(len(train), max_tokens)).astype(np.int64)
    y = held.tokens(0, len(held)).astype(np.int64)
    vocab = int(json.loads((Path(encode_dir) / "index.json").read_text())["vocab_size"])
    unigram = np.bincount(x, minlength=vocab).astype(np.float64) + 0.5  # add-half: unseen tokens stay finite
    unigram /= unigram.sum()
    return {
        "train_tokens": float(len(x)),
        "eval_tokens": float(len(y)),
        "unigram": float(-np.log(unigram[y]).mean()),
        "bigram_left": _bigram_ce(x[:-1], x[1:], y[:-1], y[1:], unigram, vocab, lam),
        "bigram_right": _bigram_ce(x[1:], x[:-1], y[1:], y[:-1], unigram, vocab, lam),
    }


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m pretrain.ngram", description=__doc__.splitlines()[0])
    ap.add_argument("encode_dir", type=Path)
    ap.add_argument("--max-tokens", type=int, default=50_000_000)
    ap.add_argument("--lam", type=float, default=0.9)
    args = ap.parse_args(argv)
    out = ngram_baselines(args.encode_dir, max_tokens=args.max_tokens, lam=args.lam)
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
