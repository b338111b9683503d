"""The module-scoped fixtures every task's test module starts with, built by factories so that each module
names its task once: `task, gold = task_fixtures("dp", GOLD)`, `tiny = tiny_fixture("dp")`, `tokenizer =
tiny_tokenizer_fixture()` at module level (pytest finds a fixture by the name given here, whatever the module
calls it). A module that needs another `tokenizer` or `tiny` (NER trains a WordPiece vocabulary) defines its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from testkit.finetune import FX, fixture_texts


def task_fixtures(name: str, gold_file: Path | None = None) -> tuple[Any, Any]:
    """Module-scoped fixtures `task` (the registered task, its label files read from the fixtures) and `gold`
    (the examples of `gold_file`, read by that task). In a test module: `task, gold = task_fixtures("dp", GOLD)`;
    pytest finds them by the names given here."""

    @pytest.fixture(scope="module", name="task")
    def task_fixture() -> Any:
        from finetune.registry import get_task

        return get_task(name, FX)

    @pytest.fixture(scope="module", name="gold")
    def gold_fixture(task: Any) -> Any:
        if gold_file is None:
            raise ValueError(f"task_fixtures({name!r}) was given no gold file")
        return task.read_file(gold_file)

    return task_fixture, gold_fixture


def tiny_fixture(name: str, **build: Any) -> Any:
    """Module-scoped fixture `tiny`: a tiny encoder on the KLUE fixture texts (`build_tiny_model` with `build`),
    built with one torch thread (the test machines share their cores). In a test module:
    `tiny = tiny_fixture("dp")`."""

    @pytest.fixture(scope="module", name="tiny")
    def fixture(tmp_path_factory: pytest.TempPathFactory) -> Path:
        import torch

        from testkit.tiny_model import build_tiny_model

        torch.set_num_threads(1)
        return build_tiny_model(tmp_path_factory.mktemp(f"tiny-{name}"), fixture_texts(), **build)

    return fixture


def tiny_tokenizer_fixture() -> Any:
    """Module-scoped fixture `tokenizer`: the `tiny` model's own tokenizer. In a test module with a `tiny`
    fixture: `tokenizer = tiny_tokenizer_fixture()`."""

    @pytest.fixture(scope="module", name="tokenizer")
    def fixture(tiny: Path) -> Any:
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(tiny)

    return fixture
