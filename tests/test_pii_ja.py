"""Japanese PII detection (corpora/lang/ja/pii): real presidio and real MeCab (unidic-lite), exact spans (start, end,
type) on hand-written sentences for every type, check digits both ways, negatives, the fast path against
presidio's engine, the CLI with --language ja and the pii_detect stage with language: ja."""

from __future__ import annotations

import json
import random
import types

import pytest

pytest.importorskip("unidic_lite", reason="the `ja` extra is not installed (pip install -e '.[ja]')")

import pyarrow.parquet as pq  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from stdnum.jp import cn, in_  # noqa: E402

from corpora.lang.ja import PII_TYPES as JA_TYPES  # noqa: E402
from corpora.lang.ja.pii import names  # noqa: E402
from corpora.lang.ja.pii.patterns import PREFECTURES, corporate_number_ok, fold, my_number_ok  # noqa: E402
from corpora.pii.cli import pii  # noqa: E402
from corpora.pii.engine import PiiDetector, build_analyzer  # noqa: E402
from corpora.pii.spans import read_spans  # noqa: E402
from corpora.shards import Doc, doc_id, iter_docs, list_shards, meta_json, write_docs  # noqa: E402
from corpora.stages.pii import PiiReplaceParams, PiiReplaceStage  # noqa: E402
from corpora.stages.pii_detect import PiiDetectParams, PiiDetectStage  # noqa: E402
from pipeline.stage import StageContext, StageInput  # noqa: E402
from testkit.pii_cli import detect, write_jsonl  # noqa: E402


def my_number(base: str) -> str:
    """A valid My Number from its first 11 digits (check digit: 施行令 第8条, python-stdnum)."""
    return base + in_.calc_check_digit(base)


def corporate_number(base: str) -> str:
    """A valid corporate number from its last 12 digits (the check digit leads)."""
    return cn.calc_check_digit(base) + base


MY = my_number("62149832025")  # 621498320257, stdnum's own example
MY_BAD = MY[:-1] + str((int(MY[-1]) + 1) % 10)
CORP = corporate_number("835678256246")  # 5835678256246, stdnum's example
CORP_BAD = str(int(CORP[0]) % 9 + 1) + CORP[1:]


@pytest.fixture(scope="module")
def det() -> PiiDetector:
    return PiiDetector(language="ja")


def at(text: str, sub: str, type_: str, nth: int = 0) -> tuple[int, int, str]:
    i = -1
    for _ in range(nth + 1):
        i = text.index(sub, i + 1)
    return (i, i + len(sub), type_)


def found(det: PiiDetector, text: str) -> list[tuple[int, int, str]]:
    return [(s.start, s.end, s.type) for s in det.detect(text)]


def found_alone(det: PiiDetector, template: str, value: str, pii_type: str) -> None:
    """`value` set in `template` is found, as `pii_type`, and nothing else is."""
    text = template.format(value)
    assert found(det, text) == [at(text, value, pii_type)]


def test_check_digit_helpers_agree_with_the_law():
    assert MY == "621498320257" and my_number_ok(MY) and not my_number_ok(MY_BAD)
    assert CORP == "5835678256246" and corporate_number_ok(CORP) and not corporate_number_ok(CORP_BAD)
    # 施行令 第8条 by hand: Σ Pn×Qn over the 11 digits from the right, Qn = n+1 (n <= 6), n-5 (n >= 7)
    digits = [int(c) for c in reversed(MY[:11])]
    s = sum(p * (n + 1 if n <= 6 else n - 5) for n, p in enumerate(digits, 1))
    assert int(MY[-1]) == (0 if s % 11 <= 1 else 11 - s % 11)
    assert not my_number_ok("000000000000")  # passes the check, but a dummy
    assert len(PREFECTURES) == 47 and len(set(PREFECTURES)) == 47


def test_fold_keeps_every_offset():
    raw = "ＴＥＬ：０３（１２３４）５６７８、携帯０９０ー１２３４ー５６７８、コーヒー"
    f = fold(raw)
    assert len(f) == len(raw) and f == "TEL:03(1234)5678、携帯090-1234-5678、コーヒー" and fold(f) == f
    assert fold("ascii only 03-1234-5678") == "ascii only 03-1234-5678"


