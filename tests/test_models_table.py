"""The table of models across papers (`figures/models.md`): one row per model of ours and per model of a paper, one
column per paper's headline measure, built from the headline tables the summaries write (`results.save_headline`);
a headline whose number of ours lacks its n or interval is refused; `cogen run` executes the models notebook after the
summaries, into `figures/` for the cpu profile and under `runs/` for smoke; the quickstart summary writes its headline."""
import re
from pathlib import Path
import pandas as pd
import pytest
from scipy import stats
from cogen_lib.core import CogenError
from cogen_lib.grid import RunFiles
from cogen_lib.results import HEADLINE_COLUMNS, save_headline, read_headlines, models_table


def ours(paper, measure, model, profile='cpu', n=48, value=12.5, lo=5.9, hi=24.7, baseline_value=0.0, **kw):
    return dict(paper=paper, measure=measure, model=model, profile=profile, budget=f'{profile} budget of {model}', n=n, value=value,
                ci_low=lo, ci_high=hi, interval='Wilson', baseline='constant', baseline_value=baseline_value, source='ours', **kw)


def write_headlines(figures: Path) -> list[Path]:
    """Two papers' headline tables under `figures/<paper>/`: `m1` in both (twice in `alpha`: cpu and long), `m2` at a
    revision in `alpha` only, `m3` in `beta` only, and each paper's own models as reference rows."""
    save_headline([ours('alpha', 'gen EM (%)', 'm1'), ours('alpha', 'gen EM (%)', 'm1', profile='long', n=1000, value=20.0, lo=17.6, hi=22.6),
                   ours('alpha', 'gen EM (%)', 'm2', revision='abc123', value=3.0, lo=1.0, hi=8.0),
                   dict(paper='alpha', measure='gen EM (%)', model='Transformer', value=81.3, ci_low=80.7, ci_high=81.9,
                        interval='paper: bootstrap, 20 runs', source='paper: Table 4')], figures/'alpha')
    save_headline([ours('beta', 'PARENT (webnlg)', 'm1', value=40.0, lo=35.0, hi=45.0), ours('beta', 'PARENT (webnlg)', 'm3', value=30.0, lo=25.0, hi=35.0),
                   dict(paper='beta', measure='PARENT (webnlg)', model='T5-large', n=2360, value=66.5, source='paper: Table 2'),
                   dict(paper='beta', measure='PARENT (webnlg)', model='Transformer', value=50.0, source='paper: Table 2')], figures/'beta')
    return sorted(figures.glob('*/headline.csv'))


def test_one_row_per_model_with_the_papers_models(tmp_path):
    table, budgets = models_table(read_headlines(write_headlines(tmp_path)))
    keys = list(zip(table.source, table.model, table.revision))
    assert keys == [('ours', 'm1', '—'), ('ours', 'm2', 'abc123'), ('ours', 'm3', '—'),
                    ('paper: Table 2', 'T5-large', ''), ('paper: Table 2', 'Transformer', ''), ('paper: Table 4', 'Transformer', '')]
    assert len(set(keys)) == len(keys)                                  # one row per model (and source, revision)
    assert list(table.columns) == ['source', 'model', 'revision', 'alpha: gen EM (%)', 'alpha: best baseline', 'beta: PARENT (webnlg)', 'beta: best baseline']
    row = table.set_index(['source', 'model'])
    assert row.loc[('ours', 'm1'), 'alpha: gen EM (%)'] == '20.0 [17.6, 22.6] (n=1,000, long)'     # the long row, not the cpu one
    assert row.loc[('ours', 'm1'), 'beta: PARENT (webnlg)'] == '40.0 [35.0, 45.0] (n=48, cpu)'
    assert row.loc[('ours', 'm1'), 'beta: best baseline'] == 'constant: 0.0'
    assert row.loc[('ours', 'm3'), 'alpha: gen EM (%)'] == '—'                                       # no result: said, not blank
    assert row.loc[('paper: Table 4', 'Transformer'), 'alpha: gen EM (%)'] == '81.3 [80.7, 81.9]'   # the paper's own interval
    assert row.loc[('paper: Table 2', 'T5-large'), 'beta: PARENT (webnlg)'] == '66.5 (n=2,360)'
    assert row.loc[('paper: Table 2', 'T5-large'), 'beta: best baseline'] == ''
    shown = budgets[(budgets.source == 'ours') & (budgets.model == 'm1')]
    assert shown[['paper', 'profile', 'budget']].values.tolist() == [['alpha', 'long', 'long budget of m1'], ['beta', 'cpu', 'cpu budget of m1']]
    values = table[[c for c in table.columns[3:] if not c.endswith('best baseline')]].to_numpy().ravel()
    assert len(budgets) == sum(v != "—" for v in values) == 7                 # the budget of every cell shown


def test_a_paper_with_two_measures_gets_a_baseline_column_for_each(tmp_path):
    "ReCOGS writes COGS gen EM and ReCOGS_pos gen SEM: each measure keeps its own baseline column (a shared name would collide)."
    save_headline([ours('gamma', 'COGS EM (%)', 'm1', baseline_value=1.0), ours('gamma', 'ReCOGS SEM (%)', 'm1', baseline_value=2.0)], tmp_path/'gamma')
    write_headlines(tmp_path)
    table, _ = models_table(read_headlines(sorted(tmp_path.glob('*/headline.csv'))))
    assert list(table.columns)[3:] == ['alpha: gen EM (%)', 'alpha: best baseline', 'beta: PARENT (webnlg)', 'beta: best baseline',
                                       'gamma: COGS EM (%)', 'gamma: COGS EM (%): best baseline', 'gamma: ReCOGS SEM (%)',
                                       'gamma: ReCOGS SEM (%): best baseline']
    row = table.set_index(['source', 'model']).loc[('ours', 'm1')]
    assert (row['gamma: COGS EM (%): best baseline'], row['gamma: ReCOGS SEM (%): best baseline']) == ('constant: 1.0', 'constant: 2.0')


