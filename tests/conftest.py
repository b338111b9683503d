"""Shared fixtures. `shared_data` finds ../shared/data through KLUE_DATA_DIR and skips, saying why, without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    d = os.environ.get("KLUE_DATA_DIR")
    if not d or not Path(d).is_dir():
        pytest.skip("KLUE_DATA_DIR is not set to the shared data folder (../shared/data); CI sets it")
    return Path(d)


@pytest.fixture(scope="module")
def one_torch_thread():
    """One intra-op thread for a module of tiny-model tests: they gain nothing from more, and threads stall
    badly when CI's cores are shared. Use with `pytestmark = pytest.mark.usefixtures("one_torch_thread")`."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES


@pytest.fixture(scope="session", autouse=True)
def _private_digest_memo(tmp_path_factory):
    """Tests (and the `klue` subprocesses they start) keep their file-digest memo out of the user's cache."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KLUE_CACHE_DIR", str(tmp_path_factory.mktemp("klue-cache")))
        yield
