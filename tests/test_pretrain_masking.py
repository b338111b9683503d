"""Dynamic masking: 15 % selected, 80/10/10, specials untouched, whole eojeols with whole-word masking;
the context shuffle behind eval_order_gain."""

from __future__ import annotations

import pytest
import torch

from pretrain.data import IGNORE, SampleOrder, SpecialIds, mask_tokens, shuffle_context, step_generator
from testkit.pretrain import encode_fixture, train_samples

SPECIAL = SpecialIds(cls=0, sep=2, pad=1, mask=4, vocab_size=5000, all_special=(0, 1, 2, 3, 4))


def test_masking_statistics():
    g = torch.Generator().manual_seed(0)
    ids = torch.randint(5, 5000, (256, 128), generator=g)
    ids[:, 0], ids[:, -1], ids[:, 60] = 0, 2, 1
    masked, labels = mask_tokens(ids, SPECIAL, step_generator(1, 2, 3))
    sel = labels != IGNORE
    normal = ~torch.isin(ids, torch.tensor(SPECIAL.all_special))
    assert not sel[~normal].any(), "special tokens are never predicted"
    assert (labels[sel] == ids[sel]).all()
    rate = sel.sum().item() / normal.sum().item()
    assert 0.14 < rate < 0.16
    n = sel.sum().item()
    to_mask = (masked[sel] == SPECIAL.mask).sum().item() / n
    kept = (masked[sel] == ids[sel]).sum().item() / n
    other = 1 - to_mask - kept
    assert 0.78 < to_mask < 0.82 and 0.085 < kept < 0.115 and 0.085 < other < 0.115
    assert (masked[~sel] == ids[~sel]).all(), "unselected tokens are unchanged"


def test_masks_are_a_function_of_the_coordinates():
    ids = torch.randint(5, 5000, (8, 64), generator=torch.Generator().manual_seed(1))
    a = mask_tokens(ids, SPECIAL, step_generator(42, 10, 0, 1))
    b = mask_tokens(ids, SPECIAL, step_generator(42, 10, 0, 1))
    c = mask_tokens(ids, SPECIAL, step_generator(42, 11, 0, 1))
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[1], c[1])


@pytest.fixture(scope="module")
def packed(tmp_path_factory):
    from pretrain.encode import load_tokenizer

    root = tmp_path_factory.mktemp("mask")
    enc, vocab, _ = encode_fixture(root, n_shards=2, repeat=4, eval_fraction=0.0)
    tok = load_tokenizer(vocab / "tok")
    return train_samples(enc, tok, 64), tok


def test_whole_word_masking_masks_whole_eojeols(packed):
    samples, tok = packed
    batch = samples.batch(list(range(len(samples))))
    ids, words = batch["input_ids"], batch["word_starts"]
    _, labels = mask_tokens(ids, samples.special, step_generator(3), whole_word=True, word_starts=words)
    word_id = torch.cumsum(words.long(), dim=1)
    normal = ~torch.isin(ids, torch.tensor(samples.special.all_special))
    multi_token_masked, n_words, n_masked_words = 0, 0, 0
    for r in range(ids.shape[0]):
        for w in torch.unique(word_id[r][normal[r]]):
            pos = (word_id[r] == w) & normal[r]
            picked = labels[r][pos] != IGNORE
            assert picked.all() or not picked.any(), f"eojeol {int(w)} of sample {r} partly masked"
            n_words += 1
            n_masked_words += int(picked.all())
            multi_token_masked += int(picked.all() and pos.sum() > 1)
    assert multi_token_masked > 10, "the test must see masked eojeols of several tokens"
    assert 0.10 < n_masked_words / n_words < 0.20


def test_whole_word_needs_word_info():
    ids = torch.randint(5, 5000, (2, 16))
    with pytest.raises(ValueError, match="word_info"):
        mask_tokens(ids, SPECIAL, step_generator(0), whole_word=True)


def test_sample_order_covers_each_epoch_once_across_ranks():
    order = SampleOrder(n_samples=48, seed=5, micro_batch=4, grad_accum=2, world_size=3)  # 24 per step
    seen = [i for step in range(2) for micro in range(2) for rank in range(3)
            for i in order.indices(step, micro, rank)]
    assert sorted(seen) == list(range(48)), "one epoch = every sample exactly once"
    nxt = [i for micro in range(2) for rank in range(3) for i in order.indices(2, micro, rank)]
    assert len(set(nxt)) == 24 and nxt != seen[:24], "the next epoch is a fresh permutation"


def test_shuffle_context_moves_only_context_words():
    g = torch.Generator().manual_seed(3)
    ids = torch.randint(5, 5000, (8, 64), generator=g)
    ids[:, 0], ids[:, 40], ids[5, 50:] = 0, 2, 1  # [CLS], a document's [SEP] mid-row, padding at the end
    masked, labels = mask_tokens(ids, SPECIAL, step_generator(1, 0))
    out = shuffle_context(masked, labels, SPECIAL, step_generator(1, 1))
    predicted = labels != IGNORE
    special = torch.isin(masked, torch.tensor(SPECIAL.all_special))
    fixed = predicted | special
    assert (out[fixed] == masked[fixed]).all(), "predicted positions, specials and padding stay in place"
    for r in range(8):  # each row keeps its own context words (a permutation within the row)...
        assert sorted(out[r][~fixed[r]].tolist()) == sorted(masked[r][~fixed[r]].tolist())
    moved = (out != masked) & ~fixed
    assert moved.float().mean() > 0.8 * (~fixed).float().mean(), "...in a new order"
    again = shuffle_context(masked, labels, SPECIAL, step_generator(1, 1))
    assert torch.equal(out, again), "the shuffle is a function of the generator's seed"

