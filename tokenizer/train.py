"""Subword vocabulary training (HF `tokenizers`) on pre-tokenized units, streamed.

How morphemes become a vocabulary that a MeCab-free tokenizer can use. KLUE (arXiv 2105.09680, sec. 3.2)
pre-tokenizes the corpus with MeCab-ko and trains WordPiece on the morphemes, then ships a plain
BertTokenizer that never sees MeCab; monologg/KoELECTRA (v3, "Mecab + Wordpiece") does the same. If every
morpheme is a training *word*, non-initial morphemes such as 에서 are learned in their word-initial form, but at
inference `가방에서` is one word for the greedy WordPiece matcher, which needs the continuation `##에서`. So here
a morpheme that continues a word (`##에서` in the pre-tokenized text) is trained as a continuation: it is fed
to the trainer with a private-use sentinel `\\ue000` in front (`\\ue000에서`), which the trainer treats as a
word whose pieces after the first are `##`-continuations; every learned token `\\ue000x` is then renamed
`##x` (the sentinel alone and duplicates are dropped; `train_vocab` asks the trainer for that many more
tokens, so the result has the requested size or, rarely, a little less; the stage reports the real size). For BPE the merges are renamed the same way. Units marked `@@`
(a new word inside an eojeol, e.g. after punctuation) are fed as plain words, and reserved tokens
(special and PII placeholder tokens) are removed from the training text: they are whole tokens in the exported
tokenizer, never learned from. The rewrite is a few `str.replace` calls per document (`training_text`; a
`tokenizers` Replace normalizer does the same but tracks alignments and was slower); the text is streamed,
never held.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from tokenizer.mecab import CONT, GLUE
from tokenizer.mecab import SPECIAL_TOKENS as _SPECIAL

SENTINEL = "\ue000"
SPECIAL_TOKENS = list(_SPECIAL)  # ids 0..4, KLUE's order (klue/roberta)


METASPACE = "\u2581"  # ▁: a word that followed a space (or began the text), as SentencePiece writes it
BYTE_TOKENS = [f"<0x{i:02X}>" for i in range(256)]  # BPE byte fallback: any character, no [UNK]


@dataclass
class TrainedVocab:
    algorithm: str  # "wordpiece" | "bpe"
    tokens: list[str]  # id order: special tokens, placeholders, (metaspace: byte tokens,) learned tokens
    merges: list[tuple[str, str]] | None  # BPE only, in rank order
    n_reserved: int
    # "bert": BertPreTokenizer words, `##` continuations (a language with spaces: Korean). "metaspace": no
    # word split but at spaces (marked ▁), byte fallback (a language without spaces: Japanese); see
    # `metaspace_rewriter`
    pre_tokenizer: str = "bert"
    unicode_normalization: str | None = None  # applied by the exported tokenizer first ("NFKC"), or nothing

    @property
    def vocab(self) -> dict[str, int]:
        return {t: i for i, t in enumerate(self.tokens)}


def reserved_tokens(placeholders: Iterable[str] = ()) -> list[str]:
    out = list(SPECIAL_TOKENS)
    for p in placeholders:
        if p not in out:
            out.append(p)
    return out


def training_text(units: str, reserved: Iterable[str]) -> str:
    """Pre-tokenized units -> the trainer's words (module doc). Units are single-space separated and a line
    never starts with a marked unit (tokenizer/mecab.py), so " ##" / " @@" only ever match markers; reserved
    tokens are always units of their own."""
    return training_rewriter(reserved)(units)


def training_rewriter(reserved: Iterable[str]) -> Callable[[str], str]:
    """`training_text` with `reserved` fixed, for streams: whether a text can hold a reserved token is then
    one substring test per text (all of them start with `[` in practice), not a loop over the tokens."""
    remove = reserved_remover(reserved)
    cont, glue, sentinel = f" {CONT}", f" {GLUE}", f" {SENTINEL}"

    def rewrite(units: str) -> str:
        return remove(units.replace(cont, sentinel).replace(glue, " "))

    return rewrite


def reserved_remover(reserved: Iterable[str], mark: str = "") -> Callable[[str], str]:
    """Replaces each reserved token (first with `mark` in front, when given) by a space. When all of them
    start with `[` (in practice always), a text without `[` is returned as it is after one substring test."""
    reserved = list(reserved)
    bracketed = all(t[:1] == "[" for t in reserved)

    def remove(text: str) -> str:
        if not bracketed or "[" in text:
            for t in reserved:
                if mark:
                    text = text.replace(mark + t, " ")
                text = text.replace(t, " ")
        return text

    return remove


def metaspace_rewriter(reserved: Iterable[str]) -> Callable[[str], str]:
    """Pre-tokenized units -> the trainer's words for a Metaspace tokenizer (a language without spaces).

    Every morpheme is a training word, so no learned token crosses a morpheme boundary, while the exported
    tokenizer needs no analyzer: it runs BPE over each space-free run of raw text, and the merges, learned
    inside morphemes, rebuild morpheme-like pieces. The first unit of a chunk gets ▁, as Metaspace marks what
    follows a space; continuation markers go; reserved tokens are removed, and the unit after one keeps no ▁
    (at inference the added-token split leaves the rest of the chunk without one). A few `str.replace` calls
    per document, as `training_rewriter`."""
    remove = reserved_remover(reserved, mark=METASPACE)
    mark, cont, glue = f" {METASPACE}", f" {METASPACE}{CONT}", f" {METASPACE}{GLUE}"

    def rewrite(units: str) -> str:
        return remove((" " + units.replace("\n", " ")).replace(" ", mark).replace(cont, " ").replace(glue, " "))

    return rewrite


@dataclass
class CharStats:
    """Character counts of the training text (to choose the alphabet) and of the characters right after the
    sentinel (to size the request, see `train_vocab`). Additive over shards; JSON-able.

    Counting is batched through numpy (`bincount` over UTF-32 code points): `Counter.update(str)` costs a
    dict operation per character, which was a fifth of the pretokenize stage's time."""

    chars: Counter
    followers: Counter

    @classmethod
    def of(cls, texts: Iterable[str]) -> CharStats:
        acc = CharCounter()
        for t in texts:
            acc.add(t)
        return acc.result()

    def merge(self, other: CharStats) -> None:
        self.chars.update(other.chars)
        self.followers.update(other.followers)

    def to_json(self) -> dict:
        return {"chars": dict(sorted(self.chars.items())), "followers": dict(sorted(self.followers.items()))}

    @classmethod
    def from_json(cls, d: dict) -> CharStats:
        return cls(Counter(d["chars"]), Counter(d["followers"]))


