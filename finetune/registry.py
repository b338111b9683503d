"""The one place that declares every fine-tuning task.

Entries are plain data (import path, title, metric names, report columns with KLUE's published scores) so
that `klue finetune --help`, `--task-list` and the results tables work without importing torch or a task
module; the task class is imported only when a task is used. Adding a task is one module under
`finetune/tasks/` plus one entry here.

Published scores are the "Baseline Scores" table of the KLUE README (github.com/KLUE-benchmark/KLUE, README.md
at commit 0106de0161790bb1501a6c5832f733dc22d747ef), which the paper (arXiv 2105.09680) reports as dev-set
results. Each column sits beside the metric key it is compared with: the README's NER "entity F1" / "char F1"
are KLUE-baseline's `entity_macro_f1` / `character_macro_f1`, and its DP "UAS" / "LAS" are the macro-F1
variants `uas_macro_f1` / `las_macro_f1` (the ones `run_all.sh` selects checkpoints on).

Two suites. `TASKS` is the KLUE suite: `klue finetune all`, `--task-list`, `--help` and the results tables
(`finetune.results`) cover it. `JGLUE_TASKS` holds the four JGLUE tasks with a train or dev file (JSTS, JNLI,
JSQuAD, JCommonsenseQA; MARC-ja is no longer distributed): they are fine-tuned and scored by name (`klue
finetune jnli`, `klue score jsquad`), their data is another folder (`$KLUE_DATA_DIR/ja/jglue`), and they stay
out of `all`, whose runs read one data folder. Their published columns are the dev-set table of the JGLUE README
(github.com/yahoojapan/JGLUE, README.md at commit 6f071c09316baae89c3d083a90985b4b1cb9968c, the v1.3 release
the shared data comes from), ×100 to match the metric keys here; XLM-R has no JSQuAD scores there
("excluded from the JSQuAD evaluation"), so those cells are absent. Those numbers come from JGLUE's train
files; the shared copy has none for JNLI and JSQuAD, so runs there use a dev split and are not comparable.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from finetune.records import Column, TaskEntry
from pipeline.registry import Registry, RegistryError

if TYPE_CHECKING:
    from finetune.tasks.base import Task


def _published(mbert: float, xlmr_base: float, xlmr_large: float, krbert: float, koelectra: float,
               klue_bert: float, klue_roberta_small: float, klue_roberta_base: float,
               klue_roberta_large: float) -> dict[str, float]:
    """One README column, every value named by its model (keyword arguments at the call sites)."""
    return {"mBERT-base": mbert, "XLM-R-base": xlmr_base, "XLM-R-large": xlmr_large, "KR-BERT-base": krbert,
            "koELECTRA-base": koelectra, "KLUE-BERT-base": klue_bert, "KLUE-RoBERTa-small": klue_roberta_small,
            "KLUE-RoBERTa-base": klue_roberta_base, "KLUE-RoBERTa-large": klue_roberta_large}


TASKS: dict[str, TaskEntry] = {
    "ynat": TaskEntry(
        "finetune.tasks.ynat:YnatTask", "Topic classification (YNAT, title only)", ("macro_f1",), "macro_f1",
        columns=(Column("macro_f1", "YNAT F1", _published(
            mbert=81.55, xlmr_base=83.52, xlmr_large=86.06, krbert=84.58, koelectra=84.59, klue_bert=85.49,
            klue_roberta_small=84.30, klue_roberta_base=85.12, klue_roberta_large=86.42)),)),
    "sts": TaskEntry(
        "finetune.tasks.sts:StsTask", "Semantic textual similarity (KLUE-STS)", ("pearsonr", "f1"), "pearsonr",
        columns=(
            Column("pearsonr", "STS r", _published(
                mbert=84.66, xlmr_base=89.16, xlmr_large=92.97, krbert=88.61, koelectra=92.46, klue_bert=90.85,
                klue_roberta_small=90.50, klue_roberta_base=92.41, klue_roberta_large=93.37)),
            Column("f1", "STS F1", _published(
                mbert=76.00, xlmr_base=82.01, xlmr_large=85.86, krbert=81.07, koelectra=84.84, klue_bert=82.84,
                klue_roberta_small=83.92, klue_roberta_base=84.60, klue_roberta_large=85.89)))),
    "nli": TaskEntry(
        "finetune.tasks.nli:NliTask", "Natural language inference (KLUE-NLI)", ("accuracy",), "accuracy",
        columns=(Column("accuracy", "NLI Acc", _published(
            mbert=73.20, xlmr_base=77.33, xlmr_large=85.93, krbert=77.17, koelectra=85.63, klue_bert=81.63,
            klue_roberta_small=79.12, klue_roberta_base=84.97, klue_roberta_large=89.43)),)),
    "ner": TaskEntry(
        "finetune.tasks.ner:NerTask", "Named entity recognition (KLUE-NER, character level)",
        ("entity_macro_f1", "character_macro_f1", "character_macro_f1_without_o"), "character_macro_f1",
        columns=(
            Column("entity_macro_f1", "NER entity F1", _published(
                mbert=75.14, xlmr_base=80.73, xlmr_large=81.81, krbert=75.37, koelectra=86.82, klue_bert=84.77,
                klue_roberta_small=84.99, klue_roberta_base=85.13, klue_roberta_large=85.79)),
            Column("character_macro_f1", "NER char F1", _published(
                mbert=87.51, xlmr_base=91.37, xlmr_large=92.49, krbert=90.42, koelectra=92.79, klue_bert=91.28,
                klue_roberta_small=91.10, klue_roberta_base=91.52, klue_roberta_large=91.77)),
            Column("character_macro_f1_without_o", "NER char F1 w/o O"))),
    "re": TaskEntry(
        "finetune.tasks.re:ReTask", "Relation extraction (KLUE-RE)", ("micro_f1", "auprc"), "micro_f1",
        columns=(
            Column("micro_f1", "RE F1", _published(
                mbert=57.88, xlmr_base=57.46, xlmr_large=58.39, krbert=62.74, koelectra=62.85, klue_bert=66.44,
                klue_roberta_small=60.85, klue_roberta_base=66.66, klue_roberta_large=69.59)),
            Column("auprc", "RE AUPRC", _published(
                mbert=53.82, xlmr_base=54.98, xlmr_large=61.15, krbert=60.94, koelectra=58.94, klue_bert=66.17,
                klue_roberta_small=58.76, klue_roberta_base=67.74, klue_roberta_large=72.39)))),
    "dp": TaskEntry(
        "finetune.tasks.dp:DpTask", "Dependency parsing (KLUE-DP, eojeol level)",
        ("uas_macro_f1", "las_macro_f1", "uas_micro_f1", "las_micro_f1"), "las_macro_f1",
        columns=(
            Column("uas_macro_f1", "DP UAS", _published(
                mbert=90.30, xlmr_base=89.20, xlmr_large=92.71, krbert=89.92, koelectra=92.90, klue_bert=92.14,
                klue_roberta_small=89.32, klue_roberta_base=90.31, klue_roberta_large=93.32)),
            Column("las_macro_f1", "DP LAS", _published(
                mbert=86.66, xlmr_base=87.69, xlmr_large=88.70, krbert=87.48, koelectra=87.77, klue_bert=87.77,
                klue_roberta_small=87.74, klue_roberta_base=88.30, klue_roberta_large=88.72)))),
    "mrc": TaskEntry(
        "finetune.tasks.mrc:MrcTask", "Machine reading comprehension (KLUE-MRC, spans + unanswerable)",
        ("exact_match", "rouge_w"), "rouge_w",
        columns=(
            Column("exact_match", "MRC EM", _published(
                mbert=44.66, xlmr_base=27.48, xlmr_large=35.99, krbert=48.28, koelectra=59.82, klue_bert=62.32,
                klue_roberta_small=57.79, klue_roberta_base=68.52, klue_roberta_large=76.78)),
            Column("rouge_w", "MRC ROUGE", _published(
                mbert=55.92, xlmr_base=53.93, xlmr_large=66.77, krbert=58.54, koelectra=66.05, klue_bert=68.51,
                klue_roberta_small=63.78, klue_roberta_base=74.02, klue_roberta_large=81.43)))),
    "dst": TaskEntry(
        "finetune.tasks.dst:DstTask", "Dialogue state tracking (WoS, TRADE-style generator)",
        ("joint_goal_acc", "slot_micro_f1"), "slot_micro_f1",
        columns=(
            Column("joint_goal_acc", "DST JGA", _published(
                mbert=35.46, xlmr_base=39.82, xlmr_large=41.20, krbert=45.33, koelectra=41.58, klue_bert=48.99,
                klue_roberta_small=45.65, klue_roberta_base=47.48, klue_roberta_large=50.49)),
            Column("slot_micro_f1", "DST slot F1", _published(
                mbert=88.63, xlmr_base=89.61, xlmr_large=89.80, krbert=90.70, koelectra=89.60, klue_bert=91.86,
                klue_roberta_small=91.22, klue_roberta_base=91.55, klue_roberta_large=92.11)))),
}



def _jglue(tohoku_base: float, tohoku_base_char: float, tohoku_large: float, nict_base: float,
           waseda_base: float, waseda_large_s128: float, waseda_large_s512: float,
           xlmr_base: float | None = None, xlmr_large: float | None = None) -> dict[str, float]:
    """One column of the JGLUE README's dev-set table (×100), every value named by its model; XLM-R left out
    where the README has "-" (JSQuAD). XLM-R keeps the KLUE table's model names: it is the same checkpoint."""
    out = {"Tohoku BERT-base": tohoku_base, "Tohoku BERT-base (char)": tohoku_base_char,
           "Tohoku BERT-large": tohoku_large, "NICT BERT-base": nict_base, "Waseda RoBERTa-base": waseda_base,
           "Waseda RoBERTa-large (s128)": waseda_large_s128, "Waseda RoBERTa-large (s512)": waseda_large_s512}
    for name, value in (("XLM-R-base", xlmr_base), ("XLM-R-large", xlmr_large)):
        if value is not None:
            out[name] = value
    return out