# ---- phone and fax -----------------------------------------------------------------------------------------
PHONES = [
    "03-1234-5678", "06-6123-4567", "045-123-4567", "0466-12-3456", "01267-1-2345", "(03)1234-5678",
    "03(1234)5678", "03 1234 5678", "090-1234-5678", "080 1234 5678", "070-1234-5678", "050-1234-5678",
    "09012345678", "+81-3-1234-5678", "+81 90-1234-5678", "+81(0)3-1234-5678", "0120-123-456",
    "0800-123-4567", "0570-064-556", "０３－１２３４－５６７８", "（０３）１２３４－５６７８", "03ー1234ー5678",
]


@pytest.mark.parametrize("number", PHONES)
def test_phone_numbers(det, number):
    found_alone(det, "お問い合わせは{}までご連絡ください。", number, "PHONE")


def test_phone_keys_context_and_fax(det):
    t = "TEL.03-1234-5678 / TEL03-1234-5679 / ℡ 03-1234-5670"
    assert found(det, t) == [at(t, "03-1234-5678", "PHONE"), at(t, "03-1234-5679", "PHONE"),
                             at(t, "03-1234-5670", "PHONE")]
    # ten bare digits only with a phone word near
    assert found(det, "受付番号0312345678です") == []
    t = "電話：0312345678"
    assert found(det, t) == [at(t, "0312345678", "PHONE")]
    t = "TEL 03-1234-5678 FAX 03-1234-5679、ＦＡＸ：０６－６１２３－４５６７"
    assert found(det, t) == [at(t, "03-1234-5678", "PHONE"), at(t, "03-1234-5679", "FAX"),
                             at(t, "０６－６１２３－４５６７", "FAX")]


@pytest.mark.parametrize("text", [
    "2024-01-15に開催", "2024/01/15", "価格は1,234,567円(税込)", "¥12,800", "03-12-2024", "1960-1970年",
    "型番 03-1234-5678", "品番:090-1234-5678", "ABC-03-1234-5678", "ISBN978-4-10-109205-8",
    "0120-00-0000", "03-1234-56789", "031-234-567", "00-1234-5678", "1-2345-6789",
])
def test_not_phone_numbers(det, text):
    assert [s.type for s in det.detect(text)] == []


# ---- postal codes ------------------------------------------------------------------------------------------
def test_postal_codes(det):
    for t, code in [("〒100-0001", "100-0001"), ("〒1000001", "1000001"), ("〒 100-0001", "100-0001"),
                    ("郵便番号：100-0001", "100-0001"), ("住所 530-0001", "530-0001")]:
        assert found(det, t) == [at(t, code, "POSTAL_CODE")], t
    t = "100-0001 東京都千代田区千代田1-1"
    assert found(det, t) == [at(t, "100-0001", "POSTAL_CODE"), at(t, "東京都千代田区千代田1-1", "ADDRESS")]
    # bare NNN-NNNN outside an address context: a code, a range, a part number
    for t in ["部品100-0001を交換", "123-4567件", "電話 123-4567", "〒000-0000"]:
        assert [s.type for s in det.detect(t)] == [], t


# ---- My Number and corporate numbers -----------------------------------------------------------------------
def test_my_number(det):
    spaced, hyph = f"{MY[:4]} {MY[4:8]} {MY[8:]}", f"{MY[:4]}-{MY[4:8]}-{MY[8:]}"
    for t, sub in [(f"番号 {spaced} を記入", spaced), (f"{hyph}", hyph), (f"マイナンバー：{MY}", MY),
                   (f"個人番号は{spaced}です", spaced)]:
        assert found(det, t) == [at(t, sub, "MY_NUMBER")], t
    # twelve bare digits with a valid check digit but no context word: one number in ten passes the check
    assert found(det, f"整理番号{MY}") == []
    # a failed check digit is no My Number, whatever the label says; nor a dummy
    for t in [f"マイナンバー：{MY_BAD}", f"{MY_BAD[:4]} {MY_BAD[4:8]} {MY_BAD[8:]}", "個人番号 0000 0000 0000"]:
        assert found(det, t) == [], t
    # the 12-digit 会社法人等番号 is a corporate number (its label demotes the My Number reading)
    t = f"会社法人等番号 {MY}"
    assert found(det, t) == [at(t, MY, "CORPORATE_NUMBER")]
    t = "会社法人等番号：0100-01-123456"
    assert found(det, t) == [at(t, "0100-01-123456", "CORPORATE_NUMBER")]
    # a 16-digit card number is not read as a My Number inside it
    card = f"4111 {MY[:4]} {MY[4:8]} {MY[8:]}"
    assert [s.type for s in det.detect(f"カード {card}")] == ["CARD"]


