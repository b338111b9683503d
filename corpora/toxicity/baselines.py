"""The two baselines the classifier is reported against (`corpora.toxicity.evaluate`).

majority: the most frequent label of the training split, for every comment (BEEP! train: `none`).

keywords: substring match of a short stem list: a comment with a group slur is `hate`, else one with a profanity
or insult is `offensive`, else `none`. Every stem below is an entry of the Korean list of LDNOOBW v2
(github.com/LDNOOBWV2/List-of-Dirty-Naughty-Obscene-and-Otherwise-Bad-Words_V2, `data/ko.txt`, commit d13c310),
the successor of the Shutterstock list that C4 filters pages with; the full list is not used, because it
is a game-chat filter (it holds 운영자, 테스트, 경상도, politicians' names) and would flag most news
text. The split into slurs and profanity is ours. Substring matching is what such filters do, with their
known false positives (시발점, 새끼 고양이, 홍어 the fish); a baseline, not a filter to use.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Sequence

# slurs for a group (gender, region, nationality, race, generation): BEEP!'s `hate` is toxic speech at a group
HATE_STEMS = ("김치녀", "한남충", "스시녀", "보슬아치", "씹선비", "메갈", "메퇘지", "일베충", "전라디언",
              "경상디언", "홍어", "짱깨", "쪽바리", "뙤놈", "검둥이", "깜둥이", "통베충", "근친충")
# profanity and personal insults: BEEP!'s `offensive`
OFFENSIVE_STEMS = ("씨발", "시발", "씨팔", "시팔", "씨바", "개새끼", "새끼", "병신", "븅신", "빙시", "ㅄ",
                   "지랄", "좆", "좃", "존나", "미친", "또라이", "등신", "염병", "쓰레기", "엿먹어",
                   "호로새끼", "니미", "바보", "얼간이", "저능아", "닭대가리", "뒈져", "디져", "입닥쳐")


def keyword_label(text: str) -> str:
    t = unicodedata.normalize("NFC", text).lower()
    if any(s in t for s in HATE_STEMS):
        return "hate"
    if any(s in t for s in OFFENSIVE_STEMS):
        return "offensive"
    return "none"


def keyword_predict(texts: Sequence[str]) -> list[str]:
    return [keyword_label(t) for t in texts]


def majority_label(train_labels: Sequence[str]) -> str:
    """The most frequent training label (the first in sorted order on a tie, for determinism)."""
    counts = Counter(train_labels)
    return min(counts, key=lambda lab: (-counts[lab], lab))


def majority_predict(train_labels: Sequence[str], n: int) -> list[str]:
    return [majority_label(train_labels)] * n
