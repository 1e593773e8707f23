"""The SPOR summary (executed by the runner, skipped by nbdev_test) on made-up runs: one table per paper table with a
`source` column (the paper's rows, ours, the copy-the-table baseline), verdicts computed from the per-item outcomes,
and the three figures. The runs are written with the same `Recorder`, metric names and per-item columns as `nbs/spor/experiment.ipynb`
writes, with effects chosen on either side of what 60 items can detect."""
import json
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from cogen_lib.results import Recorder

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT/'nbs'/'spor'/'summary.ipynb'
BASE = dict(model='smollm2-135m', method='lora', epochs=1, train_limit=240, eval_limit=60, lr=0.0005, batch_size=6, max_new_tokens=64,
            num_beams=1, split_seed=0, tries=0, split_workers=1, seed=0)


def _run(out: Path, slug: str, params: dict, items: pd.DataFrame, rows: list[tuple]):
    "Write one made-up run: its rows (metric, value, n, lo, hi) and its per-item file, as the runner leaves them."
    rec = Recorder('spor', {**BASE, **params}, out/f'{slug}.csv')
    for m, v, n, lo, hi in rows: rec.add(m, v, n=n, ci_low=lo, ci_high=hi, interval='made up')
    rec.save_items(items, key='item'); rec.save()
    return slug


def _test_items(rng, k, level, copy_level=0.3):
    f = np.clip(rng.normal(level, 0.05, k), 0, 1)
    return pd.DataFrame({'item': [f'test:s{i}' for i in range(k)], 'set': 'test', 'size': 2 + np.arange(k) % 3,
                         'prediction': 'x', 'copy': 'y', 'parent_f': f, 'copy_parent_f': np.full(k, copy_level),
                         'bleu_stats': '5 5 3 2 1 0 5 4 3 2', 'copy_bleu_stats': '5 5 1 0 0 0 5 4 3 2'})


def _score_rows(it):
    f, c = it.parent_f.mean(), it.copy_parent_f.mean()
    return [('parent_f', f, len(it), f - 0.02, f + 0.02), ('copy_parent_f', c, len(it), c - 0.01, c + 0.01),
            ('bleu', 30.0, len(it), 25.0, 35.0), ('copy_bleu', 5.0, len(it), 3.0, 7.0), ('generation_seconds', 12.0, len(it), None, None)]