def test_plain_twelve_and_thirteen_digit_numbers_need_context(det):
    rng = random.Random(3)
    for _ in range(300):
        n12 = my_number("".join(rng.choice("0123456789") for _ in range(11)))
        n13 = corporate_number("".join(rng.choice("0123456789") for _ in range(12)))
        assert det.detect(f"ID{n12}、数値 {n13} を記録した。") == [], (n12, n13)


def test_corporate_numbers(det):
    grouped = f"{CORP[0]}-{CORP[1:5]}-{CORP[5:9]}-{CORP[9:]}"
    for t, sub in [(f"法人番号 {CORP}", CORP), (f"当社の法人番号は{CORP}です", CORP), (grouped, grouped),
                   (f"登録番号：T{CORP}", f"T{CORP}"), (f"T{CORP}", f"T{CORP}"), (f"T-{CORP}", f"T-{CORP}")]:
        assert found(det, t) == [at(t, sub, "CORPORATE_NUMBER")], t
    for t in [f"法人番号 {CORP_BAD}", f"T{CORP_BAD}", f"{CORP_BAD[0]}-{CORP_BAD[1:5]}-{CORP_BAD[5:9]}-{CORP_BAD[9:]}",
              f"JANコード {CORP}", f"受付 {CORP}"]:
        assert found(det, t) == [], t


# ---- addresses ---------------------------------------------------------------------------------------------
ADDRESSES = [
    "東京都千代田区千代田1-1",
    "大阪府大阪市北区梅田３丁目１番１号",
    "北海道札幌市中央区北1条西2丁目",
    "東京都千代田区丸の内一丁目9番1号",
    "神奈川県横浜市西区みなとみらい2-2-1",
    "京都府京都市中京区烏丸通御池上る二条殿町538",
    "長野県北佐久郡軽井沢町大字軽井沢1323",
    "東京都府中市宮西町2-24",
    "埼玉県さいたま市浦和区高砂3丁目15番1号",
    "東京都港区六本木6-10-1 六本木ヒルズ森タワー 10階",
    "東京都中央区銀座1-2-3 銀座ビル 302号室",
    "東京都練馬区光が丘2-9-6-101号室",
    "愛知県名古屋市中村区名駅1丁目1番4号 JRセントラルタワーズ15階",
]


@pytest.mark.parametrize("address", ADDRESSES)
def test_addresses(det, address):
    found_alone(det, "住所は{}です。", address, "ADDRESS")


def test_addresses_without_prefecture_and_not_addresses(det):
    t = "本社：港区六本木6-10-1"
    assert found(det, t) == [at(t, "港区六本木6-10-1", "ADDRESS")]
    t = "大阪市北区梅田3丁目1番1号に移転"
    assert found(det, t) == [at(t, "大阪市北区梅田3丁目1番1号", "ADDRESS")]
    for t in ["東京都千代田区で生まれた", "大阪府大阪市出身", "東京都の人口は1400万人", "北海道では2024年に",
              "東京都港区では1-2位", "東京都港区にある3丁目", "選挙区1-2で", "北西地区3番ストリート",
              "ドイツの大都市中39番目", "豊田市駅東側の参合館の3-7階", "中心市街地の中央2丁目", "国道433号線"]:
        assert [s.type for s in det.detect(t)] == [], t


