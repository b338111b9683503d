"""Every fine-tuning task on an encoder of every architecture that pretraining exports (`roberta`,
`xlm-roberta-xl`, `roformer`, `modernbert`: testkit.tiny_model), and what the sentence-level heads read
(`Hyperparams.pooling`: the first token or the mean of the last hidden states, `finetune.encoders`).

Per task and architecture: the task's model builds from the tiny folder as that architecture, a few steps on one
batch lower its loss, the trainer's run writes predictions that `compute_metrics` scores to its metrics, and the
saved checkpoint reads back (`Task.load_finetuned`) as the same architecture with the same predictions.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, get_args

import pytest

from finetune.data import load_task_data
from finetune.encoders import POOLINGS, hidden_dropout, max_positions, set_pooling
from finetune.registry import ALL_TASKS, get_task
from finetune.tasks.base import SENTENCE_HEAD_TASKS, multiple_choice, sequence_classifier
from finetune.trainer import (
    FinetuneConfig,
    _optimizer,
    evaluate,
    finetune_once,
    length_order,
    model_inputs,
    no_decay_names,
    usable_length,
)
from testkit.finetune import FX, FXJ, fixture_texts, jglue_texts
from testkit.tiny_model import ARCHITECTURES, build_tiny_model, tiny_config

pytestmark = pytest.mark.usefixtures("one_torch_thread")

KLUE = ["ynat", "sts", "nli", "ner", "re", "dp", "mrc", "dst"]
JGLUE = ["jsts", "jnli", "jsquad", "jcommonsenseqa"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """(suite, architecture) -> a tiny model folder with a vocabulary of that suite's fixture texts, built once."""
    built: dict[tuple[str, str], Path] = {}
    texts = {"klue": fixture_texts, "jglue": jglue_texts}

    def get(suite: str, arch: str) -> Path:
        if (suite, arch) not in built:
            built[suite, arch] = build_tiny_model(tmp_path_factory.mktemp(f"{suite}-{arch}"), texts[suite](),
                                                  architecture=arch)
        return built[suite, arch]

    return get


def _tokenizer(folder: Path, task: Any = None) -> Any:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(folder)
    if task is not None:
        task.prepare_tokenizer(tok)
    return tok