@pytest.fixture(scope='module')
def summary(tmp_path_factory):
    pm = pytest.importorskip('papermill')
    tmp = tmp_path_factory.mktemp('spor-summary')
    res = tmp/'results'; res.mkdir()
    rng = np.random.default_rng(0)
    slugs = []
    for ts, level in (('atom', 0.50), ('combination', 0.56)):           # Combination better: the paper's sign
        it = _test_items(rng, 60, level)
        slugs.append(_run(res, f'sys-{ts}', dict(aspect='systematicity', dataset='webnlg', train_set=ts, threshold=0, split='systematicity-webnlg'), it, _score_rows(it)))
    for n in (3, 4):                                                     # two thresholds: runs that differ only in N
        for ts, level in (('invisible', 0.60), ('visible', 0.60)):       # a gap far below what 60 items can see
            it = _test_items(rng, 60, level)
            slugs.append(_run(res, f'prod{n}-{ts}', dict(aspect='productivity', dataset='webnlg', train_set=ts, threshold=n, split='productivity-webnlg'), it, _score_rows(it)))
    for ts, tau, ordp in (('original', 0.1, 0.9), ('match', 0.9, 0.4)):  # Match: higher CWIO, worse ordering (the paper's signs)
        it = _test_items(rng, 60, 0.6).assign(cwio_tau=np.clip(rng.normal(tau, 0.2, 60), -1, 1), copy_cwio_tau=1.0)
        both = (rng.random(60) < ordp).astype(int)
        mi = pd.DataFrame({'item': [f'main:s{i}' for i in range(60)], 'set': 'main', 'size': 3, 'output_1': 'o', 'output_2': 'o',
                           'fidelity_both': 1, 'fidelity_one': 0, 'ordering_both': both, 'ordering_one': 1 - both,
                           'copy_fidelity_both': 1, 'copy_ordering_both': 0})
        rows = _score_rows(it) + [(m, v, 60, v - 5, min(100, v + 5)) for m, v in (('fidelity_pbh', 100.0), ('fidelity_poh', 0.0), ('ordering_pbh', 100 * both.mean()),
                                                                    ('ordering_poh', 100 - 100 * both.mean()), ('copy_fidelity_pbh', 100.0), ('copy_ordering_pbh', 0.0))]
        rows += [('cwio', float(it.cwio_tau.mean()), 60, 0.0, 1.0), ('copy_cwio', 1.0, 60, 1.0, 1.0)]
        slugs.append(_run(res, f'order-{ts}', dict(aspect='order', dataset='e2e', train_set=ts, threshold=0, split='order-e2e'),
                          pd.concat([it, mi], ignore_index=True), rows))
    it = _test_items(rng, 60, 0.6)
    a = (rng.random(80) < 0.7).astype(int)
    ri = pd.DataFrame({'item': [f'rules:r{i}' for i in range(80)], 'set': 'rules', 'size': 2, 'output': 'o', 'hidden': '{}',
                       'a': a, 'b': 0, 'copy_a': 1, 'copy_b': 0})
    rows = _score_rows(it) + [(f'{p}rule ({x}, {y})', v, 80, 0.0, 100.0) for p in ('', 'copy_') for x, y, v in ((1, 0, 70.0), (0, 0, 30.0), (0, 1, 0.0), (1, 1, 0.0))]
    rows += [('train_pairs', 237.0, 237, None, None)]                    # the one run that records its training pairs
    slugs.append(_run(res, 'rules', dict(aspect='rules', dataset='webnlg', train_set='original', threshold=0, split='rules-webnlg'),
                      pd.concat([it, ri], ignore_index=True), rows))
    runs_file = tmp/'slugs.json'; runs_file.write_text(json.dumps(slugs))
    figs = tmp/'figures'
    pm.execute_notebook(str(NB), str(tmp/'summary.ipynb'), cwd=str(ROOT), kernel_name='python3', language='python', progress_bar=False,
                        parameters=dict(results_dir=str(res), runs_file=str(runs_file), figures_dir=str(figs), profile='smoke',
                                        committed_root=str(tmp/'no-committed-rows')))   # the project's committed long rows left out
    return figs


def test_one_table_per_paper_table_with_sources(summary):
    for name, paper in (('table2', 'paper (Table 2)'), ('table4', 'paper (Table 4)'), ('table5', 'paper (Table 5)'), ('table6', 'paper (Table 6)')):
        t = pd.read_csv(summary/f'{name}.csv')
        assert t.columns[0] == 'source', name
        src = set(t.source)
        assert {paper, 'ours (smoke)', 'baseline (smoke, same items)'} <= src, (name, src)
        assert (t.source == paper).sum() >= 12, name                           # every model of the paper, both datasets
    t2 = pd.read_csv(summary/'table2.csv')
    ours = t2[t2.source == 'ours (smoke)'].iloc[0]
    assert ours.Atom.startswith('50.') and '[' in ours.Atom, ours.Atom         # value [interval]
    assert 'above the baseline' in ours['vs copy-the-table']
    assert t2[t2.source == 'baseline (smoke, same items)'].Atom.iloc[0].startswith('30.0')


def _item_gap(res: Path, hi: str, lo: str, col: str = 'parent_f', set_: str = 'test') -> np.ndarray:
    "Per-item differences hi - lo of column `col` on the items both runs scored, x100, read back from the per-item files."
    a, b = (pd.read_csv(res/f'{s}.items.csv.gz').set_index('item') for s in (hi, lo))
    a, b = a[a.set == set_][col].dropna(), b[b.set == set_][col].dropna()
    common = a.index.intersection(b.index)
    return 100 * (a.loc[common] - b.loc[common]).to_numpy()