# ---- person names ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "name"), [
    ("山田太郎さんに会った。", "山田太郎"), ("田中 花子様へ", "田中 花子"), ("佐藤氏によれば", "佐藤"),
    ("鈴木先生の授業", "鈴木"), ("花子ちゃんと遊んだ", "花子"), ("健君が来た", "健"), ("山田 様", "山田"),
    ("作家の夏目漱石は", "夏目漱石"), ("ジョン・スミス氏が来日した", "ジョン・スミス"),
    ("ジョン・F・ケネディは", "ジョン・F・ケネディ"), ("二階堂清寿に会う", "二階堂清寿"),
])
def test_person_names(det, text, name):
    assert found(det, text) == [at(text, name, "PERSON")]


@pytest.mark.parametrize("text", [
    "中村は美しい町だ。", "松本城へ行った。", "王様と神様", "お客様各位", "皆様へ", "仲居さんが来た",
    "吉田の駅前", "ディズニー・シーに行った", "今禎子にできることは", "高いへいが立っている",
])
def test_not_person_names(det, text):
    assert [s.type for s in det.detect(text)] == []


def test_mecab_offsets_add_up():
    text = "\t山田\u3000太郎  さん\r\n\n ジョン・スミス\x00氏　" + "あ" * 5000 + "。山田花子"
    toks = names.tokens(text)
    assert all(text[s:e] == surface for s, e, surface, _ in toks)
    assert "".join(t[2] for t in toks) == "".join(c for c in text if not c.isspace() and c != "\x00")


# ---- shared recognizers, the whole document, the engines ---------------------------------------------------
def test_shared_recognizers_with_japanese_context(det):
    t = "メール：taro.yamada@example.co.jp、ＵＲＬ：https://example.jp/contact、IPアドレス 192.168.0.1、" \
        "カード番号 4111 1111 1111 1111、全角 ｔａｒｏ＠ｅｘａｍｐｌｅ．ｊｐ"
    assert found(det, t) == [at(t, "taro.yamada@example.co.jp", "EMAIL"), at(t, "https://example.jp/contact", "URL"),
                             at(t, "192.168.0.1", "IP"), at(t, "4111 1111 1111 1111", "CARD"),
                             at(t, "ｔａｒｏ＠ｅｘａｍｐｌｅ．ｊｐ", "EMAIL")]
    assert {s.recognizer for s in det.detect(t)} == {"ja_email", "ja_url", "ja_ip", "ja_card"}


LETTER = ("〒100-8111\n東京都千代田区千代田1-1 宮内庁ビル 3階\n山田太郎 様\n\n"
          "拝啓　担当の佐藤花子です。ご不明な点は電話 03-3213-1111（平日）、携帯 090-1234-5678、"
          f"FAX 03-3213-1112 またはメール sato@example.go.jp までご連絡ください。\n"
          f"当社の法人番号：{CORP}、インボイス登録番号 T{CORP}、マイナンバー {MY[:4]} {MY[4:8]} {MY[8:]}")


def test_a_whole_letter(det):
    assert found(det, LETTER) == [
        at(LETTER, "100-8111", "POSTAL_CODE"), at(LETTER, "東京都千代田区千代田1-1 宮内庁ビル 3階", "ADDRESS"),
        at(LETTER, "山田太郎", "PERSON"), at(LETTER, "佐藤花子", "PERSON"), at(LETTER, "03-3213-1111", "PHONE"),
        at(LETTER, "090-1234-5678", "PHONE"), at(LETTER, "03-3213-1112", "FAX"),
        at(LETTER, "sato@example.go.jp", "EMAIL"), at(LETTER, CORP, "CORPORATE_NUMBER"),
        at(LETTER, f"T{CORP}", "CORPORATE_NUMBER"), at(LETTER, f"{MY[:4]} {MY[4:8]} {MY[8:]}", "MY_NUMBER")]
    assert {t for *_, t in found(det, LETTER)} == set(JA_TYPES) - {"CARD", "URL", "IP"}


