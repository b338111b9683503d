"""Fine-tuning test helpers: the texts of the fixture files (JSON, SQuAD-layout and TSV tasks alike; the KLUE
fixtures and the JGLUE ones) for a tiny model's vocabulary, and writers for predictions files."""

from __future__ import annotations

import json
from pathlib import Path

FX = Path(__file__).resolve().parent.parent / "fixtures" / "finetune"
FXJ = Path(__file__).resolve().parent.parent / "fixtures" / "jglue"
TEXT_KEYS = ("title", "sentence1", "sentence2", "premise", "hypothesis", "sentence")


def fixture_texts(folder: Path = FX, limit: int | None = None) -> list[str]:
    """Every text of the KLUE-format files under `folder` (one level of task folders): the text fields of the
    JSON tasks, the sentences of the NER and DP TSV files as the task readers rebuild them."""
    from finetune.registry import get_task

    out: list[str] = []
    for f in sorted(folder.glob("*/*.json")):
        if f.name == "relation_list.json" or f.parent.name in ("mrc", "wos"):
            continue
        for r in json.loads(f.read_text(encoding="utf-8"))[:limit]:
            out += [r[k] for k in TEXT_KEYS if k in r]
    for f in sorted(folder.glob("*/klue-ner-*.tsv")):
        out += [e["text"] for e in get_task("ner").read_file(f)[:limit]]
    for f in sorted(folder.glob("*/klue-dp-*.tsv")):
        out += [" ".join(e["words"]) for e in get_task("dp").read_file(f)[:limit]]
    for f in sorted(folder.glob("mrc/*.json")):  # SQuAD layout: the passages (once each) and the questions
        examples = get_task("mrc").read_file(f)[:limit]
        out += list(dict.fromkeys(e["context"] for e in examples)) + [e["question"] for e in examples]
    for f in sorted(folder.glob("wos/wos-*.json")):  # WoS: the utterances, then every slot name and value
        dials = json.loads(f.read_text(encoding="utf-8"))[:limit]
        out += [t["text"] for d in dials for t in d["dialogue"]]
    for f in sorted(folder.glob("wos/ontology.json")):
        onto = json.loads(f.read_text(encoding="utf-8"))
        out += [" ".join([name.replace("-", " "), *values]) for name, values in onto.items()]
    return out


def jglue_texts(folder: Path = FXJ) -> list[str]:
    """The texts of the JGLUE fixtures: JSTS train and JNLI valid pairs, JCommonsenseQA questions and choices
    (train and valid), JSQuAD passages and questions."""
    from finetune.registry import get_task

    def lines(path: Path) -> list[dict]:
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]

    out: list[str] = []
    for r in lines(folder / "jsts-v1.3" / "train-v1.3.json") + lines(folder / "jnli-v1.3" / "valid-v1.3.json"):
        out += [r["sentence1"], r["sentence2"]]
    for split in ("train", "valid"):
        for r in lines(folder / "jcommonsenseqa-v1.3" / f"{split}-v1.3.json"):
            out += [r["question"], *(r[f"choice{i}"] for i in range(5))]
    for ex in get_task("jsquad").read_file(folder / "jsquad-v1.3" / "valid-v1.3.json"):
        out += [ex["context"], ex["question"]]
    return out


def write_jsonl(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path