class CharCounter:
    """Accumulates `CharStats` over training texts, a batch of about `batch_chars` characters at a time."""

    def __init__(self, batch_chars: int = 1 << 20):
        self._buf: list[str] = []
        self._n = 0
        self._batch = batch_chars
        self._chars = None  # numpy int64 counts indexed by code point, grown on demand
        self._follow = None

    def add(self, training: str) -> None:
        self._buf.append(training)
        self._buf.append(" ")  # so a text's last character is never taken for the next one's follower
        self._n += len(training) + 1
        if self._n >= self._batch:
            self._flush()

    @staticmethod
    def _accumulate(acc, values):
        import numpy as np

        b = np.bincount(values)
        if acc is None or len(acc) < len(b):
            grown = np.zeros(len(b), dtype=np.int64)
            if acc is not None:
                grown[: len(acc)] = acc
            acc = grown
        acc[: len(b)] += b
        return acc

    def _flush(self) -> None:
        import numpy as np

        if not self._buf:
            return
        cps = np.frombuffer("".join(self._buf).encode("utf-32-le"), dtype=np.uint32)
        self._buf, self._n = [], 0
        self._chars = self._accumulate(self._chars, cps)
        self._follow = self._accumulate(self._follow, cps[np.flatnonzero(cps[:-1] == ord(SENTINEL)) + 1])

    def result(self) -> CharStats:
        import numpy as np

        self._flush()

        def to_counter(acc) -> Counter:
            if acc is None:
                return Counter()
            nz = np.flatnonzero(acc)
            return Counter({chr(k): v for k, v in zip(nz.tolist(), acc[nz].tolist(), strict=True) if k != 32})

        return CharStats(to_counter(self._chars), to_counter(self._follow))


