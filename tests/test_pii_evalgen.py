"""The independent PII evaluation set (datagen/pii/ko.py): format, determinism, checksums, split hygiene
(disjoint open-class pools, no value of one split in the other's documents), coverage of labels and of the
format variants, and speed."""

from __future__ import annotations

import json
import re
import time
from dataclasses import fields

import pytest

from corpora.pii import validators as v
from corpora.pii.evaluate import read_gold
from datagen.pii import ko as E
from datagen.pii.common import MAX_LINES
from testkit.pii_evalgen import assert_well_formed, missing_variants

DEFAULT = {"dev": 1000, "heldout": 1500}


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("evalgen")
    t0 = time.perf_counter()
    paths = E.write_split(out)
    elapsed = time.perf_counter() - t0
    recs = {s: [json.loads(line) for line in p.read_text(encoding="utf-8").splitlines()] for s, p in paths.items()}
    return {"paths": paths, "records": recs, "seconds": elapsed}


@pytest.fixture(scope="module")
def with_meta() -> dict:
    return {s: list(E._generate(n, s)) for s, n in DEFAULT.items()}


def _spans(recs: list[dict], label: str) -> list[tuple[dict, dict]]:
    return [(r, s) for r in recs for s in r["spans"] if s["label"] == label]


# -- files and determinism ---------------------------------------------------------------------------------------

def test_write_split_paths_sizes_and_speed(written):
    paths = written["paths"]
    assert set(paths) == {"dev", "heldout"}
    assert paths["dev"].name == "dev.jsonl" and paths["heldout"].name == "heldout.jsonl"
    assert {s: len(r) for s, r in written["records"].items()} == DEFAULT
    assert written["seconds"] < 10.0, f"2,500 documents took {written['seconds']:.1f} s"
    assert not list(paths["dev"].parent.glob("*.tmp*"))  # atomic writes leave no temp files


def test_write_split_is_byte_identical_and_seed_dependent(written, tmp_path):
    again = E.write_split(tmp_path / "again")
    for s in ("dev", "heldout"):
        assert again[s].read_bytes() == written["paths"][s].read_bytes()
    a = E.write_split(tmp_path / "s0", n_dev=40, n_heldout=40, seed=0)
    b = E.write_split(tmp_path / "s1", n_dev=40, n_heldout=40, seed=1)
    for s in ("dev", "heldout"):
        assert a[s].read_bytes() != b[s].read_bytes()
        assert a[s].read_bytes() == b"".join(
            line + b"\n" for line in written["paths"][s].read_bytes().split(b"\n")[:40])


def test_generate_is_a_deterministic_prefix_and_validates_arguments():
    assert list(E.generate(15, "dev", seed=3)) == list(E.generate(30, "dev", seed=3))[:15]
    assert list(E.generate(0, "heldout")) == []
    with pytest.raises(ValueError, match="split"):
        list(E.generate(1, "test"))
    with pytest.raises(ValueError, match="split"):
        E.pools("train")


def test_splits_draw_from_different_streams():
    dev = list(E.generate(200, "dev"))
    held = list(E.generate(200, "heldout"))
    assert [r["genre"] for r in dev] != [r["genre"] for r in held]
    assert not {r["text"] for r in dev} & {r["text"] for r in held}


def test_read_gold_reads_both_files(written):
    for s, p in written["paths"].items():
        gold = read_gold(p)
        assert len(gold) == DEFAULT[s]
        assert sum(len(g["spans"]) for g in gold) == sum(len(r["spans"]) for r in written["records"][s])


# -- record format -----------------------------------------------------------------------------------------------

def test_records_are_well_formed(written):
    assert_well_formed(written["records"], E.GENRES, E.LABELS, (3, MAX_LINES), span_may_break=True)


def test_every_genre_in_both_splits(written):
    for recs in written["records"].values():
        assert {r["genre"] for r in recs} == set(E.GENRES)


