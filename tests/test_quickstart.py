"""`cogen run quickstart --profile smoke` end to end: figures written (to scratch), per-item outcomes with the baselines and the
budget flag beside the rows, a rerun skips everything, a forced rerun calls no model."""
import json, subprocess, sys
import pandas as pd
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COGEN = str(Path(sys.executable).parent/'cogen')

def _cogen(*args, cwd=ROOT):
    r = subprocess.run([COGEN, *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr

def test_quickstart_smoke(tmp_path):
    out1 = _cogen('run', 'quickstart', '--profile', 'smoke', '--out', str(tmp_path))
    figs = tmp_path/'runs'/'quickstart'/'figures-smoke'       # a smoke run never writes the committed figures/
    for ext in ('png', 'pdf', 'md', 'csv', 'tex'): assert (figs/f'exact_match.{ext}').exists(), ext
    assert not (tmp_path/'figures').exists()
    for name in ('verdicts', 'baseline_tests', 'budget', 'per_run'): assert (figs/f'{name}.md').exists(), name
    assert 'baseline (input-blind)' in (figs/'exact_match.md').read_text()
    items = pd.read_csv(next((tmp_path/'results'/'quickstart').glob('*.items.csv.gz')))
    assert len(items) == 4 and items.item.is_unique and items.item.str.startswith('gen:').all()
    assert {'gold', 'prediction', 'em', 'token_f1', 'hit_budget', 'random_lf_f1', 'constant_lf_f1'} <= set(items.columns)
    budget = int(pd.read_csv(next((tmp_path/'results'/'quickstart').glob('*.csv'))).max_new_tokens.iloc[0])   # the rows' budget
    assert (items.gold_tokens > 0).all() and (items.truncated == (items.gold_tokens > budget)).all()
    assert not items.em[items.truncated].any()                                                     # a gold longer than the budget is never matched
    assert 'ran 1, skipped 0' in out1
    out2 = _cogen('run', 'quickstart', '--profile', 'smoke', '--out', str(tmp_path))
    assert 'ran 0, skipped 1 (fresh), failed 0; model calls in this invocation: 0' in out2
    out3 = _cogen('run', 'quickstart', '--profile', 'smoke', '--out', str(tmp_path), '--force')
    assert 'ran 1, skipped 0 (fresh), failed 0; model calls in this invocation: 0' in out3, out3
    site = _cogen('site', '--out', str(tmp_path), '--library', 'none')   # the library notebooks: test_notebooks runs them, test_site renders one
    idx = (tmp_path/'_site'/'index.html').read_text()
    assert 'summary-smoke' in idx and 'quickstart' in idx
