"""Text normalization applied before every filter: one Unicode form, no control junk, tidy whitespace.

Why here and not in the readers: filters, dedup hashes and decontamination n-grams must all see the same
characters, and the form is a recipe choice (NFC by default, NFKC to match KLUE-NER v1.1, which is NFKC).
Everything is str.translate / compiled regex (C speed); no per-character Python loop.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

# Terminal escape sequences: CSI (ESC [ ... final, or the 8-bit CSI U+009B), OSC (ESC ] ... BEL or ST),
# and two-character ESC sequences.
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[@-Z\\-_]"
)
_CRLF = re.compile(r"\r\n?")
_SPACES = re.compile(r"[ \t]+")
_LINE_EDGES = re.compile(r" ?\n ?")

# Deleted: C0 controls except TAB and LF (CR is handled before), DEL, C1 controls, and invisible format
# characters that only break matching (zero-width space, word joiner, BOM, soft hyphen, ZWNJ, bidi marks).
# ZWJ (U+200D) is kept: it joins emoji sequences.
_DELETE = (
    [c for c in range(0x00, 0x20) if c not in (0x09, 0x0A)]
    + list(range(0x7F, 0xA0))
    + [0x00AD, 0x200B, 0x200C, 0x200E, 0x200F, 0x2060, 0xFEFF, 0x202A, 0x202B, 0x202C, 0x202D, 0x202E]
)
# Mapped to a plain space: no-break, ideographic and typographic spaces, line/paragraph separators are newlines.
_TO_SPACE = [0x00A0, 0x1680, 0x3000, 0x202F, 0x205F] + list(range(0x2000, 0x200B))
_TABLE = {c: None for c in _DELETE} | {c: " " for c in _TO_SPACE} | {0x2028: "\n", 0x2029: "\n", 0x0B: "\n",
                                                                    0x0C: "\n", 0x85: "\n"}
# Any character `_TABLE` changes: a search for one is ~10x faster than `str.translate` with a dict (a lookup per
# character), and most texts hold none.
_IN_TABLE = re.compile("[" + "".join(re.escape(chr(c)) for c in sorted(_TABLE)) + "]")


@dataclass(frozen=True)
class Normalizer:
    """Normalize one document's text. `max_blank_lines`: consecutive empty lines kept (paragraph breaks)."""

    form: Literal["NFC", "NFKC", "none"] = "NFC"
    max_blank_lines: int = 1

    def __call__(self, text: str) -> str:
        if "\x1b" in text or "\x9b" in text or "\x9d" in text:
            text = _ANSI.sub("", text)
        if "\r" in text:
            text = _CRLF.sub("\n", text)
        if _IN_TABLE.search(text) is not None:
            text = text.translate(_TABLE)
        if self.form != "none" and not unicodedata.is_normalized(self.form, text):
            text = unicodedata.normalize(self.form, text)
            if self.form == "NFKC":  # NFKC can turn compatibility spaces into plain ones; tidy them below
                text = text.translate(_TABLE)
        # cheap substring tests first: most texts need none of these substitutions
        if "  " in text or "\t" in text:
            text = _SPACES.sub(" ", text)
        if " \n" in text or "\n " in text:
            text = _LINE_EDGES.sub("\n", text)
        k = self.max_blank_lines
        if "\n" * (k + 2) in text:
            text = re.sub(f"\n{{{k + 2},}}", "\n" * (k + 1), text)
        return text.strip(" \n")


def normalize(text: str, form: Literal["NFC", "NFKC", "none"] = "NFC", max_blank_lines: int = 1) -> str:
    return Normalizer(form, max_blank_lines)(text)