JGLUE_TASKS: dict[str, TaskEntry] = {
    "jsts": TaskEntry(
        "finetune.tasks.jsts:JstsTask", "Semantic textual similarity (JGLUE JSTS)", ("pearsonr", "spearmanr"),
        "pearsonr",
        columns=(
            Column("pearsonr", "JSTS Pearson", _jglue(
                tohoku_base=90.9, tohoku_base_char=89.3, tohoku_large=91.3, nict_base=91.0, waseda_base=91.3,
                waseda_large_s128=93.0, waseda_large_s512=92.6, xlmr_base=87.7, xlmr_large=91.8)),
            Column("spearmanr", "JSTS Spearman", _jglue(
                tohoku_base=86.8, tohoku_base_char=85.1, tohoku_large=87.2, nict_base=87.1, waseda_base=87.3,
                waseda_large_s128=89.6, waseda_large_s512=89.2, xlmr_base=83.1, xlmr_large=88.4)))),
    "jnli": TaskEntry(
        "finetune.tasks.jnli:JnliTask", "Natural language inference (JGLUE JNLI)", ("accuracy",), "accuracy",
        columns=(Column("accuracy", "JNLI Acc", _jglue(
            tohoku_base=90.6, tohoku_base_char=89.6, tohoku_large=90.5, nict_base=90.9, waseda_base=90.0,
            waseda_large_s128=93.1, waseda_large_s512=93.4, xlmr_base=89.8, xlmr_large=92.4)),)),
    "jsquad": TaskEntry(
        "finetune.tasks.jsquad:JsquadTask", "Extractive QA, all answerable (JGLUE JSQuAD)", ("exact_match", "f1"),
        "f1",
        columns=(
            Column("exact_match", "JSQuAD EM", _jglue(
                tohoku_base=87.1, tohoku_base_char=86.4, tohoku_large=88.0, nict_base=89.7, waseda_base=86.4,
                waseda_large_s128=88.4, waseda_large_s512=91.8)),
            Column("f1", "JSQuAD F1", _jglue(
                tohoku_base=94.1, tohoku_base_char=93.7, tohoku_large=94.6, nict_base=94.7, waseda_base=92.7,
                waseda_large_s128=94.0, waseda_large_s512=96.3)))),
    "jcommonsenseqa": TaskEntry(
        "finetune.tasks.jcqa:JCommonsenseQaTask", "Commonsense QA, 5-way multiple choice (JGLUE JCommonsenseQA)",
        ("accuracy",), "accuracy",
        columns=(Column("accuracy", "JCQA Acc", _jglue(
            tohoku_base=80.8, tohoku_base_char=71.8, tohoku_large=81.6, nict_base=82.3, waseda_base=84.0,
            waseda_large_s128=90.7, waseda_large_s512=89.1, xlmr_base=68.7, xlmr_large=84.0)),)),
}