def test_label_coverage_at_default_sizes(written):
    for split, recs in written["records"].items():
        counts = E._label_counts(recs)
        for label in E.TARGET_LABELS:
            assert counts[label] >= 100, (split, label, counts[label])
        for label in E.OPTIONAL_LABELS:
            assert counts[label] >= 50, (split, label, counts[label])


# -- checksums and formats ---------------------------------------------------------------------------------------

def test_checksums_of_generated_spans(with_meta):
    flagged = {"RRN": 0, "FRN": 0}
    for docs in with_meta.values():
        for rec, metas in docs:
            assert [(m.label, m.text) for m in metas] == [(s["label"], s["text"]) for s in rec["spans"]]
            for m in metas:
                d = v.digits(m.text)
                if m.label in ("RRN", "FRN") and "*" not in m.text and "X" not in m.text:
                    assert len(d) == 13 and v.birth_date_ok(d[:6], d[6]), m.text
                    assert d[6] in ("1234" if m.label == "RRN" else "5678"), m.text
                    if m.valid:
                        flagged[m.label] += 1
                        ok = v.rrn_checksum_ok if m.label == "RRN" else v.frn_checksum_ok
                        assert ok(m.text), m.text
                elif m.label == "BUSINESS_REG":
                    assert m.valid and v.business_reg_ok(m.text), m.text
                elif m.label == "CORP_REG":
                    assert m.valid and v.corp_reg_ok(m.text), m.text
                elif m.label == "CARD":
                    assert m.valid and v.luhn_ok(m.text), m.text
    assert flagged["RRN"] > 100 and flagged["FRN"] > 50


def test_value_makers_directly():
    import random

    c = E._Ctx(random.Random(7), E.pools("dev"))
    for _ in range(500):
        assert v.rrn_checksum_ok(c.rrn(mode="check").text)
        assert v.frn_checksum_ok(c.rrn("FRN", mode="check").text)
        assert v.business_reg_ok(c.business_reg(c.r.choice(("corp", "individual", "nonprofit", "exempt"))).text)
        assert v.corp_reg_ok(c.corp_reg(c.r.choice(("주식회사", "유한회사", "사단법인", "재단법인"))).text)
        assert v.luhn_ok(c.card().text)
        dl = c.driver_license().text
        m = re.fullmatch(r"(\d{2})-?\s?\d{2}-?\s?\d{6}-?\s?\d{2}", dl)
        assert (m and 11 <= int(m.group(1)) <= 28) or re.fullmatch(r"[가-힣]{2} \d{2}-\d{6}-\d{2}", dl), dl
        assert re.fullmatch(r"[MSRDG](\d{8}|\d{3}[A-Z]\d{4})", c.passport().text)
        assert re.fullmatch(r"\d-?\d{10}", c.medical_insurance().text)
        assert v.ipv4_ok(c.ip().text)
        p = c.postal(0).text
        assert re.fullmatch(r"0[1-9]\d{3}", p)  # 서울: 01000-09999


# -- split hygiene -----------------------------------------------------------------------------------------------

def test_open_class_pools_are_disjoint():
    dev, held = E.pools("dev"), E.pools("heldout")
    for f in fields(E.Pools):
        a, b = set(getattr(dev, f.name)), set(getattr(held, f.name))
        assert a and b, f.name
        assert not a & b, (f.name, sorted(a & b)[:5])
    assert not dev.given_names() & held.given_names()
    # every name-like open class at once: no string is in any dev pool and any held-out pool
    every = {s: set().union(*(getattr(E.pools(s), f.name) for f in fields(E.Pools))) for s in E.SPLITS}
    assert not every["dev"] & every["heldout"]
    assert len(dev.given2) > 500 and len(dev.roads) > 1000 and len(dev.companies) > 500


def test_documents_use_only_their_own_pools(with_meta):
    for split, docs in with_meta.items():
        P = E.pools(split)
        used = 0
        for _, metas in docs:
            for m in metas:
                for field, value in m.used:
                    assert value in getattr(P, field), (split, field, value)
                    used += 1
        assert used > 5000