def training_tokenizer(algorithm: str):
    """The `tokenizers.Tokenizer` the trainer fills: words are the whitespace-separated training units."""
    from tokenizers import Tokenizer, models, pre_tokenizers

    if algorithm == "wordpiece":
        tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    elif algorithm == "bpe":
        tok = Tokenizer(models.BPE(unk_token="[UNK]", continuing_subword_prefix=CONT))
    else:
        raise ValueError(f"unknown algorithm {algorithm!r} (expected 'wordpiece' or 'bpe')")
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    return tok


def train_vocab(texts: Callable[[], Iterable[str]] | Sequence[str], *, algorithm: str = "wordpiece",
                vocab_size: int = 32000, min_frequency: int = 2, limit_alphabet: int | None = 6000,
                placeholders: Iterable[str] = (), stats: CharStats | None = None, show_progress: bool = False,
                length: int | None = None, pre_tokenizer: str = "bert",
                unicode_normalization: str | None = None) -> TrainedVocab:
    """Train on pre-tokenized documents (`texts`: a sequence, or a function returning a fresh iterator).

    Determinism (tokenizers 0.23, huggingface/tokenizers#1794): the trainer gives `##c` tokens ids in hash-map
    order and breaks count ties by id, and it cuts `limit_alphabet` with an unstable sort, so the same input
    can give different vocabularies. So we choose the alphabet ourselves from character counts (count, then
    code point), hand it over as `initial_alphabet` (always kept) with `limit_alphabet` = its size, and
    register every `##c` up front, in code-point order, as trainer special tokens: every id is fixed before
    the trainer's hash maps are involved. The counts come from `stats` (the pretokenize stage writes them)
    or, without it, from an extra pass over `texts`.

    Size: each merge (sentinel, ##c) makes a token that is renamed to the existing `##c`, so the trainer is
    asked for that many more tokens and the result is cut back to `vocab_size` (dropping the latest merges).
    """
    from tokenizers import trainers

    if isinstance(texts, Iterator):
        raise TypeError("train_vocab may read the texts twice: pass a sequence or a function returning an iterator")
    stream = texts if callable(texts) else (lambda: iter(texts))
    reserved = reserved_tokens(placeholders)
    if pre_tokenizer == "metaspace":
        return _train_metaspace(stream, algorithm, vocab_size, min_frequency, limit_alphabet, reserved, stats,
                                show_progress, length, unicode_normalization)
    if pre_tokenizer != "bert":
        raise ValueError(f"unknown pre_tokenizer {pre_tokenizer!r} (expected 'bert' or 'metaspace')")
    if stats is None:
        stats = CharStats.of(map(training_rewriter(reserved), stream()))
    ranked = sorted((c for c in stats.chars if not c.isspace()), key=lambda c: (-stats.chars[c], c))
    if limit_alphabet is not None:
        ranked = ranked[: limit_alphabet + 1]  # + the sentinel, always among the most frequent when present
    alphabet = sorted(ranked)
    extra = sum(1 for n in stats.followers.values() if n >= min_frequency)
    continuations = [CONT + c for c in alphabet if c != SENTINEL and CONT + c not in reserved]
    chars = sum(c != SENTINEL for c in alphabet)  # the sentinel is renamed away (`_rename`)
    floor = len(reserved) + len(continuations) + chars
    if vocab_size < floor:  # `_truncate` would cut characters of the alphabet: text would tokenize as [UNK]
        raise ValueError(f"vocab_size {vocab_size:,} cannot hold this alphabet: {len(reserved)} reserved tokens, "
                         f"{chars:,} characters and {len(continuations):,} ## continuations make "
                         f"{floor:,} tokens before any merge; raise vocab_size or lower limit_alphabet")
    kw: dict[str, Any] = dict(vocab_size=vocab_size + extra, min_frequency=min_frequency,
                              special_tokens=reserved + continuations, initial_alphabet=alphabet,
                              limit_alphabet=len(alphabet), show_progress=show_progress,
                              continuing_subword_prefix=CONT)
    trainer = trainers.WordPieceTrainer(**kw) if algorithm == "wordpiece" else trainers.BpeTrainer(**kw)
    tok = training_tokenizer(algorithm)
    tok.train_from_iterator(map(training_rewriter(reserved), stream()), trainer=trainer, length=length)
    return _truncate(_rename(tok, algorithm, reserved), vocab_size)


