"""The licence a model card can honestly state, from the licences of the recipe's sources (`license:`).

A model is made from its text, so the card names what the text's licences are instead of picking one. Each
source's free-text licence ("CC BY-SA 4.0", "CC0", "KOGL Type 1", "public documents") is matched to an
identifier of the Hugging Face Hub's licence list where one exists, and flagged when it is share-alike (CC *-SA,
GPL-family, ODbL, CDLA-Sharing: licences that ask for adaptations to carry them on). The card's licence is then:

- the one Hub identifier, when every source carries the same licence and the Hub lists it (`cc-by-sa-4.0`);
- `unknown`, when any source has no licence (`license:` absent or "unknown"): one unlicensed source is
  enough that nobody can say what the model may be used for;
- `other` otherwise (mixed licences, or one the Hub does not list), with `license_name` and `license_link:
  LICENSE`, a file beside the card that lists every source with its licence (what the Hub asks for `other`).

Never a default like "apache-2.0": the code's licence is not the text's. Whether a model trained on share-alike
text is an adaptation of it is not settled; the card says which sources are share-alike and leaves the decision
to whoever publishes the model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# The licence identifiers of the Hub (https://huggingface.co/docs/hub/repositories-licenses; the table of
# huggingface/hub-docs, docs/hub/repositories-licenses.md at 008d54d). `ModelCard.validate()` would check a card
# against the Hub over the network; the card's licence is checked against this list instead, offline.
HUB_LICENSES: frozenset[str] = frozenset({
    "apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m", "bigscience-bloom-rail-1.0",
    "bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0", "bsd", "bsd-2-clause", "bsd-3-clause",
    "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0", "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0",
    "cc-by-sa-3.0", "cc-by-sa-4.0", "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0",
    "cc-by-nc-nd-3.0", "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0", "epl-1.0", "epl-2.0",
    "etalab-2.0", "eupl-1.1", "agpl-3.0", "gfdl", "gpl", "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0",
    "isc", "lppl-1.3c", "ms-pl", "mpl-2.0", "odc-by", "odbl", "openrail++", "osl-3.0", "postgresql", "ofl-1.1",
    "ncsa", "unlicense", "zlib", "pddl", "lgpl-lr", "deepfloyd-if-license", "llama2", "gemma", "unknown", "other",
})
UNKNOWN, OTHER = "unknown", "other"
MIXED_NAME = "mixed-source-licenses"  # license_name of a card whose sources carry different licences
LICENSE_FILE = "LICENSE"  # license_link of an `other` card: the Hub reads a file of this name beside the card
# Hub ids of copyleft / share-alike licences besides CC *-SA (those are recognised by their "sa" element)
_SHARE_ALIKE_IDS = {"agpl-3.0", "gpl", "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0", "gfdl", "odbl",
                    "cdla-sharing-1.0", "eupl-1.1", "osl-3.0", "lgpl-lr"}
_CC = re.compile(r"^(?:cc|creative commons)[\s-]*((?:by|attribution)(?:[\s-]+(?:nc|nd|sa|noncommercial|"
                 r"noderivatives|sharealike|share alike))*)(?:[\s-]+(?:international|license|licence))*"
                 r"(?:[\s-]+v?(\d(?:\.\d)?))?(?:[\s-]+(?:international|license|licence))*$")
_CC_PARTS = {"by": "by", "attribution": "by", "nc": "nc", "noncommercial": "nc", "nd": "nd", "noderivatives": "nd",
             "sa": "sa", "sharealike": "sa"}
_ALIASES = {"cc0": "cc0-1.0", "cc0 1.0": "cc0-1.0", "cc-zero": "cc0-1.0", "cc zero": "cc0-1.0",
            "apache 2.0": "apache-2.0", "apache-2": "apache-2.0", "apache license 2.0": "apache-2.0",
            "apache license, version 2.0": "apache-2.0", "mit license": "mit", "gplv3": "gpl-3.0",
            "gplv2": "gpl-2.0", "agplv3": "agpl-3.0", "odc-odbl": "odbl", "public domain dedication and license":
            "pddl"}
_MISSING = {"", "unknown", "none", "n/a", "unlicensed", "no license", "no licence"}


@dataclass(frozen=True)
class SourceLicense:
    """One source's licence as the recipe states it (`text`), its Hub identifier when the Hub lists it, and
    whether it is share-alike."""

    source: str
    text: str
    hub_id: str | None
    share_alike: bool

    @property
    def missing(self) -> bool:
        return self.text.strip().lower() in _MISSING


@dataclass(frozen=True)
class CardLicense:
    """The card's `license` (a Hub identifier), with `license_name` / `license_link` for `other`, and the
    sources behind it."""

    license: str
    license_name: str | None
    license_link: str | None
    sources: tuple[SourceLicense, ...] = field(default_factory=tuple)

    @property
    def share_alike(self) -> list[SourceLicense]:
        return [s for s in self.sources if s.share_alike]

    @property
    def missing(self) -> list[SourceLicense]:
        return [s for s in self.sources if s.missing]

    @property
    def needs_file(self) -> bool:
        """Whether the card points at a LICENSE file beside it (the Hub's rule for `other`)."""
        return self.license == OTHER

    def summary(self) -> str:
        """One paragraph of markdown: what the licence field says and why."""
        if not self.sources:
            return ("The run records no sources, so the licence of the text this model saw is unknown "
                    "(`license: unknown`).")
        if self.missing:
            names = ", ".join(f"`{s.source}`" for s in self.missing)
            text = (f"`license: unknown`: the recipe gives no licence for {names}, so what the model may be used "
                    f"for cannot be stated. Add `license:` to those sources in the recipe.")
        elif self.license == OTHER and len({s.text for s in self.sources}) > 1:
            text = (f"`license: other` (`{self.license_name}`): the sources carry different licences, listed "
                    f"below and in `{LICENSE_FILE}`. No single licence covers the model; none was chosen for it.")
        elif self.license == OTHER:
            text = (f"`license: other` (`{self.license_name}`): every source is under \"{self.sources[0].text}\", "
                    f"which the Hub's licence list does not name; `{LICENSE_FILE}` says so.")
        else:
            text = f"`license: {self.license}`: every source is under \"{self.sources[0].text}\"."
        if self.share_alike:
            sa = ", ".join(f"`{s.source}` ({s.text})" for s in self.share_alike)
            text += (f" Share-alike: {sa}. Those licences require adaptations of the text to be shared under the "
                     f"same licence; whether a model trained on it is such an adaptation is not settled, so decide "
                     f"(with legal advice) before publishing it under other terms.")
        return text

    def license_file(self) -> str:
        """The text of `LICENSE` for an `other` card: every source and its licence, and what that means."""
        lines = ["Licences of the text this model was trained on", "",
                 "This model was pretrained from scratch on the sources below. It is not published under one",
                 "licence: each source's licence applies to the text drawn from it, and share-alike licences",
                 "ask that adaptations carry them on. Decide which terms the model can be shared under before",
                 "publishing it.", ""]
        return "\n".join([*lines, *self.source_lines()]) + "\n"

    def source_lines(self) -> list[str]:
        """One line per source: its name, its licence as the recipe gives it, its Hub id, share-alike or not
        (the body of a LICENSE file, the model's or the dataset's)."""
        width = max((len(s.source) for s in self.sources), default=0)
        out = []
        for s in self.sources:
            tags = [f"Hub id {s.hub_id}" if s.hub_id else "not on the Hub's licence list"]
            if s.share_alike:
                tags.append("share-alike")
            out.append(f"- {s.source:<{width}}  {s.text or 'no licence given'} ({', '.join(tags)})")
        return out


def classify(source: str, text: str | None) -> SourceLicense:
    """A source's licence string matched to the Hub's list (parenthesised remarks ignored: "CC0 (test
    fixture)" is CC0); unversioned Creative Commons licences ("CC BY-SA") have no Hub id but keep their
    share-alike flag."""
    raw = (text or "").strip()
    norm = re.sub(r"\([^)]*\)", " ", raw.lower())
    norm = re.sub(r"\s+", " ", norm.replace("_", "-")).strip()
    if norm in _MISSING:
        return SourceLicense(source, raw, None, False)
    hub = _ALIASES.get(norm)
    share_alike = False
    m = _CC.match(norm)
    if hub is None and m:
        parts = [_CC_PARTS[p] for p in re.split(r"[\s-]+", m.group(1).replace("share alike", "sharealike"))
                 if p in _CC_PARTS]
        share_alike = "sa" in parts
        version = m.group(2)
        if version and "." not in version:
            version += ".0"
        candidate = "cc-" + "-".join(parts) + (f"-{version}" if version else "")
        hub = candidate if version and candidate in HUB_LICENSES else None
    if hub is None:
        slug = re.sub(r"[^a-z0-9.+]+", "-", norm).strip("-")
        hub = slug if slug in HUB_LICENSES and slug not in (UNKNOWN, OTHER) else None
    if hub is not None:
        share_alike = share_alike or "-sa-" in f"{hub}-" or hub in _SHARE_ALIKE_IDS
    return SourceLicense(source, raw, hub, share_alike)


def card_license(sources: Iterable[tuple[str, str | None]]) -> CardLicense:
    """The card's licence from (source name, licence text) pairs, by the rules of the module docstring."""
    found = tuple(classify(name, text) for name, text in sources)
    if not found or any(s.missing for s in found):
        return CardLicense(UNKNOWN, None, None, found)
    texts = {s.hub_id or s.text.strip().lower() for s in found}
    if len(texts) == 1 and found[0].hub_id is not None:
        return CardLicense(found[0].hub_id, None, None, found)
    name = MIXED_NAME if len(texts) > 1 else slug(found[0].text)
    return CardLicense(OTHER, name, LICENSE_FILE, found)


def slug(text: str) -> str:
    """A licence name as the Hub's `license_name` spells one: lowercase letters, digits, '-' and '.'."""
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.") or MIXED_NAME