def _full_names(P: E.Pools) -> set[str]:
    singles = [s for s, _, _ in E._SURNAMES]
    out = {s + g for s in singles for g in P.given1 + P.given2 + P.given3}
    out |= {cs + g for cs, _ in E._COMPOUND_SURNAMES for g in P.given2}
    return out


def _blank(rec: dict, label: str) -> str:
    text = rec["text"]
    for s in rec["spans"]:
        if s["label"] == label:
            text = text[:s["start"]] + " " * (s["end"] - s["start"]) + text[s["end"]:]
    return text


def test_no_value_of_one_split_in_the_other_documents(written):
    recs = written["records"]
    names = {s: _full_names(E.pools(s)) for s in E.SPLITS}
    for split, other in (("dev", "heldout"), ("heldout", "dev")):
        Q = E.pools(other)
        for _, s in _spans(recs[split], "PERSON"):
            if s["text"] not in E.CANONICAL_NAMES:
                assert s["text"] in names[split] and s["text"] not in names[other], s["text"]
        for _, s in _spans(recs[split], "EMAIL"):
            user, dom = s["text"].split("@")
            assert user.lower() not in {u.lower() for u in Q.users} and dom not in Q.domains + Q.gov_domains
        # Hangul words of the documents, names left out (a person 나연동 is not the place 나연동)
        tokens = {t for r in recs[split] for t in re.findall(r"[가-힣0-9]+", _blank(r, "PERSON"))}
        for f in ("roads", "buildings", "apartments", "dongs", "ris", "eupmyeons", "companies"):
            leaked = tokens & set(getattr(Q, f))
            assert not leaked, (split, f, sorted(leaked)[:5])


# -- variants and negatives --------------------------------------------------------------------------------------

