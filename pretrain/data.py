"""Packing token shards into fixed-length samples, the sample order, and dynamic MLM masking.

Packing (RoBERTa FULL-SENTENCES): the shards of a split are one stream of tokens (documents already end in
`[SEP]`); sample `i` is `[CLS] + stream[i*L : (i+1)*L] + [SEP]` with `L = seq_len - 2`. Every token of the
stream lands in exactly one sample, and only the last sample of a split can be shorter (and padded).

Order without replay: the samples a micro-batch reads are a pure function of (seed, step, global micro-batch),
via a seeded permutation per epoch; the global micro-batch `m = a * world + r` of micro-batch `a` on rank `r`
holds positions [m * b, (m + 1) * b) of the step's global batch. Resuming at step `s` therefore starts reading
exactly where the interrupted run would have read next, without iterating over what came before. Masking and
dropout draw their randomness from generators seeded by the same coordinates, so a resumed run masks identically
too.

The same coordinates whatever the world size: N ranks with `grad_accum` A and M ranks with A * N / M (the same
micro-batch b and global batch) cut the global batch into the same micro-batches, read the same samples and
mask and drop them out the same way, and average the same per-micro-batch losses: a checkpoint of N ranks
resumes on M with the same training up to the order of floating-point sums (`pretrain.checkpoint.resume`).
(On one process m = a, and the coordinates (seed, step, a, 0) are the ones single-process runs always used.)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

IGNORE = -100


class TokenStream:
    """One split of an encode output, read through memory maps as if it were one array."""

    def __init__(self, encode_dir: Path, split: str = "train"):
        self.dir = Path(encode_dir)
        index_path = self.dir / "index.json"
        if not index_path.is_file():
            raise FileNotFoundError(f"{index_path}: not an encode output (index.json missing)")
        self.index = json.loads(index_path.read_text(encoding="utf-8"))
        self.dtype = np.dtype(self.index["dtype"])
        self.word_info = bool(self.index["word_info"])
        shards = [s for s in self.index["splits"][split] if s["tokens"] > 0]
        self._tokens = [self._map(split, s["stem"], "tokens", self.dtype, s["tokens"]) for s in shards]
        self._words = ([self._map(split, s["stem"], "words", np.dtype(np.uint8), s["tokens"]) for s in shards]
                       if self.word_info else None)
        self.bounds = np.concatenate([[0], np.cumsum([s["tokens"] for s in shards])]).astype(np.int64)

    def _map(self, split: str, stem: str, kind: str, dtype: np.dtype, n: int) -> np.ndarray:
        path = self.dir / split / f"{stem}.{kind}"
        size = path.stat().st_size
        if size != n * dtype.itemsize:
            raise ValueError(f"{path}: {size} bytes, index.json says {n} tokens of {dtype.itemsize} bytes")
        return np.memmap(path, dtype=dtype, mode="r", shape=(n,))

    def __len__(self) -> int:
        return int(self.bounds[-1])

    def _slice(self, arrays: list[np.ndarray], start: int, end: int) -> np.ndarray:
        parts = []
        i = int(np.searchsorted(self.bounds, start, side="right")) - 1
        while start < end and i < len(arrays):
            lo = start - int(self.bounds[i])
            hi = min(end, int(self.bounds[i + 1])) - int(self.bounds[i])
            parts.append(np.asarray(arrays[i][lo:hi]))
            start = int(self.bounds[i]) + hi
            i += 1
        return np.concatenate(parts) if parts else np.zeros(0, dtype=arrays[0].dtype if arrays else np.int64)

    def tokens(self, start: int, end: int) -> np.ndarray:
        """Tokens [start, end) of the stream, across shard boundaries."""
        return self._slice(self._tokens, start, end)

    def words(self, start: int, end: int) -> np.ndarray | None:
        return None if self._words is None else self._slice(self._words, start, end)


@dataclass(frozen=True)
class SpecialIds:
    cls: int
    sep: int
    pad: int
    mask: int
    vocab_size: int
    all_special: tuple[int, ...]

    @classmethod
    def from_tokenizer(cls, tok) -> SpecialIds:
        return cls(tok.cls_token_id, tok.sep_token_id, tok.pad_token_id, tok.mask_token_id, len(tok),
                   tuple(sorted(set(tok.all_special_ids))))


class PackedSamples:
    """Fixed-length samples cut from a TokenStream; `len` counts the (possibly short) last sample."""

    def __init__(self, stream: TokenStream, seq_len: int, special: SpecialIds):
        if seq_len < 8:
            raise ValueError(f"seq_len {seq_len} is too short (need >= 8)")
        self.stream = stream
        self.seq_len = seq_len
        self.body = seq_len - 2
        self.special = special

    def __len__(self) -> int:
        return -(-len(self.stream) // self.body)

    def sample(self, i: int) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
        """(input ids, attention mask, eojeol-start flags or None) of sample `i`, padded to seq_len."""
        start = i * self.body
        body = self.stream.tokens(start, min(start + self.body, len(self.stream))).astype(np.int64)
        n = len(body) + 2
        ids = np.full(self.seq_len, self.special.pad, dtype=np.int64)
        ids[0], ids[1:n - 1], ids[n - 1] = self.special.cls, body, self.special.sep
        att = np.zeros(self.seq_len, dtype=np.int64)
        att[:n] = 1
        words = None
        w = self.stream.words(start, start + len(body))
        if w is not None:
            words = np.ones(self.seq_len, dtype=np.uint8)  # specials and padding are words of their own
            words[1:n - 1] = w
        return ids, att, words

    def batch(self, indices: list[int]) -> dict[str, torch.Tensor]:
        parts = [self.sample(i) for i in indices]
        out = {"input_ids": torch.from_numpy(np.stack([p[0] for p in parts])),
               "attention_mask": torch.from_numpy(np.stack([p[1] for p in parts]))}
        starts = [p[2] for p in parts if p[2] is not None]
        if parts and len(starts) == len(parts):
            out["word_starts"] = torch.from_numpy(np.stack(starts))
        return out


class SampleOrder:
    """Which sample each (step, micro-batch, rank, row) reads: a fresh seeded permutation per epoch."""

    def __init__(self, n_samples: int, seed: int, micro_batch: int, grad_accum: int, world_size: int):
        if n_samples == 0:
            raise ValueError("no training samples: the encode output holds no tokens")
        self.n = n_samples
        self.seed = seed
        self.micro_batch = micro_batch
        self.grad_accum = grad_accum
        self.world = world_size
        self._perms: dict[int, np.ndarray] = {}

    @property
    def per_step(self) -> int:
        return self.micro_batch * self.grad_accum * self.world

    def _perm(self, epoch: int) -> np.ndarray:
        if epoch not in self._perms:
            if len(self._perms) > 2:
                self._perms.clear()
            self._perms[epoch] = np.random.default_rng([self.seed, epoch]).permutation(self.n)
        return self._perms[epoch]

    def global_micro(self, micro: int, rank: int) -> int:
        """The index of micro-batch `micro` of rank `rank` in the step's global batch (module doc)."""
        return micro * self.world + rank

    def indices(self, step: int, micro: int, rank: int) -> list[int]:
        first = step * self.per_step + self.global_micro(micro, rank) * self.micro_batch
        out = []
        for g in range(first, first + self.micro_batch):
            out.append(int(self._perm(g // self.n)[g % self.n]))
        return out

    def epoch(self, step: int) -> float:
        return step * self.per_step / self.n


def coords_seed(seed: int, *coords: int) -> int:
    """A 63-bit seed determined by (seed, coords)."""
    return int(np.random.SeedSequence([seed, *coords]).generate_state(1, dtype=np.uint64)[0] >> 1)


def step_generator(seed: int, *coords: int) -> torch.Generator:
    """A CPU generator determined by (seed, coords): masking never depends on how many steps ran before."""
    g = torch.Generator()
    g.manual_seed(coords_seed(seed, *coords))
    return g


DROPOUT_STREAM = 1  # the coordinate that sets dropout's seed apart from the masks' (which use 0)


def seed_dropout(seed: int, step: int, micro: int) -> None:
    """Seed torch's global generators (dropout's) for global micro-batch `micro` of data step `step`: dropout
    is then the same whatever the world size, and after a resume, without restoring any generator state."""
    torch.manual_seed(coords_seed(seed, step, micro, DROPOUT_STREAM))


def mask_tokens(input_ids: torch.Tensor, special: SpecialIds, gen: torch.Generator, *,
                mlm_probability: float = 0.15, word_starts: torch.Tensor | None = None,
                whole_word: bool = False, replace_prob: float = 0.8, random_prob: float = 0.1,
                ) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT/RoBERTa dynamic masking: (masked inputs, labels with -100 where not predicted).

    Selects `mlm_probability` of the non-special tokens (or, with `whole_word`, of the eojeols: every token
    of a chosen eojeol is predicted), then replaces 80 % of the selected tokens with [MASK], 10 % with a
    random token, and keeps 10 %.
    """
    ids = input_ids.clone()
    maskable = ~torch.isin(ids, torch.tensor(special.all_special, dtype=ids.dtype))
    if whole_word:
        if word_starts is None:
            raise ValueError("whole-word masking needs eojeol starts: encode with word_info: true")
        word_id = torch.cumsum(word_starts.to(torch.int64), dim=1)  # per row, 1-based word number
        n_words = int(word_id.max()) + 1
        pick_word = torch.rand((ids.shape[0], n_words), generator=gen) < mlm_probability
        selected = torch.gather(pick_word, 1, word_id) & maskable
    else:
        selected = (torch.rand(ids.shape, generator=gen) < mlm_probability) & maskable
    labels = torch.where(selected, input_ids, torch.full_like(input_ids, IGNORE))
    u = torch.rand(ids.shape, generator=gen)
    to_mask = selected & (u < replace_prob)
    to_random = selected & (u >= replace_prob) & (u < replace_prob + random_prob)
    ids[to_mask] = special.mask
    random_words = torch.randint(special.vocab_size, ids.shape, generator=gen, dtype=ids.dtype)
    ids[to_random] = random_words[to_random]
    return ids, labels


def shuffle_context(input_ids: torch.Tensor, labels: torch.Tensor, special: SpecialIds,
                    gen: torch.Generator) -> torch.Tensor:
    """`input_ids` with the context words of each row put in a random order: the predicted positions,
    special tokens and padding stay where they are, every other token moves to another such slot.

    Why: a model stuck in the MLM plateau predicts from the bag of context words and ignores their order.
    The loss on shuffled context minus the loss on intact context (`eval_order_gain`) measures how much of
    what the model predicts comes from word order; it stays at ~0 until the model leaves the plateau.
    """
    out = input_ids.clone()
    movable = (labels == IGNORE) & ~torch.isin(input_ids, torch.tensor(special.all_special, dtype=input_ids.dtype))
    for r in range(input_ids.shape[0]):
        slots = movable[r].nonzero().squeeze(1)
        out[r, slots] = input_ids[r, slots[torch.randperm(len(slots), generator=gen)]]
    return out
