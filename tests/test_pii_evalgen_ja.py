"""The independent Japanese PII evaluation set (datagen/pii/ja.py): format, determinism, check digits
(against python-stdnum, not the generator's own formulas), planted negatives, split hygiene (disjoint open-class
pools), label coverage at the default sizes, format variants, the span conventions, and the CLI."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import subprocess
import sys
import unicodedata
from dataclasses import fields
from pathlib import Path

import pytest
from click.testing import CliRunner
from stdnum import luhn
from stdnum.jp import cn, in_

from corpora.lang.ja import PII_TYPES as JA_TYPES
from corpora.pii.cli import pii
from corpora.pii.evaluate import read_gold
from datagen.pii import ja as E
from testkit.pii_evalgen import assert_well_formed, missing_variants

DEFAULT = {"dev": 1000, "heldout": 1500}
REPO = Path(__file__).resolve().parents[1]


def nfkc(s: str) -> str:
    return unicodedata.normalize("NFKC", s)


def digits(s: str) -> str:
    return re.sub(r"\D", "", nfkc(s))


@pytest.fixture(scope="module")
def generated() -> dict:
    """Default-size records with their generator-side details: {split: [(record, metas, negatives)]}."""
    return {s: list(E._generate(n, s)) for s, n in DEFAULT.items()}


@pytest.fixture(scope="module")
def records(generated) -> dict:
    return {s: [rec for rec, _, _ in docs] for s, docs in generated.items()}


WRITTEN = {"dev": 300, "heldout": 200}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict:
    """Files shorter than the default: document i does not depend on n, so they are a prefix of the records."""
    out = tmp_path_factory.mktemp("evalgen_ja")
    return E.write_split(out, n_dev=WRITTEN["dev"], n_heldout=WRITTEN["heldout"])


def _spans(recs: list[dict], label: str) -> list[tuple[dict, dict]]:
    return [(r, s) for r in recs for s in r["spans"] if s["label"] == label]


# -- files and determinism ---------------------------------------------------------------------------------------

def test_write_split_writes_the_generated_records(written, records):
    assert set(written) == {"dev", "heldout"}
    assert written["dev"].name == "dev.jsonl" and written["heldout"].name == "heldout.jsonl"
    assert not list(written["dev"].parent.glob("*.tmp*"))  # atomic writes leave no temp files
    for s, p in written.items():
        lines = p.read_bytes().split(b"\n")
        assert lines[-1] == b"" and len(lines) - 1 == WRITTEN[s]
        assert lines[:-1] == [json.dumps(r, ensure_ascii=False).encode() for r in records[s][:WRITTEN[s]]]


def test_write_split_is_byte_identical_a_prefix_and_seed_dependent(written, tmp_path):
    a = E.write_split(tmp_path / "a", n_dev=60, n_heldout=40)
    b = E.write_split(tmp_path / "b", n_dev=60, n_heldout=40)
    c = E.write_split(tmp_path / "c", n_dev=60, n_heldout=40, seed=1)
    for s, n in (("dev", 60), ("heldout", 40)):
        assert a[s].read_bytes() == b[s].read_bytes()
        assert a[s].read_bytes() == b"".join(x + b"\n" for x in written[s].read_bytes().split(b"\n")[:n])
        assert a[s].read_bytes() != c[s].read_bytes()
    assert list(E.generate(15, "dev", seed=3)) == list(E.generate(30, "dev", seed=3))[:15]


_DIGEST = """
import hashlib, json
from datagen.pii import ja as E  # the generator alone: it imports neither the detector nor presidio
h = hashlib.sha256()
for s in E.SPLITS:
    for rec in E.generate(40, s, seed=5):
        h.update(json.dumps(rec, ensure_ascii=False).encode())