_SHORT = r"(서울|서울시|부산|부산시|대구|대구시|인천|인천시|광주|대전|대전시|울산|울산시|경기|강원|강원도|충북|충남|전북|전남|경북|경남|제주)"
VARIANTS: dict[str, dict[str, str]] = {
    "ADDRESS": {
        "line_break": r"\n", "sejong_full": r"^세종특별자치시 ", "sejong_short": r"^세종시 ",
        "jibun_san_space": r" 산 \d+-\d+", "jibun_san": r" 산\d+", "jibun_dong": r"[가-힣]+동 \d+(-\d+)?($|,| )",
        "ri": r"[가-힣]+리 (산 ?)?\d", "eup_myeon": r" [가-힣]+(읍|면) ", "road_ro": r"[가-힣]+로 (지하 )?\d",
        "road_daero": r"대로 \d", "road_gil": r"[가-힣]+\d?길 \d", "road_beongil": r"로\d+번길 \d",
        "road_ro_gil": r"로\d+길 \d", "underground": r" 지하 \d", "sub_number": r" \d+-\d+(,|$| \()",
        "detail_floor": r", \d+층", "detail_apt": r", \d{3}동 \d+호", "detail_building": r"[가-힣] [A-C]동 \d+호",
        "detail_no_comma": r"\d \d+(층|호)", "ref_dong": r"\([가-힣]+동\)$", "ref_dong_apt": r"\([가-힣]+동, [^)]+\)$",
        "ref_apt_only": r"(읍|면) .*\((?![가-힣]+동[,)])[^)]+\)$", "short_sido": rf"^{_SHORT} ",
        "full_sido": r"^(서울특별시|[가-힣]+광역시|경기도|충청북도|충청남도|전라남도|경상북도|경상남도|[가-힣]+특별자치도) ",
        "gu_in_city": r"^(경기도|경기|충청북도|충북|경상북도|경북|경상남도|경남|전북특별자치도|전북|충청남도|충남) [가-힣]+시 [가-힣]+구 ",
        "no_sido": r"^[가-힣]+(구|군|시) [가-힣]+",
    },
    "DRIVER_LICENSE": {"dashed": r"^\d{2}-\d{2}-\d{6}-\d{2}$", "plain": r"^\d{12}$",
                       "region_name": r"^[가-힣]{2} \d{2}-\d{6}-\d{2}$", "spaced": r"^\d{2} \d{2} \d{6} \d{2}$"},
    "RRN": {"dash": r"^\d{6}-[1-4]\d{6}$", "spaced_dash": r"^\d{6} - \d{7}$", "left_space": r"^\d{6} -\d{7}$",
            "right_space": r"^\d{6}- \d{7}$", "en_dash": r"^\d{6}–\d{7}$", "space": r"^\d{6} \d{7}$",
            "plain": r"^\d{13}$"},
    "FRN": {"dash": r"^\d{6}-[5-8]\d{6}$", "plain": r"^\d{6}[5-8]\d{6}$"},
    "CORP_REG": {"dash": r"^\d{6}-\d{7}$", "plain": r"^\d{13}$", "spaced": r"^\d{6} - \d{7}$"},
    "BUSINESS_REG": {"dash": r"^\d{3}-\d{2}-\d{5}$", "plain": r"^\d{10}$"},
    "MEDICAL_INSURANCE": {"dash": r"^\d-\d{10}$", "plain": r"^\d{11}$"},
    "PASSPORT": {"old": r"^[MSRDG]\d{8}$", "new": r"^[MSRDG]\d{3}[A-Z]\d{4}$"},
    "VEHICLE": {"two_digit": r"^\d{2}[가-힣] \d{4}$", "two_digit_tight": r"^\d{2}[가-힣]\d{4}$",
                "three_digit": r"^\d{3}[가-힣] \d{4}$", "three_digit_tight": r"^\d{3}[가-힣]\d{4}$",
                "region": r"^[가-힣]{2} \d{2}[가-힣] \d{4}$", "rental": r"[하허호] ?\d{4}$"},
    "PHONE": {"mobile": r"^010-\d{4}-\d{4}$", "mobile_spaces": r"^010 \d{4} \d{4}$", "mobile_plain": r"^010\d{8}$",
              "legacy": r"^01[1679]", "seoul": r"^02-\d{3,4}-\d{4}$", "area": r"^0[3-6]\d-\d{3,4}-\d{4}$",
              "area_paren": r"^\(0\d{1,2}\) ", "intl": r"^\+82", "representative": r"^1[5-8]\d{2}-\d{4}$",
              "voip": r"^070-"},
    "FAX": {"area": r"^0\d{1,2}-\d{3,4}-\d{4}$", "0505": r"^0505-"},
    "CARD": {"dash16": r"^\d{4}-\d{4}-\d{4}-\d{4}$", "space16": r"^\d{4} \d{4} \d{4} \d{4}$", "plain": r"^\d{15,16}$",
             "amex": r"^3[47]\d{2}-\d{6}-\d{5}$"},
    "ACCOUNT": {"dash": r"^\d+-\d+-\d+$", "four_groups": r"^\d+-\d+-\d+-\d+$", "plain": r"^\d{11,14}$"},
    "EMAIL": {"provider": r"@(naver\.com|gmail\.com|daum\.net)$", "gov": r"@korea\.kr$", "company": r"\.co\.kr$"},
    "URL": {"https": r"^https://", "http": r"^http://", "bare_www": r"^www\.", "query": r"\?"},
    "IP": {"private": r"^(192\.168|10)\.", "public": r"^(?!192\.168|10\.)\d"},
    "PERSON": {"compound": r"^(황보|남궁|선우|제갈|독고|사공|서문)[가-힣]{2}$", "two_syllable": r"^[가-힣]{2}$",
               "canonical": r"^(홍길동|김철수|이영희|김영희)$", "four_single": r"^[가-힣][가-힣]{3}$"},
    "POSTAL_CODE": {"five_digits": r"^\d{5}$"},
    E.DOB_LABEL: {"korean": r"^\d{4}년 \d{1,2}월 \d{1,2}일$", "dots": r"^\d{4}\.\d{2}\.\d{2}$",
                      "short": r"^\d{2}\.\d{1,2}\.\d{1,2}$", "iso": r"^\d{4}-\d{2}-\d{2}$", "six": r"^\d{6}$"},
    "AGE": {"man": r"^만 \d+세$", "se": r"^\d+세$", "bare": r"^\d+$"},
}

