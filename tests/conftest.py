import os, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

@pytest.fixture(scope='session')
def root() -> Path:
    return ROOT

def pytest_configure(config):
    # Tests read the real data from the mirror when one is configured; model caches stay in the user's cache.
    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