def test_fast_path_equals_presidio_and_presidio_reads_raw_text(det):
    texts = [LETTER, *ADDRESSES, *PHONES, "ジョン・スミス氏と山田太郎さん", "", "ａ" * 300,
             "住所：〒530-0001 大阪府大阪市北区梅田3-1-1\nTEL:06-1234-5678\n" * 5]
    assert [det.detect(t) for t in texts] == det.detect_presidio(texts)
    # presidio's own engine on raw full-width text: the pattern recognizers fold it themselves
    analyzer = build_analyzer(language="ja")
    raw = "電話：０３－１２３４－５６７８"
    res = analyzer.analyze(raw, language="ja", score_threshold=0.4)
    assert [(r.start, r.end, r.entity_type) for r in res] == [at(raw, "０３－１２３４－５６７８", "PHONE")]


def test_languages_keep_their_own_types():
    with pytest.raises(ValueError, match=r"unknown PII types \['MY_NUMBER'\] for language 'ko'"):
        PiiDetector(types=["MY_NUMBER"], language="ko")
    with pytest.raises(ValueError, match=r"unknown PII types \['RRN'\] for language 'ja'"):
        PiiDetector(types=["RRN"], language="ja")
    with pytest.raises(ValueError, match=r"no PII recognizers for language 'xx'.*ko, ja"):
        PiiDetector(language="xx")
    ko = PiiDetector(types=["PHONE", "EMAIL"], language="ko")
    assert [s.type for s in ko.detect("전화 02-2110-6543")] == ["PHONE"]
    assert {r.name for r in ko.recognizers} == {"ko_phone", "ko_phone_representative", "ko_phone_short",
                                                "ko_labelled_phone", "ko_labelled_phone_column", "ko_email"}


# ---- CLI ---------------------------------------------------------------------------------------------------
def test_cli_detect_and_eval_with_language_ja(tmp_path):
    recs = [{"id": 1, "text": "山田太郎様（電話 03-1234-5678）"}, {"id": 2, "text": "2024年1月15日に開催された。"}]
    src, out = write_jsonl(tmp_path / "in.jsonl", recs), tmp_path / "out.jsonl"
    got = detect(src, out, "--language", "ja")
    assert [(recs[0]["text"][s["start"]:s["end"]], s["type"]) for s in got[0]["pii_spans"]] == [
        ("山田太郎", "PERSON"), ("03-1234-5678", "PHONE")]
    assert got[1]["pii_spans"] == []
    # the Korean default reads neither the Japanese name nor 03 (no Korean area code)
    assert detect(src, out)[0]["pii_spans"] == []
    res = CliRunner().invoke(pii, ["detect", str(src), "--output", str(out), "--language", "xx"])
    assert res.exit_code != 0 and "'xx' is not one of 'ko', 'ja'" in res.output

    gold = tmp_path / "gold.jsonl"
    docs = [LETTER, "連絡先：090-1234-5678（田中）", "特に個人情報はない文です。"]
    rows = []
    for text in docs:
        spans = [{"label": t, "start": s, "end": e} for s, e, t in found(PiiDetector(language="ja"), text)]
        rows.append({"text": text, "spans": spans})
    rows[1]["spans"].append({"label": "PERSON", "start": rows[1]["text"].index("田中"),
                             "end": rows[1]["text"].index("田中") + 2})  # a lone surname: not found
    gold.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows) + "\n", encoding="utf-8")
    res = CliRunner().invoke(pii, ["eval", str(gold), "--language", "ja", "--format", "json"])
    assert res.exit_code == 0, res.output
    both = json.loads(res.output)[str(gold)]
    ours, shipped = both["klue-pipeline"], both["presidio (shipped)"]
    assert ours["documents"] == 3 and ours["overall"]["precision"] == 1.0
    assert ours["per_type"]["PERSON"]["recall"] == 0.6667 and ours["per_type"]["MY_NUMBER"]["recall"] == 1.0
    assert ours["structured"]["recall"] == 1.0
    assert shipped["per_type"].get("MY_NUMBER", {"targeted": False})["targeted"] is False
    res = CliRunner().invoke(pii, ["eval", str(gold), "--language", "ja", "--optional-types", "AGE"])
    assert res.exit_code != 0 and "AGE" in res.output and "'ja'" in res.output


# ---- the pii_detect stage ----------------------------------------------------------------------------------
def _ctx(out, params, inputs, workers: int = 1) -> StageContext:
    out.mkdir(parents=True, exist_ok=True)
    return StageContext(out_dir=out, params=params, recipe=types.SimpleNamespace(seed=42, sources=[]),
                        workers=workers, inputs={k: StageInput(k, p, {"meta": {}}) for k, p in inputs.items()})