def _train_metaspace(stream: Callable[[], Iterable[str]], algorithm: str, vocab_size: int, min_frequency: int,
                     limit_alphabet: int | None, reserved: list[str], stats: CharStats | None,
                     show_progress: bool, length: int | None, unicode_normalization: str | None) -> TrainedVocab:
    """BPE over morphemes with ▁ (`metaspace_rewriter`), plus the 256 byte tokens of byte fallback. The same
    determinism measures as `train_vocab`: our own alphabet (count, then code point), all of it kept."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    if algorithm != "bpe":
        raise ValueError(f"a Metaspace tokenizer (a language without spaces) is trained with algorithm 'bpe', not "
                         f"{algorithm!r}: WordPiece's words are spaced words, a whole line here")
    rewrite = metaspace_rewriter(reserved)
    if stats is None:
        stats = CharStats.of(map(rewrite, stream()))
    ranked = sorted((c for c in stats.chars if not c.isspace()), key=lambda c: (-stats.chars[c], c))
    alphabet = sorted(ranked[:limit_alphabet] if limit_alphabet is not None else ranked)
    fixed = reserved + [b for b in BYTE_TOKENS if b not in reserved]
    trainer = trainers.BpeTrainer(vocab_size=max(vocab_size - len(BYTE_TOKENS), len(reserved)),
                                  min_frequency=min_frequency, special_tokens=reserved, initial_alphabet=alphabet,
                                  limit_alphabet=len(alphabet), show_progress=show_progress)
    tok = Tokenizer(models.BPE(unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.train_from_iterator(map(rewrite, stream()), trainer=trainer, length=length)
    model = json.loads(tok.to_str())["model"]
    taken = set(fixed)
    learned = [t for t, _ in sorted(model["vocab"].items(), key=lambda kv: kv[1]) if t not in taken]
    merges = [tuple(m) if isinstance(m, list) else tuple(m.split(" ", 1)) for m in model["merges"]]
    tv = TrainedVocab("bpe", fixed + learned, merges, len(reserved), "metaspace", unicode_normalization)
    return _truncate(tv, vocab_size)


def _truncate(tv: TrainedVocab, size: int) -> TrainedVocab:
    """Keep the first `size` tokens (learned ones are in merge order, so the cut drops the latest merges)."""
    if len(tv.tokens) <= size:
        return tv
    tokens = tv.tokens[:size]
    merges = tv.merges
    if merges is not None:
        kept = set(tokens)
        cut = len(CONT) if tv.pre_tokenizer == "bert" else 0  # `##` on the right part of a bert merge
        merges = [(a, b) for a, b in merges if a in kept and b in kept and a + b[cut:] in kept]
    return TrainedVocab(tv.algorithm, tokens, merges, tv.n_reserved, tv.pre_tokenizer, tv.unicode_normalization)


def _unsentinel(token: str) -> str:
    return CONT + token[1:] if token.startswith(SENTINEL) else token


def _rename(tok, algorithm: str, reserved: list[str]) -> TrainedVocab:
    learned = [t for t, _ in sorted(tok.get_vocab().items(), key=lambda kv: kv[1])]
    tokens = list(reserved)
    seen = set(tokens)
    for t in learned:
        t = _unsentinel(t)
        if t == CONT or t in seen:  # the bare sentinel, or a continuation also learned inside a morpheme
            continue
        seen.add(t)
        tokens.append(t)
    merges = None
    if algorithm == "bpe":
        model = json.loads(tok.to_str())["model"]
        merges, seen_m = [], set()
        for m in model["merges"]:
            a, b = m if isinstance(m, list) else m.split(" ", 1)
            if a == SENTINEL:  # (sentinel, ##x) -> ##x: the continuation char itself, no merge needed
                continue
            pair = (_unsentinel(a), b)
            if pair not in seen_m:
                seen_m.add(pair)
                merges.append(pair)
    return TrainedVocab(algorithm, tokens, merges, len(reserved))


def iter_texts(paths: Iterable, column: str = "text") -> Iterator[str]:
    """Stream the text column of Parquet shards, a record batch at a time."""
    import pyarrow.parquet as pq

    for p in paths:
        for rb in pq.ParquetFile(p).iter_batches(batch_size=1024, columns=[column]):
            yield from rb.column(0).to_pylist()
