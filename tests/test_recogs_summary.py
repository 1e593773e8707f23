"The ReCOGS summary puts the committed rows of GPU runs (results/recogs/paper/) beside a profile's own, or says there are none."
import os
import shutil
from pathlib import Path
import pandas as pd
import pytest
from cogen_lib.grid import load_grid
from cogen_lib.runner import run_grid, run_summary

pytestmark = pytest.mark.skipif(not os.environ.get('COGEN_MIRROR') and not (Path.home()/'.cache'/'cogen').exists(),
                                reason='needs the COGS data (COGEN_MIRROR)')

def test_summary_shows_committed_gpu_rows(tmp_path, root, monkeypatch):
    monkeypatch.setenv('COGEN_CACHE', str(tmp_path/'cache'))
    out = tmp_path/'out'
    rep = run_grid('recogs', 'smoke', root=root, out=out, summary=False, log=lambda s: None)
    assert rep.ran and not rep.failed
    grid = load_grid('recogs', root)
    t4 = lambda: pd.read_csv(out/'runs'/'recogs'/'figures-smoke'/'table4_token_removal.csv', keep_default_na=False)

    # no committed GPU rows: the tables say so, in every row
    empty = tmp_path/'empty'; (empty/'results'/'recogs'/'paper').mkdir(parents=True)
    slugs = [r.slug for r in grid.runs('smoke')]
    summ = lambda proj: run_summary(grid, 'nbs/recogs/summary.ipynb', 'smoke', root, out, slugs, extra={'committed_root': str(proj)})
    summ(empty)
    col = 'ours on GPU: model, data, budget, device'
    assert t4()[col].str.startswith('not run yet: no GPU rows committed').all()

    # one committed "GPU" run (the smoke run's rows with provenance columns, as a paper-profile run would carry)
    proj = tmp_path/'proj'; (proj/'results'/'recogs'/'paper').mkdir(parents=True)
    df = pd.read_csv(out/'results'/'recogs'/f'{slugs[0]}.csv', keep_default_na=False, na_values=[''])
    df = df.assign(device='NVIDIA H100 80GB HBM3', commit='abc1234', wall_seconds=61.5)
    df.to_csv(proj/'results'/'recogs'/'paper'/f'{slugs[0]}-gpu.csv', index=False)
    summ(proj)
    t = t4()
    cogs = t[(t.model == 'transformer') & (t.variant == 'COGS')].iloc[0]
    assert 'NVIDIA H100 80GB HBM3' in cogs[col] and 'commit abc1234' in cogs[col], cogs[col]
    assert cogs['Overall (ours, GPU)'] == cogs['Overall (ours)'] != '—'         # the same rows give the same numbers
    other = t[(t.model == 'lstm') & (t.variant == 'COGS')].iloc[0]
    assert other[col] == 'not among the committed GPU runs' and other['Overall (ours, GPU)'] == '—'