def test_the_stage_with_language_ja(tmp_path):
    src = tmp_path / "decontaminate"
    texts = [LETTER, "今日は晴れ。気温は23度、来場者は1,234人だった。", "佐藤氏の携帯は080-1111-2222です。", ""]
    docs = [Doc(doc_id("ja", "a.txt", i), t, "ja", meta_json({"i": i})) for i, t in enumerate(texts)]
    write_docs(src / "shard-00000.parquet", docs[:2])
    write_docs(src / "shard-00001.parquet", docs[2:])
    params = PiiDetectParams(language="ja")
    det = PiiDetectStage().run(_ctx(tmp_path / "det", params, {"decontaminate": src}))
    report = det.meta["report"]
    assert report["language"] == "ja" and report["types"] == list(JA_TYPES)
    assert report["docs"] == 4 and report["docs_with_pii"] == 2 and report["docs_failed"] == 0
    assert report["spans_per_type"] == {"ADDRESS": 1, "CORPORATE_NUMBER": 2, "EMAIL": 1, "FAX": 1, "MY_NUMBER": 1,
                                        "PERSON": 3, "PHONE": 3, "POSTAL_CODE": 1}
    spans = {}
    for p in sorted((tmp_path / "det").glob("spans-*.parquet")):
        assert pq.read_schema(p).names == ["id", "start", "end", "type", "score", "recognizer"]
        spans.update(read_spans(p))
    want = PiiDetector(language="ja").detect(LETTER)
    assert spans[docs[0].id] == want
    # two workers: byte-identical span files
    PiiDetectStage().run(_ctx(tmp_path / "det2", params, {"decontaminate": src}, workers=2))
    for p in (tmp_path / "det").glob("spans-*.parquet"):
        assert (tmp_path / "det2" / p.name).read_bytes() == p.read_bytes()
    # the replace stage writes (and reserves) the Japanese placeholders
    rep_ctx = _ctx(tmp_path / "pii", PiiReplaceParams(language="ko"), {"decontaminate": src})
    rep_ctx.inputs["pii_detect"] = StageInput("pii_detect", tmp_path / "det", {"meta": det.meta})
    res = PiiReplaceStage().run(rep_ctx)
    assert {"[MY_NUMBER]", "[CORPORATE_NUMBER]", "[POSTAL_CODE]", "[ADDRESS]"} <= set(res.meta["placeholder_tokens"])
    out = {d.id: d.text for s in list_shards(tmp_path / "pii") for d in iter_docs(s)}
    assert out[docs[2].id] == "[PERSON]氏の携帯は[PHONE]です。" and out[docs[1].id] == texts[1]
    assert "マイナンバー [MY_NUMBER]" in out[docs[0].id] and "〒[POSTAL_CODE]\n[ADDRESS]\n[PERSON] 様" in out[docs[0].id]


def test_surrogate_mode_writes_japanese_fakes_with_valid_check_digits(tmp_path):
    """`pii: {mode: surrogate}` with `language: ja` (the recipe fills it in): names in Japanese script, a
    Japanese phone, and a My Number that passes its check digit, so the pretraining text keeps its form."""
    from stdnum.jp import in_

    src = tmp_path / "decontaminate"
    texts = ["佐藤氏の携帯は080-1111-2222です。", "マイナンバー 1234 5678 9018 の確認をお願いします。"]
    docs = [Doc(doc_id("ja", "a.txt", i), t, "ja", meta_json({})) for i, t in enumerate(texts)]
    write_docs(src / "shard-00000.parquet", docs)
    det = PiiDetectStage().run(_ctx(tmp_path / "det", PiiDetectParams(language="ja"), {"decontaminate": src}))
    assert det.meta["report"]["spans_per_type"] == {"MY_NUMBER": 1, "PERSON": 1, "PHONE": 1}
    out = {}
    for lang in ("ja", "ko"):
        ctx = _ctx(tmp_path / f"pii-{lang}", PiiReplaceParams(mode="surrogate", language=lang),
                   {"decontaminate": src})
        ctx.inputs["pii_detect"] = StageInput("pii_detect", tmp_path / "det", {"meta": det.meta})
        PiiReplaceStage().run(ctx)
        out[lang] = [d.text for sh in list_shards(tmp_path / f"pii-{lang}") for d in iter_docs(sh)]
    name = out["ja"][0].split("氏の携帯は")[0]
    assert name and all("\u3040" <= c <= "\u30ff" or "\u4e00" <= c <= "\u9fff" for c in name), out["ja"]
    phone = out["ja"][0].split("氏の携帯は")[1].removesuffix("です。")
    assert phone != "080-1111-2222" and phone.startswith("0"), phone
    number = out["ja"][1].removeprefix("マイナンバー ").split(" の確認")[0]
    assert number != "1234 5678 9018" and in_.is_valid(number.replace(" ", "")), number
    # the Korean surrogates of the same spans are Hangul names: the language decides
    ko_name = out["ko"][0].split("氏の携帯は")[0]
    assert all("\uac00" <= c <= "\ud7a3" for c in ko_name), out["ko"]


