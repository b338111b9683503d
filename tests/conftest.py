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


@pytest.fixture(scope="session")
def fixtures_dir() -> Path:
    return FIXTURES
