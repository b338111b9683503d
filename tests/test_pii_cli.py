"""`klue pii detect` and `klue pii eval` end to end on small files (real detector, click runner)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from corpora.pii.cli import pii
from testkit.pii_cli import detect, write_jsonl


def test_detect_adds_spans_and_keeps_records(tmp_path):
    recs = [{"id": 1, "body": "담당자 이서연 주무관 (02-2110-6543, lsy@me.go.kr)"}, {"id": 2, "body": "2024년 5월"}]
    got = detect(write_jsonl(tmp_path / "in.jsonl", recs), tmp_path / "out.jsonl", "--text-field", "body")
    assert [g["id"] for g in got] == [1, 2] and got[0]["body"] == recs[0]["body"]
    spans = got[0]["pii_spans"]
    assert {tuple(sorted(s)) for s in spans} == {("end", "recognizer", "score", "start", "type")}
    assert [s["recognizer"] for s in spans] == ["ko_person_mecab", "ko_phone", "ko_email"]
    assert [(recs[0]["body"][s["start"]:s["end"]], s["type"]) for s in spans] == [
        ("이서연", "PERSON"), ("02-2110-6543", "PHONE"), ("lsy@me.go.kr", "EMAIL")]
    assert got[1]["pii_spans"] == []


def test_detect_names_bad_line(tmp_path):
    src = tmp_path / "bad.jsonl"
    src.write_text('{"text": "ok"}\n{"text": broken\n', encoding="utf-8")
    res = CliRunner().invoke(pii, ["detect", str(src), "--output", str(tmp_path / "o.jsonl")])
    assert res.exit_code != 0 and f"{src}:2" in res.output and "not valid JSON" in res.output
    assert not (tmp_path / "o.jsonl").exists()  # nothing half-written
    src.write_text('{"body": "x"}\n', encoding="utf-8")
    res = CliRunner().invoke(pii, ["detect", str(src), "--output", str(tmp_path / "o.jsonl")])
    assert res.exit_code != 0 and "'text'" in res.output


def test_eval_table_and_json(fixtures_dir):
    gold = fixtures_dir / "pii" / "synth_gold.jsonl"
    res = CliRunner().invoke(pii, ["eval", str(gold), "--format", "json"])
    assert res.exit_code == 0, res.output
    both = json.loads(res.output)[str(gold)]
    assert set(both) == {"klue-pipeline", "presidio (shipped)", "ko-pii (shipped)"}
    data = both["klue-pipeline"]
    n_gold = sum(len(json.loads(x)["spans"]) for x in gold.read_text(encoding="utf-8").splitlines())
    assert data["documents"] == 40 and data["overall"]["support"] == n_gold
    assert data["structured"]["recall"] >= 0.95 and data["overall"]["precision"] >= 0.95
    # presidio's recognizers cover no name, address, account or health-insurance number: its structured recall
    # (over the types it targets) is measured, and PERSON is not among its types
    assert both["presidio (shipped)"]["per_type"].get("PERSON", {"targeted": False})["targeted"] is False
    assert both["presidio (shipped)"]["per_type"]["PHONE"]["targeted"] is True
    for det in both.values():  # each detector timed on the same file
        assert det["throughput"]["docs_per_s"] > 0 and det["throughput"]["cpu_s"] > 0
    table = CliRunner().invoke(pii, ["eval", str(gold), "--baseline", "none"])
    assert table.exit_code == 0 and "OVERALL" in table.output and "PHONE" in table.output
    assert "presidio" not in table.output and "ADDRESS (>= 80 % of characters covered)" in table.output
    assert "ko-pii" not in table.output and "throughput: documents / CPU second" in table.output
    one = CliRunner().invoke(pii, ["eval", str(gold), "--baseline", "ko-pii", "--format", "json"])
    assert one.exit_code == 0 and set(json.loads(one.output)[str(gold)]) == {"klue-pipeline", "ko-pii (shipped)"}
    bad = CliRunner().invoke(pii, ["eval", str(gold), "--baseline", "none", "--baseline", "presidio"])
    assert bad.exit_code != 0 and "none excludes" in bad.output


def test_ko_pii_side_by_side_maps_its_labels_to_ours():
    """ko-pii's labels are ours where the thing is the same; labels with no counterpart are not asked for, and
    what it finds comes back as our spans (our type names, its character offsets)."""
    from corpora.pii.evaluate import KO_PII_TYPES, KoPii
    from corpora.pii.types import ALL_TYPES, OPTIONAL_TYPES

    assert set(KO_PII_TYPES.values()) <= set(ALL_TYPES + OPTIONAL_TYPES)
    det = KoPii()
    assert set(det.entities) <= set(ALL_TYPES) and "DT_BIRTH" not in det.entities  # optional types: when asked
    assert "DT_BIRTH" in KoPii(types=[*ALL_TYPES, "DT_BIRTH"]).entities
    text = "연락처 010-1234-5678, 이메일 lsy@me.go.kr 사건번호 2023가합12345"
    spans = det.detect(text)
    assert [(s.type, text[s.start:s.end]) for s in spans] == [("PHONE", "010-1234-5678"), ("EMAIL", "lsy@me.go.kr")]
    assert all(s.recognizer.startswith("ko-pii") for s in spans)


def test_gen_is_the_workshops_command_reached_through_an_entry_point():
    """`klue pii gen` lives in datagen/ (which corpora/ does not import): the `pii` group lists it and runs it from
    the entry point pyproject declares; top-level names with no dot stay off the group."""
    import click

    from pipeline.plugins import plugin_commands

    assert plugin_commands("pii") == {"gen": "datagen.pii.cli:gen"}
    assert "pii.gen" not in plugin_commands() and "gen" not in plugin_commands()
    ctx = click.Context(pii)
    assert pii.list_commands(ctx) == ["detect", "eval", "gen"]
    gen = pii.get_command(ctx, "gen")
    assert gen is not None and gen.callback is not None and gen.callback.__module__ == "datagen.pii.cli"
    assert pii.get_command(ctx, "nope") is None