def test_stage_params_validate_the_language():
    assert PiiDetectParams(language="ko").language == "ko" and PiiDetectParams(language="ko").types[:2] == ("PERSON", "PHONE")
    assert "language" in PiiDetectParams.model_fields  # so the recipe's top-level `language:` reaches it
    with pytest.raises(ValueError, match=r"unknown language 'xx'"):
        PiiDetectParams(language="xx")
    with pytest.raises(ValueError, match=r"optional_types \['AGE'\] have no recognizer for language 'ja'"):
        PiiDetectParams(language="ja", optional_types=["AGE"])
    assert PiiDetectParams(language="ja", optional_types=["POSTAL_CODE"]).types == JA_TYPES  # on by default


# ---- no planted PII: a regression guard on the shared corpora (the measurement: corpora/lang/ja/pii/measure.py) -----
@pytest.mark.shared_data
def test_no_structured_identifier_in_wikipedia_paragraphs(shared_data, det):
    from corpora.lang.ja.pii.measure import WIKI, scan, wiki_paragraphs

    r = scan(wiki_paragraphs(shared_data / WIKI, 500), det)
    structured = {t: k for t, k in r["per_type"].items() if t not in ("PERSON", "ADDRESS")}
    assert structured == {}, [s for s in r["spans"] if s["type"] in structured]


# ---- names the layout marks (corpora.lang.ja.pii.names.anchored_names) ----------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ("氏名　大橋　希佳\n電話 03-1234-5678", ["大橋\u3000希佳"]),           # a form's label
    ("【氏名】上野　かいと", ["上野\u3000かいと"]),
    ("ふりがな　すずき けんいち", ["すずき けんいち"]),
    ("原　　告　　長田若羽\n被告人　山田太郎は", ["長田若羽", "山田太郎"]),   # the particle stays out
    ("同代表者代表取締役　佐藤りく", ["佐藤りく"]),
    ("[LINE] 理菜とのトーク履歴\n18:23\t理菜\twww\n18:24\tまいさき🍓\t了解", ["理菜", "理菜", "まいさき"]),
    ("From: 長谷川りく <riku@example.co.jp>", ["長谷川りく"]),
    ("株式会社アクアメディカルの山口です。", ["山口"]),                        # a self-introduction
    ("出席者：安藤委員長、斉藤理事", ["安藤", "斉藤"]),                         # surname + title
    ("品質保証部 岡本様", ["岡本"]),                                        # the department stays out
    ("渡辺颯平 様", ["渡辺颯平"]),                                          # an addressee line
])
def test_names_marked_by_the_layout(text, expected):
    assert [text[s:e] for s, e, _ in names.anchored_names(text)] == expected


@pytest.mark.parametrize("text", [
    "担当：営業部", "宛先：総務課", "市の委員会で審議した。", "東京の桜です。", "18:23 集合です", "From: info <a@b.jp>",
    "理事会の議事録", "委員長の選出について",
])
def test_layout_rules_leave_labels_organisations_and_prose_alone(text):
    assert names.anchored_names(text) == []