# Every task that can be named, and the suites they belong to.
ALL_TASKS: dict[str, TaskEntry] = {**TASKS, **JGLUE_TASKS}
SUITES: dict[str, dict[str, TaskEntry]] = {"klue": TASKS, "jglue": JGLUE_TASKS}

# Names users may type for a task: KLUE-baseline's task names and the HF `klue` config names; `jcqa`, the usual
# short form of JCommonsenseQA (the module is `finetune/tasks/jcqa.py`).
ALIASES: dict[str, str] = {"tc": "ynat", "klue-sts": "sts", "klue-nli": "nli", "klue-ner": "ner", "klue-re": "re",
                           "klue-dp": "dp", "klue-mrc": "mrc", "wos": "dst",
                           "klue-dst": "dst", "jcqa": "jcommonsenseqa"}


# The lookup of the classes themselves: imported on first use.
TASK_CLASSES: Registry[type[Task]] = Registry("task", {name: e.target for name, e in ALL_TASKS.items()},
                                              aliases=ALIASES)


def resolve_name(name: str) -> str:
    """The registered name for a task name or alias; a `RegistryError` (a ValueError) naming the known ones."""
    return TASK_CLASSES.resolve(name)


def task_class(name: str) -> type[Task]:
    return TASK_CLASSES.get(name)


__all__ = ["ALIASES", "ALL_TASKS", "JGLUE_TASKS", "SUITES", "TASKS", "TASK_CLASSES", "Column", "RegistryError",
           "TaskEntry", "get_task", "resolve_name", "task_class", "task_list_text"]


def get_task(name: str, data_dir: Path | None = None) -> Task:
    """An instance of the task, carrying its registry entry (metric names, main metric, report columns);
    `data_dir` lets tasks read label files shipped with the data (RE)."""
    key = resolve_name(name)
    task = task_class(key)(data_dir=data_dir)
    task.entry = ALL_TASKS[key]
    return task


def task_list_text(suite: str = "klue") -> str:
    """One line per task of a suite ("klue", the default and `--task-list`'s, or "jglue")."""
    tasks = SUITES[suite]
    width = max(map(len, tasks))
    metric_width = max(len(", ".join(e.metrics)) for e in tasks.values())
    return "\n".join(
        f"{name:<{width}}  {', '.join(e.metrics):<{metric_width}} (selects on {e.main_metric})  {e.title}"
        for name, e in tasks.items()
    )