print(h.hexdigest())
"""


def test_output_does_not_depend_on_the_hash_seed():
    h = hashlib.sha256()
    for s in E.SPLITS:
        for rec in E.generate(40, s, seed=5):
            h.update(json.dumps(rec, ensure_ascii=False).encode())
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed, "PYTHONPATH": str(REPO)}
        out = subprocess.run([sys.executable, "-c", _DIGEST], env=env, capture_output=True, text=True, check=True,
                             cwd=REPO)
        assert out.stdout.strip() == h.hexdigest()


def test_arguments_are_validated():
    assert list(E.generate(0, "heldout")) == []
    with pytest.raises(ValueError, match="split"):
        list(E.generate(1, "test"))
    with pytest.raises(ValueError, match="n must"):
        list(E.generate(-1, "dev"))
    with pytest.raises(ValueError, match="split"):
        E.pools("train")


def test_splits_draw_from_different_streams(records):
    dev, held = records["dev"][:200], records["heldout"][:200]
    assert [r["genre"] for r in dev] != [r["genre"] for r in held]
    assert not {r["text"] for r in dev} & {r["text"] for r in held}


def test_read_gold_reads_both_files(written, records):
    for s, p in written.items():
        gold = read_gold(p)
        assert len(gold) == WRITTEN[s]
        assert [g["spans"] for g in gold] == [[(x["start"], x["end"], x["label"]) for x in r["spans"]]
                                              for r in records[s][:WRITTEN[s]]]


# -- record format and coverage ----------------------------------------------------------------------------------

def test_labels_are_the_japanese_types():
    assert set(E.LABELS) == set(JA_TYPES)


def test_records_are_well_formed(records):
    assert_well_formed(records, E.GENRES, JA_TYPES, (5, 25), span_may_break=False)


def test_label_and_genre_coverage_at_default_sizes(records):
    for split, recs in records.items():
        counts = E.label_counts(recs)
        low = {k: v for k, v in counts.items() if v < 100}
        assert not low, (split, low)
        by_genre = {g: [r for r in recs if r["genre"] == g] for g in E.GENRES}
        assert all(len(v) >= 50 for v in by_genre.values()), (split, {g: len(v) for g, v in by_genre.items()})
        for g, docs in by_genre.items():
            assert all(r["spans"] for r in docs), (split, g)
            assert len({s["label"] for r in docs for s in r["spans"]}) >= 4, (split, g)


# -- check digits (stdnum is the reference) ----------------------------------------------------------------------

def test_check_digit_functions_agree_with_stdnum():
    r = random.Random(11)
    for _ in range(3000):
        body = "".join(r.choice("0123456789") for _ in range(11))
        assert E.my_number_check_digit(body) == in_.calc_check_digit(body)
        base = "".join(r.choice("0123456789") for _ in range(12))
        assert E.corporate_check_digit(base) == cn.calc_check_digit(base)
    # 株式会社日立製作所's published 法人番号 (its 会社法人等番号 0100-01-008844)
    assert E.corporate_check_digit("010001008844") + "010001008844" == "7010001008844"
    with pytest.raises(ValueError):
        E.my_number_check_digit("1234")


def test_every_my_number_corporate_number_and_card_span_is_valid(generated):
    n = {"MY_NUMBER": 0, "CORP13": 0, "CORP12": 0, "CARD": 0}
    for docs in generated.values():
        for rec, metas, _ in docs:
            assert [(m.label, m.text) for m in metas] == [(s["label"], s["text"]) for s in rec["spans"]]
            for s in rec["spans"]:
                t = nfkc(s["text"])
                if s["label"] == "MY_NUMBER":
                    assert re.fullmatch(r"\d{4} \d{4} \d{4}|\d{4}-\d{4}-\d{4}|\d{12}", t), t
                    assert in_.is_valid(t), t
                    n["MY_NUMBER"] += 1
                elif s["label"] == "CORPORATE_NUMBER":
                    d = digits(t)
                    if len(d) == 13:
                        assert re.fullmatch(r"\d{13}|\d-\d{4}-\d{4}-\d{4}|\d \d{4} \d{4} \d{4}", t), t
                        assert cn.is_valid(d), t
                        n["CORP13"] += 1
                    else:  # 会社法人等番号: 登記所 4, kind 2 (01 株式会社, 02 有限会社, 03 合同会社), serial 6
                        assert re.fullmatch(r"\d{4}-0[123]-\d{6}|\d{4}0[123]\d{6}", t), t
                        n["CORP12"] += 1
                elif s["label"] == "CARD":
                    d = digits(t)
                    assert luhn.is_valid(d), t
                    ok = (len(d) == 16 and (d[0] == "4" or 51 <= int(d[:2]) <= 55 or 3528 <= int(d[:4]) <= 3589)
                          or len(d) == 15 and d[:2] in ("34", "37") or len(d) == 14 and d[:2] == "36")
                    assert ok, t
                    n["CARD"] += 1
    assert min(n.values()) >= 50, n


def test_planted_negatives_fail_their_checks_and_are_unlabelled(generated):
    kinds: dict[str, int] = {}
    for docs in generated.values():
        for rec, _, negs in docs:
            spans = [(s["start"], s["end"]) for s in rec["spans"]]
            for neg in negs:
                kinds[neg.kind] = kinds.get(neg.kind, 0) + 1
                positions = [m.start() for m in re.finditer(re.escape(neg.text), rec["text"])]
                assert positions, (rec["id"], neg)
                for p in positions:
                    assert not any(s < p + len(neg.text) and p < e for s, e in spans), (rec["id"], neg)
                if neg.digits:
                    assert digits(neg.text) == neg.digits
                    assert len(neg.digits) in (12, 13)
                    if len(neg.digits) == 12:
                        assert not in_.is_valid(neg.digits), neg
                    else:
                        assert not cn.is_valid(neg.digits), neg
    assert {"order", "inquiry", "tracking", "jan", "isbn", "receipt"} <= set(kinds), kinds
    assert kinds["tracking"] >= 100 and kinds["order"] >= 100, kinds


def _outside(rec: dict) -> str:
    """The text with every gold span blanked out (length kept)."""
    text = rec["text"]
    for s in rec["spans"]:
        text = text[:s["start"]] + " " * (s["end"] - s["start"]) + text[s["end"]:]
    return text


def test_no_valid_my_number_or_corporate_number_outside_the_spans(records):
    """Every run of 12 or 13 digits that is not gold (after NFKC, with the My Number's own separators) fails the
    check digit: a detector that validates is never asked to miss a number that validates."""
    seen = 0
    for recs in records.values():
        for r in recs:
            text = nfkc(_outside(r))
            for m in re.finditer(r"(?<![\d-])(\d{4}[ -]?\d{4}[ -]?\d{4}|\d{12,13})(?![\d-])", text):
                d = digits(m.group())
                seen += 1
                assert not (len(d) == 12 and in_.is_valid(d)), (r["id"], m.group())
                assert not (len(d) == 13 and cn.is_valid(d)), (r["id"], m.group())
    assert seen > 500


# -- span conventions --------------------------------------------------------------------------------------------

_FAX_WORDS = re.compile(r"(FAX|Fax|ファックス|ファクス)")


def _before(rec: dict, span: dict) -> str:
    """The text between the previous span (or the line start) and `span`."""
    start = rec["text"].rfind("\n", 0, span["start"]) + 1
    for s in rec["spans"]:
        if s["end"] <= span["start"]:
            start = max(start, s["end"])
    return nfkc(rec["text"][start:span["start"]])


def test_fax_and_phone_are_told_apart_by_the_word_before(records):
    for recs in records.values():
        for r, s in _spans(recs, "FAX"):
            before = _before(r, s)
            assert _FAX_WORDS.search(before) or (before.endswith("<td>") and "<th>FAX</th>" in r["text"]), \
                (r["id"], before, s["text"])
        for r, s in _spans(recs, "PHONE"):
            assert not _FAX_WORDS.search(_before(r, s)), (r["id"], s["text"])


_HONORIFIC_TAIL = re.compile(r"(様|さん|氏|先生|殿|くん|ちゃん|委員|部長)$")


def test_person_spans_hold_the_name_only(records):
    after: dict[str, int] = {}
    for recs in records.values():
        for r, s in _spans(recs, "PERSON"):
            assert not _HONORIFIC_TAIL.search(s["text"]), (r["id"], s["text"])
            assert not re.search(r"[\d@:<>（）()]", s["text"]), (r["id"], s["text"])
            m = re.match(r"\s?(様|さん|氏|先生|殿|くん|ちゃん)", r["text"][s["end"]:])
            if m:
                after[m.group(1)] = after.get(m.group(1), 0) + 1
    assert set(after) == {"様", "さん", "氏", "先生", "殿", "くん", "ちゃん"}, after


def test_postal_codes_exclude_the_mark_and_match_the_prefecture(records):
    blocks = {p: rng for p, rng, _ in E._PREFS}
    checked = 0
    for recs in records.values():
        for r in recs:
            sp = r["spans"]
            for i, s in enumerate(sp):
                if s["label"] != "POSTAL_CODE":
                    continue
                t = nfkc(s["text"])
                assert re.fullmatch(r"\d{3}-\d{4}|\d{7}", t), t
                assert "〒" not in s["text"]
                nxt = sp[i + 1] if i + 1 < len(sp) else None
                if nxt and nxt["label"] == "ADDRESS":
                    pref = next((p for p in blocks if nxt["text"].startswith(p)), None)
                    if pref:
                        lo, hi = blocks[pref]
                        assert lo <= int(t[:3]) <= hi, (t, nxt["text"])
                        checked += 1
    assert checked > 500


def test_addresses_start_at_a_real_prefecture_or_municipality(records):
    prefs = tuple(p for p, _, _ in E._PREFS)
    munis = tuple(m for _, _, ms in E._PREFS for m in ms)
    for recs in records.values():
        for r, s in _spans(recs, "ADDRESS"):
            t = s["text"]
            head = t[len(next((p for p in prefs if t.startswith(p)), "")):].lstrip(" 　")
            assert head.startswith(munis), (r["id"], t)
    assert len({p for p in prefs if any(s["text"].startswith(p) for r in records.values() for _, s in
                                        _spans(r, "ADDRESS"))}) == 47


# -- format variants ---------------------------------------------------------------------------------------------

VARIANTS: dict[str, dict[str, str]] = {
    "PHONE": {"tokyo": r"^03-\d{4}-\d{4}$", "osaka": r"^06-", "three_digit_area": r"^0\d{2}-\d{3}-\d{4}$",
              "four_digit_area": r"^0\d{3}-\d{2}-\d{4}$", "five_digit_area": r"^0499[26]-\d-\d{4}$",
              "local_in_parens": r"^0\d+\(\d+\)\d{4}$", "area_in_parens": r"^\(0\d+\)\d+-\d{4}$",
              "mobile": r"^0[789]0-[1-9]\d{3}-\d{4}$", "mobile_plain": r"^0[789]0\d{8}$", "ip_050": r"^050-",
              "free_0120": r"^0120-", "free_0800": r"^0800-", "navi": r"^0570-", "intl": r"^\+81[- ]",
              "intl_0": r"^\+81-\(0\)", "fullwidth": r"^[０-９]"},
    "FAX": {"area": r"^0\d+-\d+-\d{4}$", "fullwidth": r"[０-９]"},
    "POSTAL_CODE": {"hyphen": r"^\d{3}-\d{4}$", "plain": r"^\d{7}$", "fullwidth": r"^[０-９]{3}－[０-９]{4}$"},
    "MY_NUMBER": {"spaces": r"^\d{4} \d{4} \d{4}$", "hyphens": r"^\d{4}-\d{4}-\d{4}$", "plain": r"^\d{12}$",
                  "fullwidth": r"^[０-９]{4}"},
    "CORPORATE_NUMBER": {"plain13": r"^\d{13}$", "grouped13": r"^\d-\d{4}-\d{4}-\d{4}$",
                         "registry": r"^\d{4}-0[123]-\d{6}$"},
    "CARD": {"jcb": r"^35(2[89]|[3-8]\d)", "visa": r"^4", "mastercard": r"^5[1-5]", "amex": r"^3[47]\d{2}[- ]?\d{6}",
             "diners": r"^36\d{2}[- ]?\d{6}[- ]?\d{4}$", "hyphens": r"^\d{4}-\d{4}-\d{4}-\d{4}$",
             "plain": r"^\d{14,16}$"},
    "EMAIL": {"co_jp": r"\.co\.jp$", "ne_jp": r"\.ne\.jp$", "ac_jp": r"\.ac\.jp$", "go_jp": r"\.go\.jp$",
              "lg_jp": r"\.lg\.jp$", "gmail": r"@gmail\.com$", "plus_tag": r"\+[a-z]+@", "underscore": r"_"},
    "URL": {"https": r"^https://", "http": r"^http://", "bare_www": r"^www\.", "query": r"\?\w+=",
            "two_params": r"\?\w+=[^&]+&\w+=", "path": r"^[^/]*//[^/]+/\w"},
    "IP": {"private": r"^(192\.168|10|172\.(1[6-9]|2\d|3[01]))\.", "public": r"^(?!192\.168|10\.|172\.)\d+\.",
           "v6_compressed": r"::", "v6_full": r"^[0-9a-f]{1,4}(:[0-9a-f]{1,4}){7}$"},
    "ADDRESS": {"chome_ban_go": r"\d丁目\d+番\d+号", "kanji_chome": r"[一二三四五六七八九]丁目",
                "hyphens": r"\d-\d+-\d+", "banchi": r"\d番地", "banchi_no": r"番地の\d", "oaza": r"大字",
                "gun": r"郡.+[町村]", "sapporo_grid": r"[北南]\d+条[東西]\d+丁目", "ward": r"市.+区",
                "room": r"\d号室", "floor": r"\d階", "room_hyphen": r"\d-\d+-\d+-\d{3,4}$",
                "fullwidth": r"[０-９]", "no_prefecture": r"^(?!\S+?[都道府県])\S", "building": r"(メゾン|ハイツ|ビル)"},
    "PERSON": {"kanji_space": r"^[\u4e00-\u9fff々]+ [\u4e00-\u9fff]+$", "kanji_ideographic_space": r"　",
               "kanji_tight": r"^[\u4e00-\u9fff々]{3,5}$", "katakana": r"^[ァ-ヶ]+[ 　]?[ァ-ヶ]+$",
               "hiragana": r"^[ぁ-ゖ]+[ 　][ぁ-ゖ]+$", "roman": r"^[A-Z][a-z]+ [A-Z][a-z]+$",
               "roman_upper": r"^[A-Z]{2,} [A-Z][a-z]+$", "kana_nickname": r"^[ぁ-ゖ]+$",
               "canonical": r"^山田[ 　]?(太郎|花子)$"},
}


def test_every_format_variant_in_both_splits(records):
    for split, recs in records.items():
        assert not missing_variants(recs, VARIANTS), split


NEGATIVES = {
    "wareki_date": r"令和(元|\d+)年\d+月\d+日", "western_date": r"20\d\d年\d+月\d+日", "time": r"(?<![\w:.])\d{1,2}:\d{2}(?![\w:])",
    "price_yen": r"[¥￥]\d{1,3}(,\d{3})*", "price_en": r"\d+万\d千円", "law_number": r"(平成|昭和|明治)\d+年(法律|政令|法務省令)第\d+号",
    "case_number": r"令和\d+年\([ワハネヨ]\)第\d+号", "isbn": r"ISBN978-4-", "jan": r"JAN(コード)?：4[59]\d{11}",
    "tracking": r"伝票番号 \d{4}-?\d{4}-?\d{4}", "inquiry": r"お問い合わせ番号：\d{4}-\d{4}-\d{4}",
    "station": r"[\u4e00-\u9fff]+駅", "police": r"(大阪府警|神奈川県警|警視庁|愛知県警|福岡県警|北海道警察|兵庫県警)",
    "city_hall": r"(横浜|大阪|名古屋|福岡|神戸|京都|札幌|仙台)市役所", "company": r"(株式会社|有限会社|合同会社)",
    "page": r"\d+ページ", "model": r"型番 [A-Z]{2}-", "license": r"宅地建物取引業 \S+\(\d+\)第\d+号",
    "date_of_birth": r"生年月日", "masked_card": r"\*{4}[- ]\*{4}[- ]\*{4}[- ]\d{4}|末尾\d{4}",
}


def test_negatives_occur_in_both_splits_and_are_not_labelled(records):
    for split, recs in records.items():
        seen = dict.fromkeys(NEGATIVES, 0)
        genres_with_negatives: set[str] = set()
        for r in recs:
            spans = [(s["start"], s["end"]) for s in r["spans"]]
            for name, pat in NEGATIVES.items():
                for m in re.finditer(pat, r["text"]):
                    seen[name] += 1
                    genres_with_negatives.add(r["genre"])
                    assert not any(s < m.end() and m.start() < e for s, e in spans), (r["id"], name, m.group())
        assert all(seen.values()), (split, seen)
        assert genres_with_negatives == set(E.GENRES)


# -- split hygiene -----------------------------------------------------------------------------------------------

def _strings(P: E.Pools, field: str) -> set[str]:
    vals = getattr(P, field)
    if field in ("given", "given_kana"):
        return {g.text for g in vals}
    if field == "companies":
        return {c.name for c in vals}
    return set(vals)


def test_open_class_pools_are_disjoint():
    dev, held = E.pools("dev"), E.pools("heldout")
    for f in fields(E.Pools):
        a, b = _strings(dev, f.name), _strings(held, f.name)
        assert a and b, f.name
        assert not a & b, (f.name, sorted(a & b)[:5])
    # no surface form (kanji, kana, katakana, romaji) of any value is in both splits, in any field
    assert not dev.values() & held.values()
    assert len(dev.given) > 400 and len(dev.towns) > 400 and len(dev.companies) > 200 and len(dev.users) > 400
    canon = {g.text for _, g in E.CANONICAL}
    assert not canon & (_strings(dev, "given") | _strings(held, "given"))
    surnames = {s.kanji for s in E.SURNAMES}
    assert not surnames & (_strings(dev, "towns") | _strings(held, "towns"))
    assert len(surnames) >= 250


def test_documents_use_only_their_own_pools(generated):
    for split, docs in generated.items():
        P = E.pools(split)
        own = {f.name: _strings(P, f.name) for f in fields(E.Pools)}
        used = 0
        for _, metas, _ in docs:
            for m in metas:
                for field, value in m.used:
                    assert value in own[field], (split, field, value)
                    used += 1
        assert used > 5000


def test_no_open_class_value_of_one_split_in_the_other_documents(records):
    for split, other in (("dev", "heldout"), ("heldout", "dev")):
        Q = E.pools(other)
        text = "\n".join(r["text"] for r in records[split])
        for field in ("buildings", "companies", "domains"):
            pat = re.compile("|".join(map(re.escape, sorted(_strings(Q, field), key=len, reverse=True))))
            leaked = set(pat.findall(text))
            assert not leaked, (split, field, sorted(leaked)[:5])
        # every form (kanji, kana, katakana, romaji) of the other split's given names
        theirs = {f.lower() for g in Q.given + Q.given_kana for f in E._forms(g)}
        sur_forms = {f for sn in E.SURNAMES for f in (sn.kanji, sn.kana, E.katakana(sn.kana))}
        sur_prefix = re.compile("^(" + "|".join(sorted(sur_forms, key=len, reverse=True)) + ")")
        users = {u.lower() for u in Q.users}
        for _, s in _spans(records[split], "PERSON"):
            tokens = s["text"].replace("　", " ").split(" ")
            tight = "".join(tokens)
            cands = {tight, *tokens, sur_prefix.sub("", tight)} - sur_forms
            assert not {c.lower() for c in cands} & theirs, (split, s["text"])
        for _, s in _spans(records[split], "EMAIL"):
            user, dom = s["text"].split("@")
            assert user.lower() not in users and dom not in Q.domains, (split, s["text"])


# -- CLI ---------------------------------------------------------------------------------------------------------

def test_cli_writes_the_japanese_files(tmp_path):
    res = CliRunner().invoke(pii, ["gen", str(tmp_path / "ja"), "--language", "ja", "--dev", "12", "--heldout", "9",
                                   "--seed", "4"])
    assert res.exit_code == 0, res.output
    ref = E.write_split(tmp_path / "ref", n_dev=12, n_heldout=9, seed=4)
    for s in E.SPLITS:
        got = (tmp_path / "ja" / f"{s}.jsonl").read_bytes()
        assert got == ref[s].read_bytes()
        assert len(read_gold(tmp_path / "ja" / f"{s}.jsonl")) == {"dev": 12, "heldout": 9}[s]


def test_cli_default_language_is_still_korean(tmp_path):
    from datagen.pii import ko as K

    res = CliRunner().invoke(pii, ["gen", str(tmp_path / "ko"), "--dev", "3", "--heldout", "2"])
    assert res.exit_code == 0, res.output
    ref = K.write_split(tmp_path / "ref", n_dev=3, n_heldout=2)
    for s in E.SPLITS:
        assert (tmp_path / "ko" / f"{s}.jsonl").read_bytes() == ref[s].read_bytes()
    res = CliRunner().invoke(pii, ["gen", str(tmp_path / "x"), "--language", "zh"])
    assert res.exit_code != 0 and "zh" in res.output