# label -> name -> (text just before the span must end with, text just after must start with)
CONTEXTS: dict[str, dict[str, tuple[str, str]]] = {
    "PERSON": {
        "label_padded": ("성    명 : ", ""), "label_spaced": ("성 명: ", ""), "label_ireum": ("이  름 : ", ""),
        "title_before": ("주무관 ", ""), "title_after": ("", " 과장"), "signature": ("신청인  ", "  (서명 또는 인)"),
        "ceo": ("대표이사 ", ""), "damdang": ("(담당: ", ", 전화 "), "court": ("원 고  ", ""),
        "chat_speaker": ("[", "] ["), "html_cell": ("<td>", "</td>"), "email_from": ("From: ", " <"),
        "ireum_bare": ("이  름  ", ""), "damdang_jumugwan": ("담당 주무관 ", ""), "ceo_seal": ("대표이사 ", " (인)"),
        "honorific": ("", "님"), "particle_after": ("", "입니다."),
    },
    "POSTAL_CODE": {"postal_paren": ("(", ") "), "postal_u": ("우 ", "  "), "postal_word": ("우편번호 ", "")},
    E.DOB_LABEL: {"dob_label": ("생년월일: ", ""), "dob_chulsaeng": ("출생 ", "")},
    "AGE": {"age_label": ("나이: ", "")},
    "FAX": {"fax_jeonsong": ("전송 ", ""), "fax_word": ("팩스 ", "")},
    "MEDICAL_INSURANCE": {
        "health_label": ("건강보험증번호 : ", ""), "health_label2": ("피보험자 증번호 : ", ""),
        "health_label_space": ("건강보험 증번호 : ", ""), "health_bojeung": ("보험증 번호: ", ""),
    },
    "CORP_REG": {"corp_label": ("법인등록번호: ", ""), "corp_label2": ("등록번호(법인): ", ""),
                 "corp_th": ("<th>등록번호(법인)</th><td>", "</td>")},
}


def test_every_format_variant_in_both_splits(written):
    for split, recs in written["records"].items():
        assert not missing_variants(recs, VARIANTS), split


def test_every_context_variant_in_both_splits(written):
    for split, recs in written["records"].items():
        missing = []
        for label, contexts in CONTEXTS.items():
            for name, (before, after) in contexts.items():
                if not any(r["text"][:s["start"]].endswith(before) and r["text"][s["end"]:].startswith(after)
                           for r, s in _spans(recs, label)):
                    missing.append(name)
        assert not missing, (split, missing)


NEGATIVES = {
    "case_number": r"\d{4}(가합|가단|가소|나|고단|고합|노|구합|구단)\d+", "statute": r"제\d+조( 제\d+항)?",
    "doc_number": r"[가-힣]+(과|팀|관)-\d+", "money": r"\d{1,3}(,\d{3})+원", "percent": r"\d+(\.\d)?%",
    "isbn": r"ISBN 978-89-[\d-]+", "order": r"주문번호 \d{8}-\d{7}", "count5": r"총 \d{5}건",
    "place_event": r"에서 열린 ", "gu_office": r"[가-힣]+(구|군|시)청은 ", "surname_words": r"(이번|정부는|김치|이상의)",
    "complaint_no": r"1AA-\d{4}-\d{7}", "parcel": r"송장번호 \d{4}-\d{4}-\d{4}", "time": r"\d{1,2}:\d{2}",
    "year_range": r"\d{4}~\d{4}년",
}


def test_negatives_occur_and_are_not_labelled(written):
    for split, recs in written["records"].items():
        seen = dict.fromkeys(NEGATIVES, 0)
        for r in recs:
            spans = [(s["start"], s["end"]) for s in r["spans"]]
            for name, pat in NEGATIVES.items():
                for m in re.finditer(pat, r["text"]):
                    seen[name] += 1
                    assert not any(s < m.end() and m.start() < e for s, e in spans), (r["id"], name, m.group())
        assert all(seen.values()), (split, seen)