def test_verdicts_follow_the_items(summary):
    "Every claim of claims/spor.yaml has one structured verdict, judged by the engine from the per-item outcomes."
    from cogen_lib.claims import load_claims
    v = pd.read_csv(summary/'verdicts.csv').set_index('claim_id')
    assert list(v.columns[:10]) == ['claim', 'kind', 'effect', 'ci_low', 'ci_high', 'paper_effect', 'n', 'p', 'mde', 'budget']
    assert set(v.index) == {c.id for c in load_claims('spor', ROOT)}                 # every claim has a row, run or not
    res = summary.parent/'results'
    d = _item_gap(res, 'sys-combination', 'sys-atom')
    s = v.loc['systematicity-webnlg']
    assert int(s.n) == 60 and abs(s.effect - d.mean()) < 1e-9 and s.p < 0.001       # the paired items, recomputed
    # one trained model per arm: a claim about training gets no significance verdict; the item-level one goes to the details
    assert s.kind == 'not testable' and s.seeds == 1 and 'one trained model: a claim about what training does' in s.why and s.unit_of_analysis == 'training runs'
    assert s.ci_low > s.paper_effect == 0.40                                     # +6 points, conditional on this model
    det = pd.read_csv(summary/'verdicts_details.csv')
    assert det.verdict.str.startswith('direction reproduced, size differs (items as units, conditional on this model').any()
    n3, n4 = v.loc['productivity-webnlg-n3'], v.loc['productivity-webnlg-n4']      # gaps far below what 60 items can detect
    assert abs(n3.effect - _item_gap(res, 'prod3-visible', 'prod3-invisible').mean()) < 1e-9 and n3.mde > n3.paper_effect
    assert n3.kind == 'not testable' and n3.ci_low < 0 < n3.ci_high < n3.paper_effect     # the interval excludes the paper's 1.42, but one model
    assert n4.kind == 'not testable' and n4.ci_low < 0 < n4.paper_effect < n4.ci_high
    assert v.loc['order-cwio-e2e', 'kind'] == 'not testable' and v.loc['order-cwio-e2e', 'effect'] > 0.45
    o = v.loc['order-ordering-e2e']                                               # McNemar on the main-test items
    assert abs(o.effect - _item_gap(res, 'order-match', 'order-original', 'ordering_both', 'main').mean()) < 1e-9 and o.p < 0.001 and o.effect < 0
    r = v.loc['rules-webnlg']                                                     # a level: correct copies below 90%, not "below copy-the-table"
    assert r.kind == 'not testable' and r.ci_high < 90 and r.ci_high < r.paper_effect and int(r.n) == 80
    assert r.competence in ('met', 'not met') and pd.isna(v.loc['systematicity-webnlg', 'competence'])   # a deficit claim declares its competence
    assert v.loc['systematicity-e2e', 'kind'] == 'not run' and v.loc['llm-systematicity', 'kind'] == 'not testable'
    md = (summary/'verdicts.md').read_text().splitlines()
    assert [c.strip() for c in md[0].split('|')[1:-1]] == ['claim', 'paper', 'ours [95% CI]', 'n', 'verdict', 'why']   # six columns
    assert sum(1 for l in md if l.startswith('| ') and not l.startswith('| claim')) == len(v)     # one row per claim
    assert (summary/'verdicts_details.md').exists()


def test_figures_drawn(summary):
    for f in ('fig_atom_vs_combination', 'fig_invisible_vs_visible', 'fig_order_fidelity'):
        assert (summary/f'{f}.png').stat().st_size > 5000, f


def test_cost_has_one_row_per_run(summary):
    "Runs that differ only in productivity's N (the `threshold` column) keep a row each in the cost table."
    c = pd.read_csv(summary/'cost.csv')
    prod = c[c.aspect == 'productivity']
    assert sorted(zip(prod.threshold, prod.train_set)) == [(3, 'invisible'), (3, 'visible'), (4, 'invisible'), (4, 'visible')]


def test_protocol_table(summary):
    "The protocol section: one row per profile of ours computed from the runs' parameters and rows, then the paper's."
    nb = json.loads((summary.parent/'summary.ipynb').read_text())
    md = ''.join(''.join(o['data']['text/markdown']) for c in nb['cells'] if c['id'] == '5548d04e' for o in c['outputs'])
    rows = [[x.strip() for x in l.split('|')[1:-1]] for l in md.splitlines() if l.startswith(('| ours', '| paper'))]
    runs = len(list((summary.parent/'results').glob('*.csv')))
    assert [r[0] for r in rows] == [f'ours (smoke, {runs} runs)', 'paper (Xu & Wang 2024, Sec. 3 and App. A)']
    assert rows[0][1:] == ['smollm2-135m', 'LoRA', '1', '237 (in some runs; budget: 240 pairs)', 'greedy', '60 (limit: 60)', '1']
    assert rows[1][2:] == ['LoRA', '10', 'the whole training set', 'beam 5', 'the whole test set', '3']
