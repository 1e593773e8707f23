"""No committed result row counts a failed model call: a run with one is incomplete (`models.FailedCalls`), never
committed or imported, so its accuracy is never computed over failed calls scored as wrong answers."""
from pathlib import Path
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted((ROOT/'results').glob('*/*/*.csv'))
FAILED_CALL_METRICS = ('errors', 'failed_examples')     # GroundCocoa and CGGC count `errors`; the quickstart and SPOR `failed_examples`


def test_there_are_committed_rows():
    assert len(FILES) > 20


@pytest.mark.parametrize('path', FILES, ids=[str(p.relative_to(ROOT/'results')) for p in FILES])
def test_no_failed_calls_in_committed_rows(path):
    df = pd.read_csv(path, keep_default_na=False, na_values=[''], low_memory=False)
    counted = df[df.metric.isin(FAILED_CALL_METRICS)]
    assert (counted.value == 0).all(), counted[counted.value != 0][['metric', 'value']].to_string()
    if 'errors' in df.columns:
        n = pd.to_numeric(df['errors'], errors='coerce').fillna(0)
        assert (n == 0).all(), f"{int((n > 0).sum())} row(s) with errors > 0"
