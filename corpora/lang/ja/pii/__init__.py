"""The Japanese PII pack: `patterns.py` (phone and fax numbers, postal codes, My Number, corporate numbers,
addresses), `names.py` (MeCab + UniDic person names), and the language-neutral recognizers of `common.py`
(e-mail, URL, IP, card numbers) with Japanese context words. `JAPANESE` is the `ja` row of
`Language.pii.pack` of `corpora.lang.ja`; the types are its `PII_TYPES`.

Needs the `ja` extra (unidic-lite) for names; importing this module does not load MeCab.
"""

from __future__ import annotations

import re

from presidio_analyzer import EntityRecognizer

from corpora.lang.ja.pii.names import JaPersonRecognizer
from corpora.lang.ja.pii.patterns import ADDRESS_TRIGGER, LANG, build_pattern_recognizers, fold
from corpora.pii.common import PiiLanguage, card_recognizer, email_recognizer, ip_recognizers, url_recognizer

# Kana or kanji: where the name finder runs (a line of Latin letters and digits holds no UniDic 人名).
KANA_KANJI = re.compile("[\u3041-\u3096\u30a1-\u30fa\u3400-\u4dbf\u4e00-\u9fff]")


def build_recognizers() -> list[EntityRecognizer]:
    """Every Japanese recognizer, in a fixed order (ties: resolve.py): Japan's own patterns, the shared ones with
    Japanese context words, then names."""
    shared = [
        card_recognizer(LANG, ["カード", "クレジット", "クレカ", "決済", "card"], fold=fold),
        email_recognizer(LANG, ["メール", "mail", "アドレス"], fold=fold),
        url_recognizer(LANG, ["ホームページ", "サイト", "URL", "リンク", "HP"], fold=fold),
        *ip_recognizers(LANG, ["IP", "アドレス", "接続"], ["IP", "IPv6"], fold=fold),
    ]
    return [*build_pattern_recognizers(), *shared, JaPersonRecognizer()]


JAPANESE = PiiLanguage(code=LANG, build_recognizers=build_recognizers, address_trigger=ADDRESS_TRIGGER,
                       script=KANA_KANJI, fold=fold)
