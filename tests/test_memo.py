"""pipeline.memo.Memo: fn's answers, computed once per kept key, at most maxsize kept, the older half dropped."""

from __future__ import annotations

from pipeline.memo import Memo


def test_memo_answers_as_its_function_and_computes_each_kept_key_once():
    calls: list[int] = []

    def square(x: int) -> int:
        calls.append(x)
        return x * x

    memo: Memo[int, int] = Memo(square, 4)
    assert list(map(memo.__getitem__, [3, 3, 2, 3])) == [9, 9, 4, 9]
    assert calls == [3, 2]


def test_memo_keeps_at_most_maxsize_dropping_the_older_half():
    memo: Memo[int, int] = Memo(lambda x: -x, 4)
    for x in range(4):
        memo[x]
    assert list(memo) == [0, 1, 2, 3]
    assert memo[4] == -4
    assert list(memo) == [2, 3, 4]  # full at 4: the older two dropped, then 4 kept
    assert all(len(memo) <= 4 for _ in map(memo.__getitem__, range(100)))


def test_memo_answers_but_does_not_keep_what_keep_refuses_or_with_maxsize_zero():
    memo: Memo[str, int] = Memo(len, 10, keep=lambda s: len(s) <= 2)
    assert memo["abc"] == 3 and memo["ab"] == 2
    assert list(memo) == ["ab"]
    none: Memo[str, int] = Memo(len, 0)
    assert none["abc"] == 3 and len(none) == 0