def _close(a: Any, b: Any) -> bool:
    """Equal records, numbers within float32 round-off."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5) or (math.isnan(a) and math.isnan(b))
    return bool(a == b)


# ---- every task on every architecture ----------------------------------------------------------------------

def test_the_matrix_covers_every_registered_task():
    assert sorted(KLUE + JGLUE) == sorted(ALL_TASKS)
    assert set(SENTENCE_HEAD_TASKS) <= set(ALL_TASKS)
    assert ARCHITECTURES == ("roberta", "xlm-roberta-xl", "roformer", "modernbert")


@pytest.mark.parametrize("arch", ARCHITECTURES)
@pytest.mark.parametrize("name", KLUE + JGLUE)
def test_task_trains_predicts_saves_and_reloads(tiny, tmp_path, name, arch):
    from accelerate import Accelerator
    from torch.utils.data import DataLoader

    data_dir = FXJ if name in JGLUE else FX
    folder = tiny("jglue" if name in JGLUE else "klue", arch)
    task = get_task(name, data_dir)
    data = load_task_data(task, data_dir, max_train=16, max_eval=8)
    # the sentence-level heads read the mean here, so the encoder hook goes through training, saving and reloading
    pooling = "mean" if name in SENTENCE_HEAD_TASKS else "cls"
    hp = task.defaults.replace(batch_size=8, eval_batch_size=8, max_length=64, learning_rate=1e-3,
                 pooling=pooling)

    # the model builds on this architecture, and a few steps on one batch lower its loss (no dropout, no
    # teacher-forcing draw: the same function of the weights at every step)
    tok = _tokenizer(folder, task)
    model = task.build_model(folder, tok, random_init=False, hp=hp)
    assert model.config.model_type == arch
    if name in SENTENCE_HEAD_TASKS:
        assert model.config.classifier_pooling == "mean"
    features = task.encode(data.train[:8], tok, usable_length(model.config, tok, hp.max_length))
    batch = task.collator(tok)(model_inputs(features))
    assert "token_type_ids" not in batch
    model.eval()
    optimizer = _optimizer(model, hp)
    losses = []
    for _ in range(4):
        loss = model(**batch).loss
        losses.append(loss.item())
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    assert all(math.isfinite(x) for x in losses) and losses[-1] < losses[0], losses

    # the trainer's run: trains, evaluates, writes predictions that the task's checks and metrics accept
    save = tmp_path / "model"
    res = finetune_once(task, folder, data, FinetuneConfig(hp=hp, seed=3, max_steps=2, save_dir=save,
                                                           progress=False))
    assert len(res.predictions) == len(data.eval)
    for i, rec in enumerate(res.predictions):
        task.check_prediction(rec, f"prediction {i}")
        task.check_aligned(rec, data.eval[i], f"prediction {i}")
    assert _close(task.compute_metrics(res.predictions, data.eval), res.metrics)
    assert set(task.metric_names) <= set(res.metrics)

    # the checkpoint reads back as the same architecture (and pooling) with the same predictions
    reloaded = task.load_finetuned(save)
    assert type(reloaded).__name__ == type(model).__name__ and reloaded.config.model_type == arch
    assert getattr(reloaded.config, "classifier_pooling", "cls") == pooling
    tok = _tokenizer(save)
    eval_features = task.encode(data.eval, tok, res.max_length)
    order = length_order(eval_features)
    loader = DataLoader(model_inputs([eval_features[i] for i in order]), batch_size=hp.eval_batch_size,
                        collate_fn=task.collator(tok))
    _, preds = evaluate(task, reloaded, loader, Accelerator(cpu=True), eval_features, data.eval, order=order)
    assert _close(preds, res.predictions)


# ---- positions, dropout, weight decay ---------------------------------------------------------------------

@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_max_positions_is_what_the_encoder_takes(arch):
    """`usable_length` cuts inputs to `max_positions`: a sequence of exactly that many tokens runs; with a
    position table (learned, or RoFormer's sinusoids) one more token is out of range. RoBERTa-style tables lose
    pad_token_id + 1 = 2 rows; ModernBERT's rotary positions have no table (its limit is the nominal length)."""
    import torch
    from transformers import AutoModel

    config = tiny_config(arch, vocab_size=50, max_tokens=20)
    model = AutoModel.from_config(config).eval()
    n = max_positions(config)
    assert n == 20 and usable_length(config, None, 512) == 20
    with torch.no_grad():
        assert model(input_ids=torch.full((1, n), 7)).last_hidden_state.shape == (1, n, 32)
        if arch != "modernbert":
            with pytest.raises((IndexError, RuntimeError)):  # a gather or an embedding lookup out of range
                model(input_ids=torch.full((1, n + 1), 7))


def test_hidden_dropout_reads_either_naming_scheme():
    roberta = tiny_config("roberta", vocab_size=50)
    assert hidden_dropout(roberta) == roberta.hidden_dropout_prob == 0.1
    modern = tiny_config("modernbert", vocab_size=50)
    assert hidden_dropout(modern) == 0.0
    modern.mlp_dropout = 0.2
    assert hidden_dropout(modern) == 0.2


def test_no_weight_decay_on_any_norm_layer():
    """KLUE-baseline decays neither biases nor LayerNorm weights; ModernBERT names its norms otherwise."""
    from transformers import AutoModelForSequenceClassification

    for arch in ("roberta", "modernbert"):
        model = AutoModelForSequenceClassification.from_config(tiny_config(arch, vocab_size=50))
        names = no_decay_names(model)
        norms = {n for n, _ in model.named_parameters() if "norm" in n.lower()}
        assert norms and norms <= names
        assert {n for n in names if "bias" not in n and "norm" not in n.lower()} == set()
        if arch == "roberta":  # the same split as the name rule it replaces
            old = {n for n, _ in model.named_parameters() if any(k in n for k in ("bias", "LayerNorm.weight"))}
            assert names == old


# ---- pooling -------------------------------------------------------------------------------------------------

def _pair_batch(tok: Any, extra_pad: int = 0) -> dict:
    enc = tok(["서울 날씨가 맑다", "경제 성장률이 올랐다 주가도 올랐다"], padding=True, return_tensors="pt")
    if extra_pad:
        import torch

        enc["input_ids"] = torch.cat([enc["input_ids"], torch.full((2, extra_pad), tok.pad_token_id)], dim=1)
        enc["attention_mask"] = torch.cat([enc["attention_mask"], torch.zeros(2, extra_pad, dtype=torch.long)], 1)
    return dict(enc)


def _build(head: str, folder: Path, tok: Any, pooling: str | None) -> Any:
    if head == "sequence":
        return sequence_classifier(folder, tok, False, ["a", "b", "c"], pooling=pooling).eval()
    return multiple_choice(folder, tok, False, pooling=pooling).eval()


def _logits(model: Any, head: str, batch: dict) -> Any:
    import torch

    with torch.no_grad():
        if head == "sequence":
            return model(**batch).logits
        return model(**{k: v.unsqueeze(0) for k, v in batch.items()}).logits  # one question, two choices


@pytest.mark.parametrize("head", ["sequence", "multiple-choice"])
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_what_the_head_reads(tiny, arch, head):
    """`cls` reads the first token's state: a change to another position's last hidden state leaves the logits
    alone. `mean` reads every non-padding state: such a change moves the logits, a change at a padding position
    does not, and neither does padding the batch further. Checked on the same weights by switching the pooling."""
    import torch

    folder = tiny("klue", arch)
    tok = _tokenizer(folder)
    model = _build(head, folder, tok, "cls")
    batch = _pair_batch(tok)
    n_real = int(batch["attention_mask"][0].sum())  # the first sentence is the shorter: it has padding
    assert n_real < batch["input_ids"].shape[1]
    where: list[int] = []

    def nudge(module: Any, args: Any, output: Any) -> Any:
        hidden = output if isinstance(output, torch.Tensor) else output[0]
        for pos in where:
            hidden[0, pos] += 1.0
        return output

    # on the last hidden states where the encoder makes them, before its pooler (which RoBERTa's multiple-choice
    # head reads) and before the stock head or `set_pooling`'s hook pools them
    base = model.base_model
    last = base.encoder if hasattr(base, "encoder") else base.final_norm  # ModernBERT: the final norm
    last.register_forward_hook(nudge)
    for pooling in ("cls", "mean", "cls"):
        set_pooling(model, pooling)
        base = _logits(model, head, batch)
        where[:] = [n_real - 2]  # a word of the first sentence, not its first token
        moved = _logits(model, head, batch)
        where[:] = [n_real]  # a padding position of the first sentence
        padded = _logits(model, head, batch)
        where[:] = [0]
        first = _logits(model, head, batch)
        where[:] = []
        assert not torch.allclose(first, base)
        assert torch.allclose(padded, base, atol=1e-6)
        assert torch.allclose(moved, base, atol=1e-6) == (pooling == "cls")
        assert torch.allclose(_logits(model, head, _pair_batch(tok, extra_pad=3)), base, atol=1e-5)
    mean = set_pooling(model, "mean")
    assert mean == "mean" and not torch.allclose(_logits(model, head, batch), base)


@pytest.mark.parametrize("pooling", ["cls", "mean"])
@pytest.mark.parametrize("head", ["sequence", "multiple-choice"])
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_pooling_survives_save_and_reload(tiny, tmp_path, arch, head, pooling):
    import torch

    folder = tiny("klue", arch)
    tok = _tokenizer(folder)
    model = _build(head, folder, tok, pooling)
    batch = _pair_batch(tok)
    model.save_pretrained(tmp_path)
    again = _build(head, tmp_path, tok, None)  # None: the pooling the folder's config names
    assert again.config.classifier_pooling == pooling
    assert torch.allclose(_logits(again, head, batch), _logits(model, head, batch), atol=1e-6)
    if arch == "modernbert":  # its own field: the stock class reads it back without this project
        from transformers import AutoModelForMultipleChoice, AutoModelForSequenceClassification

        auto = AutoModelForSequenceClassification if head == "sequence" else AutoModelForMultipleChoice
        stock = auto.from_pretrained(tmp_path).eval()
        assert torch.allclose(_logits(stock, head, batch), _logits(model, head, batch), atol=1e-6)


def test_pooling_is_recorded_in_the_run_and_its_checkpoint(tiny, tmp_path):
    import json

    from click.testing import CliRunner

    from finetune.cli import finetune

    out = tmp_path / "ynat"
    res = CliRunner().invoke(finetune, ["ynat", "--model", str(tiny("klue", "roformer")), "--data-dir", str(FX),
                                        "--output", str(out), "--max-steps", "1", "--batch-size", "8",
                                        "--max-eval-examples", "4", "--hp", "ynat.pooling=mean", "--quiet"],
                             catch_exceptions=False)
    assert res.exit_code == 0, res.output
    assert json.loads((out / "metrics.json").read_text())["hyperparams"]["pooling"] == "mean"
    assert json.loads((out / "seed-42" / "model" / "config.json").read_text())["classifier_pooling"] == "mean"
    assert get_task("ynat").load_finetuned(out / "seed-42" / "model").config.classifier_pooling == "mean"


def test_pooling_values_and_tasks_without_a_sentence_head_are_refused():
    from finetune.stages.finetune import FinetuneParams
    from finetune.tasks.base import Hyperparams, check_task_hyperparam

    with pytest.raises(ValueError, match="Input should be 'cls' or 'mean'"):
        Hyperparams(pooling="max")
    # the model's choices are the encoders' (one list of poolings)
    assert get_args(Hyperparams.model_fields["pooling"].annotation) == POOLINGS
    for task in ("ner", "dp", "mrc", "dst", "jsquad"):
        with pytest.raises(ValueError, match=f"pooling is read by the tasks with a sentence-level head only .*"
                                             f"not by {task}"):
            check_task_hyperparam(task, "pooling")
    for task in SENTENCE_HEAD_TASKS:
        check_task_hyperparam(task, "pooling")
    # a recipe's all-task `hyperparams` reaches the tasks that read the field; the others record their default
    from finetune.stages.finetune import hyperparams_for

    p = FinetuneParams(tasks=["ynat", "ner"], data_dir=str(FX), hyperparams={"pooling": "mean",
                                                                              "learning_rate": "3e-5"})
    assert p.hyperparams["learning_rate"] == 3e-5  # YAML reads 3e-5 as a string; converted as before
    per_task = FinetuneParams(tasks=["ynat"], data_dir=str(FX), task_hyperparams={"ynat": {"learning_rate": "3e-5"}})
    assert per_task.task_hyperparams["ynat"]["learning_rate"] == 3e-5  # so the stage's key sees a number there too
    assert hyperparams_for(p, "ynat", get_task("ynat").defaults).pooling == "mean"
    assert hyperparams_for(p, "ner", get_task("ner").defaults).pooling == "cls"
    with pytest.raises(ValueError, match="task_hyperparams.ner.pooling: pooling is read by the tasks with a "
                                         "sentence-level head only"):
        FinetuneParams(tasks=["ynat", "ner"], data_dir=str(FX), task_hyperparams={"ner": {"pooling": "mean"}})
    with pytest.raises(ValueError, match=r"hyperparams.pooling: Input should be 'cls' or 'mean' \(value: 'first'\)"):
        FinetuneParams(tasks=["ynat"], data_dir=str(FX), hyperparams={"pooling": "first"})
