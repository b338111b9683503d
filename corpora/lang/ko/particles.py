"""Korean particle agreement: which final sound a word ends in, and which final sounds the particle after it allows.

Several Korean particles have two forms, chosen by the last sound of the word they attach to (표준국어대사전,
National Institute of Korean Language, the entries of each particle; 표준 국어 문법론, ch. on 조사):

- 이/가, 은/는, 을/를, 과/와, 아/야, 이랑/랑, 이라고/라고 (and every 이- form: 이나, 이다, 이며, ...): the first form
  "받침 있는 체언 뒤에" (after a final consonant, ㄹ included), the second "받침 없는 체언 뒤에" (after a vowel).
- 으로/로: 으로 "'ㄹ'을 제외한 받침 있는 체언 뒤에" (after a final consonant other than ㄹ), 로 "받침 없는 체언이나
  'ㄹ' 받침으로 끝나는 체언 뒤에" (after a vowel or ㄹ). So ㄹ is a class of its own.

Hence three final-sound classes: NONE (a vowel), RIEUL (ㄹ), OTHER (any other final consonant). A particle's
agreement is a fact about sound, so a word written in digits or Latin letters takes the particle of how it is read:
digits digit by digit in Sino-Korean (`010-1234-5678로` is read ...오륙칠팔; for the last digit this agrees with the
full numeral reading too: 3 삼 and 23 이십삼 both end in ㅁ, and a trailing 0 read 영 or as 십/백/천/만 always ends in
a consonant other than ㄹ), Latin letters by their Korean names (엘, 알: ㄹ; 엠, 엔: another consonant; 에이, 비,
씨, ... 엑스, 제트: a vowel; `ID를`, `URL을`). Anything else (punctuation, a space, a closing bracket) sets no
constraint: a particle does not attach there directly.
"""

from __future__ import annotations

from enum import Enum


class FinalClass(str, Enum):
    """The final sound of a word as a particle sees it."""

    NONE = "none"  # no final consonant: 가, 는, 를, 와, 로 follow
    RIEUL = "rieul"  # final ㄹ: 이, 은, 을, 과 follow, but 로, not 으로
    OTHER = "other"  # any other final consonant: 이, 은, 을, 과, 으로 follow


NONE, RIEUL, OTHER = FinalClass.NONE, FinalClass.RIEUL, FinalClass.OTHER
AFTER_CONSONANT = frozenset({RIEUL, OTHER})

HANGUL_FIRST, HANGUL_LAST = 0xAC00, 0xD7A3  # the precomposed syllables 가..힣
JONG_COUNT, JONG_RIEUL = 28, 8  # Unicode 3.12: final index = (code - 0xAC00) % 28; 0: none, 8: ㄹ
# Sino-Korean digit names: 영 일 이 삼 사 오 육 칠 팔 구
DIGIT_CLASS = dict(zip("0123456789", (OTHER, RIEUL, NONE, OTHER, NONE, NONE, OTHER, RIEUL, RIEUL, NONE),
                       strict=True))
# Letter names: 엘 알 end in ㄹ, 엠 엔 in another consonant, every other name (에이, 비, 씨, ... 에프, 에스, 엑스) in a vowel
LETTER_CLASS = {**{c: NONE for c in "ABCDEFGHIJKLOPQSTUVWXYZ"}, "L": RIEUL, "R": RIEUL, "M": OTHER, "N": OTHER}
DIGITS_OF_CLASS = {k: "".join(d for d, c in DIGIT_CLASS.items() if c is k) for k in FinalClass}

# First syllables of an attached particle -> the classes it may follow. The forms after a consonant (이 also
# starts 이랑, 이나, 이다, 이라고, ...), then the forms after a vowel; 으로 and 로 are the ㄹ-sensitive pair.
AFTER_CONSONANT_SYLLABLES = frozenset("이은을과아")
AFTER_VOWEL_SYLLABLES = frozenset("가는를와야랑")
AFTER_VOWEL_RA = ("라고", "라는")  # quotative 라고 / 이라고, 라는 / 이라는; a bare 라 is too often something else


def char_class(c: str) -> FinalClass | None:
    """The final-sound class of one character, or None when it sets no constraint."""
    code = ord(c)
    if HANGUL_FIRST <= code <= HANGUL_LAST:
        jong = (code - HANGUL_FIRST) % JONG_COUNT
        return NONE if jong == 0 else RIEUL if jong == JONG_RIEUL else OTHER
    if c.isascii():
        return DIGIT_CLASS.get(c) or LETTER_CLASS.get(c.upper())
    return None


def final_class(s: str) -> FinalClass | None:
    """The class of the last character of `s` (a particle attaches to the end); None for an empty string or
    one that ends in anything but a Hangul syllable, an ASCII digit or a Latin letter."""
    return char_class(s[-1]) if s else None


def particle_classes(after: str) -> frozenset[FinalClass] | None:
    """The classes the particle at the start of `after` (the text right after a word) may follow, or None when
    no batchim-dependent particle starts there (a space, punctuation, 의/에/도/만 ...). 으로 is read before 으 and
    로; a noun attached without a space that starts like a particle (`과장`) reads as one, which only narrows a
    choice the particle-less text left free."""
    if after.startswith("으로"):
        return frozenset({OTHER})
    if after.startswith("로"):
        return frozenset({NONE, RIEUL})
    if after[:1] in AFTER_CONSONANT_SYLLABLES:
        return AFTER_CONSONANT
    if after[:1] in AFTER_VOWEL_SYLLABLES or after.startswith(AFTER_VOWEL_RA):
        return frozenset({NONE})
    return None


def wanted_class(original: str, after: str) -> FinalClass | None:
    """The class a replacement of `original` must end in: the original's own, unless the particle right after
    it does not allow that (an ungrammatical source, or a span that ends too early or too late); then the
    particle wins, with NONE for the forms after a vowel (가, 로) and OTHER for those after a consonant (이,
    으로). None: no constraint (the original ends in punctuation and no particle follows)."""
    own = final_class(original)
    allowed = particle_classes(after)
    if allowed is None or own in allowed:
        return own
    return NONE if NONE in allowed else OTHER if OTHER in allowed else RIEUL