@pytest.mark.parametrize('column, blank, message', [('n', '', 'no n'), ('interval', '', 'empty interval'),
                                                    ('ci_low', '', 'no interval (ci_low missing)'), ('baseline', '', 'empty baseline')])
def test_a_headline_without_n_or_interval_is_refused(tmp_path, column, blank, message):
    f = write_headlines(tmp_path)[0]
    df = pd.read_csv(f, keep_default_na=False, dtype=str)
    df.loc[0, column] = blank                                           # the first row of ours, edited by hand
    df.to_csv(f, index=False)
    with pytest.raises(CogenError, match=re.escape(f"{f}: row 1 (m1, gen EM (%)): {message}")):
        read_headlines([f])
    with pytest.raises(CogenError, match=re.escape(message)):         # and save_headline never writes such a row
        save_headline([{**ours('alpha', 'gen EM (%)', 'm1'), column: None}], tmp_path/'refused')
    assert not (tmp_path/'refused').exists()


def test_the_runner_writes_the_models_table(tmp_path, root):
    from cogen_lib.runner import run_models_table
    out, msgs = tmp_path/'out', []
    assert run_models_table('smoke', root, out, log=msgs.append) is None and 'no summary wrote a headline table' in msgs[-1]
    write_headlines(out/'figures')                                      # as the cpu summaries write them
    nb = run_models_table('cpu', root, out, log=msgs.append)
    assert nb == out/'runs'/'_models'/'models-cpu.ipynb' and nb.exists()
    models = pd.read_csv(out/'figures'/'models.csv', keep_default_na=False)
    assert models.model.tolist() == ['m1', 'm2', 'm3', 'T5-large', 'Transformer', 'Transformer']
    text = (out/'figures'/'models.md').read_text()
    missing = re.search(r'No headline table yet: ([^.]+)\.', text).group(1).split(', ')
    assert 'quickstart' in missing and 'alpha' not in missing          # the project's papers without a headline, named
    assert (out/'figures'/'models_budgets.md').exists() and not (out/'runs'/'_models'/'figures-cpu').exists()
    (out/'figures').rename(out/'kept')
    save_headline([ours('alpha', 'gen EM (%)', 'm1', profile='smoke')], RunFiles(out, 'alpha').figures('smoke'))
    run_models_table('smoke', root, out, log=msgs.append)               # smoke: under runs/, never figures/
    assert (out/'runs'/'_models'/'figures-smoke'/'models.md').exists() and not (out/'figures').exists()


def test_cogen_run_executes_it_after_the_summaries(monkeypatch):
    import cogen_lib.runner
    from typer.testing import CliRunner
    from cogen_lib.grid import list_papers
    from cogen_lib.cli import app
    calls, fail = [], False
    def grid(paper, profile, **kw):
        calls.append(('grid', paper)); r = cogen_lib.runner.GridReport(); r.failed = ['x'] if fail else []; return r
    monkeypatch.setattr(cogen_lib.runner, 'run_grid', grid)
    monkeypatch.setattr(cogen_lib.runner, 'run_models_table', lambda profile, out=None, log=print: calls.append(('models', profile)))
    res = CliRunner().invoke(app, ['run', 'all', '--profile', 'cpu'])
    assert res.exit_code == 0, res.output
    assert calls[-1] == ('models', 'cpu') and [c for c in calls if c[0] == 'grid'] == [('grid', p) for p in list_papers()]
    calls.clear(); fail = True
    assert CliRunner().invoke(app, ['run', 'quickstart']).exit_code == 1 and calls == [('grid', 'quickstart')]   # a failed run: no table


def test_quickstart_summary_writes_its_headline(tmp_path, root):
    "The quickstart summary on the synthetic runs of its own test: one row per model with the Wilson interval of its items, and the reference row."
    from test_quickstart_summary import fake_run, execute_summary, N
    res, figs = tmp_path/'results', tmp_path/'figures'
    items = {m: [fake_run(res, root, m, s, gain, em) for s in (0, 1)] for m, gain, em in (('flat', 0.0, 0.0), ('good', 0.15, 0.4))}
    execute_summary(root, res, figs, tmp_path/'kernel.log')
    h = read_headlines([figs/'headline.csv'])
    assert list(h.columns) == list(HEADLINE_COLUMNS) and len(h) == 3
    h = h.set_index(['source', 'model'])
    good = pd.concat(items['good'])
    k = int(good.em.sum()); ci = stats.binomtest(k, 2 * N).proportion_ci(method='wilson')
    r = h.loc[('ours', 'good')]
    assert (r.measure, r.n, r.interval, r.profile) == ('COGS gen exact match (%)', 2 * N, 'Wilson', 'cpu')
    assert (r.value, r.ci_low, r.ci_high) == pytest.approx((100 * k / (2 * N), 100 * ci.low, 100 * ci.high))
    assert r.baseline in ('random train LF', 'best constant train LF') and r.baseline_value == 0.0
    assert h.loc[('ours', 'flat')].value == 0.0
    ref = h.loc[[i for i in h.index if i[0].startswith('paper')][0]]
    assert ref.value == 35.0 and ref.n is None and ref.ci_low is None     # the paper's scale: as printed, no n, no interval
