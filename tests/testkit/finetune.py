"""Fine-tuning test helpers: the texts of the fixture files (JSON, SQuAD-layout and TSV tasks alike; the KLUE
fixtures and the JGLUE ones) for a tiny model's vocabulary, writers for predictions files, and `klue finetune`
in-process (`run_finetune`, and `shared_data_run`: the smoke run on the shared files that every task's tests
end with). The module-scoped fixtures of the task test modules are in `testkit.finetune_fixtures`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

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


def run_finetune(args: list[str]) -> None:
    """`klue finetune ARGS --quiet` in this process; a non-zero exit fails the test with the command's output."""
    from click.testing import CliRunner

    from finetune.cli import finetune

    res = CliRunner().invoke(finetune, [*args, "--quiet"], catch_exceptions=False)
    assert res.exit_code == 0, res.output


def shared_data_run(task: str, klue: Path, dev: Path, texts: list[str], out: Path, *, steps: int, n_train: int,
                    n_eval: int, batch: int) -> tuple[dict, dict]:
    """A smoke run on the shared KLUE files: a tiny model whose vocabulary is `texts` (beside `out`), `klue
    finetune TASK` for `steps` steps on a capped dev split (checked to be that split), then `klue score` of its
    predictions against the whole `dev` file, which must give the scores the run reported (a metric undefined on
    the sample, None, is left out). Returns seed 42's metrics.json, with the run's summary as `summary`, and
    the scoring."""
    from finetune.score import score_file
    from testkit.tiny_model import build_tiny_model

    model = build_tiny_model(out.parent / "tiny", texts)
    run_finetune([task, "--model", str(model), "--data-dir", str(klue), "--output", str(out), "--max-steps", str(steps),
                  "--max-train-examples", str(n_train), "--max-eval-examples", str(n_eval), "--batch-size", str(batch),
                  "--no-save-model"])
    summary = json.loads((out / "metrics.json").read_text())
    assert summary["data"]["split"] == "dev-split" and summary["data"]["n_eval"] == n_eval, summary["data"]
    run: dict = {**json.loads((out / "seed-42" / "metrics.json").read_text()), "summary": summary}
    scored = score_file(task, dev, out / "seed-42" / "predictions.jsonl", allow_subset=True)
    assert scored["n_scored"] == n_eval and scored["subset"]
    for key, value in scored["metrics"].items():
        if value is not None:
            assert value == pytest.approx(run["metrics"][key], abs=1e-6), key
    return run, scored
