"""Readers for official KLUE files and HF `datasets` copies, the guid-hash split, and RE entity marking."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from finetune.data import cap, guid_bucket, load_task_data, split_by_guid
from finetune.registry import TASKS, get_task, resolve_name, task_class
from finetune.tasks.base import DataError
from finetune.tasks.re import mark_entities

FX = Path(__file__).parent / "fixtures" / "finetune"


def test_registry_entries_resolve_to_task_classes():
    for name in TASKS:
        cls = task_class(name)
        assert cls.name == name
        task = get_task(name, FX)
        assert task.main_metric in task.metric_names
    assert resolve_name("KLUE-STS") == "sts" and resolve_name("klue-ner") == "ner" and resolve_name("KLUE-DP") == "dp"
    with pytest.raises(ValueError, match=r"unknown task 'pos'.*\(known: ynat, sts, nli, ner, re, dp, mrc, dst, jsts, jnli, jsquad, "
                                         r"jcommonsenseqa\)"):
        resolve_name("pos")


def test_official_split_when_train_exists_else_dev_split():
    ynat = load_task_data(get_task("ynat", FX), FX)
    assert ynat.source["split"] == "official"
    # the train file's 140 examples: what the model trains on plus the selection split (tests/test_selection_split.py)
    assert len(ynat.train) + len(ynat.select) == 140 and len(ynat.eval) == 56
    assert len(load_task_data(get_task("ynat", FX), FX, protocol="klue-baseline").train) == 140
    assert ynat.train[0] == {"guid": "ynat-v1.1_train_00000", "title": ynat.train[0]["title"], "label": 0}  # 정치
    sts = load_task_data(get_task("sts", FX), FX)
    assert sts.source["split"] == "dev-split" and "not comparable" in sts.source["note"]
    assert len(sts.train) + len(sts.select) + len(sts.eval) == 80
    assert not {e["guid"] for e in sts.train} & {e["guid"] for e in sts.eval}
    with pytest.raises(DataError, match="needs a sts train file"):
        load_task_data(get_task("sts", FX), FX, split="official")


def test_guid_split_is_deterministic_and_independent_of_order():
    examples = [{"guid": f"g{i}"} for i in range(1000)]
    _, ev1 = split_by_guid(examples, 0.2)
    shuffled = examples[:]
    random.Random(1).shuffle(shuffled)
    _, ev2 = split_by_guid(shuffled, 0.2)
    assert {e["guid"] for e in ev1} == {e["guid"] for e in ev2}
    assert 150 < len(ev1) < 250  # about 20%
    assert guid_bucket("g1") == guid_bucket("g1") != guid_bucket("g2")


def test_cap_takes_a_fixed_sample_in_file_order():
    examples = [{"guid": f"g{i}"} for i in range(50)]
    a = cap(examples, 10)
    assert len(a) == 10 and a == cap(list(reversed(examples)), 10)[::-1]
    assert [int(e["guid"][1:]) for e in a] == sorted(int(e["guid"][1:]) for e in a)


def _save_hf_copy(tmp_path: Path, config: str, hf_names: list[str], label_field: str, rows: list[dict]) -> Path:
    from datasets import ClassLabel, Dataset, DatasetDict

    recs = []
    for r in rows:
        r = dict(r)
        r["label"] = hf_names.index(r.pop(label_field))
        recs.append(r)
    ds = Dataset.from_list(recs)
    ds = ds.cast_column("label", ClassLabel(names=hf_names))
    out = tmp_path / "klue" / config
    DatasetDict({"train": ds, "validation": ds}).save_to_disk(str(out))
    return tmp_path / "klue"


@pytest.mark.parametrize(
    "task_name, hf_names, label_field, keep",
    [
        # The HF `klue` copies order labels differently from the official files.
        ("ynat", ["IT과학", "경제", "사회", "생활문화", "세계", "스포츠", "정치"], "label", ["guid", "title"]),
        ("nli", ["entailment", "neutral", "contradiction"], "gold_label", ["guid", "premise", "hypothesis"]),
    ],
)
def test_hf_copy_maps_its_label_order_back_to_the_official_one(tmp_path, task_name, hf_names, label_field, keep):
    task = get_task(task_name, FX)
    official = load_task_data(task, FX, split="official")
    raw = json.loads(next((FX / task.files.subdir).glob(task.files.dev_glob)).read_text(encoding="utf-8"))
    rows = [{k: r[k] for k in keep} | {label_field: r[label_field]} for r in raw]
    hf_root = _save_hf_copy(tmp_path, task.files.hf_config, hf_names, label_field, rows)
    hf = load_task_data(task, hf_root, split="official")
    assert hf.source["format"] == "hf-datasets"
    assert hf.eval == official.eval  # same guids, texts and label indices


def test_malformed_files_name_the_record_and_the_problem(tmp_path):
    task = get_task("ynat", FX)
    bad = tmp_path / "ynat-v1.1_dev.json"
    bad.write_text('[{"guid": "a", "title": "t", "label": "정치"},\n {"guid": "b", "title": ', encoding="utf-8")
    with pytest.raises(DataError, match=r"ynat-v1.1_dev.json: invalid JSON at line 2"):
        task.read_file(bad)
    bad.write_text(json.dumps([{"guid": "a", "title": "t", "label": "정치"}, {"guid": "b", "label": "정치"}]))
    with pytest.raises(DataError, match=r"record 1 \(guid b\): missing field 'title'"):
        task.read_file(bad)
    bad.write_text(json.dumps([{"guid": "a", "title": "t", "label": "연예"}]))
    with pytest.raises(DataError, match=r"record 0: unknown label '연예'"):
        task.read_file(bad)
    bad.write_text(json.dumps([{"guid": "a", "title": "t", "label": "정치"}] * 2))
    with pytest.raises(DataError, match="duplicate guid 'a'"):
        load_task_data(task, tmp_path, split="dev-split")


def test_sts_reads_real_label_and_checks_range(tmp_path):
    task = get_task("sts", FX)
    rec = {"guid": "s", "sentence1": "a", "sentence2": "b", "labels": {"label": 4.9, "real-label": 4.857}}
    assert task.parse_record(rec, "x")["label"] == pytest.approx(4.857)
    with pytest.raises(DataError, match="outside 0..5"):
        task.parse_record({**rec, "labels": {"real-label": 7.0}}, "x")


def test_re_markers_use_inclusive_end_in_either_order():
    text = "김민수는 부산에서 태어났다."
    assert mark_entities(text, (0, 2), (5, 6)) == "<subj>김민수</subj>는 <obj>부산</obj>에서 태어났다."
    assert mark_entities(text, (5, 6), (0, 2)) == "<obj>김민수</obj>는 <subj>부산</subj>에서 태어났다."
    with pytest.raises(ValueError, match="overlap"):
        mark_entities(text, (0, 2), (2, 4))


def test_re_checks_spans_against_the_sentence():
    task = get_task("re", FX)
    rec = json.loads((FX / "re" / "klue-re-v1.1_dev.json").read_text(encoding="utf-8"))[0]
    assert task.parse_record(rec, "x")["text"].startswith("<subj>김민수</subj>는")
    off_by_one = {**rec, "subject_entity": {**rec["subject_entity"], "end_idx": 3}}
    with pytest.raises(DataError, match="end_idx is inclusive"):
        task.parse_record(off_by_one, "f: record 0")
    assert len(task.labels) == 30 and task.labels[0] == "no_relation"
