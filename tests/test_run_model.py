"""`cogen run quickstart --profile smoke --model gemma3-270m --set n_examples=2` (issue 21): the run has the override in
its parameters, its rows name the model, and a second identical call skips it as fresh. One real model, two examples
(the only test here that runs a model; the bad inputs of --model and --set are in tests/test_cli_bad_input.py)."""
import json, subprocess, sys
from pathlib import Path
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
COGEN = str(Path(sys.executable).parent/'cogen')


def _cogen(*args):
    r = subprocess.run([COGEN, *args], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr


def test_model_and_set_override(tmp_path):
    args = ('run', 'quickstart', '--profile', 'smoke', '--model', 'gemma3-270m', '--set', 'n_examples=2', '--out', str(tmp_path))
    out1 = _cogen(*args)
    assert 'quickstart/smoke: 1 run(s) changed by --model gemma3-270m --set n_examples=2, under slugs of their own' in out1, out1
    assert 'ran 1, skipped 0 (fresh)' in out1, out1
    mans = [json.loads(p.read_text()) for p in (tmp_path/'runs'/'quickstart').glob('model=*.json')]
    (man,) = [m for m in mans if not m.get('committed')]                       # the run executed here; the others: committed cpu rows' pages
    assert all(m['status'] == 'reused' and m['profile'] == 'cpu' for m in mans if m.get('committed')), mans
    assert man['status'] == 'ok' and man['params'] == {'model': 'gemma3-270m', 'n_examples': 2, 'seed': 0}
    rows = pd.read_csv(next((tmp_path/'results'/'quickstart').glob('model=gemma3-270m*.csv')))
    assert set(rows.model) == {'gemma3-270m'} and set(rows.loc[rows.metric == 'exact_match', 'n']) == {2}
    from cogen_lib.models import model_spec
    rev = model_spec('gemma3-270m').revision                                   # the weights' revision labels the rows and the models table
    assert rev and set(rows.revision.astype(str)) == {rev}
    models_md = (tmp_path/'runs'/'_models'/'figures-smoke'/'models.md').read_text()
    assert f'| gemma3-270m ' in models_md and f' {rev} ' in models_md, models_md
    out2 = _cogen(*args)
    assert 'ran 0, skipped 1 (fresh), failed 0; model calls in this invocation: 0' in out2, out2
