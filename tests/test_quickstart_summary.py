"""The quickstart summary on synthetic runs (result rows and per-item outcomes written by the library's `Recorder` with
the run notebook's parameters and metrics): its verdicts, the baselines beside our numbers, the paired tests and the
token budget come out with the right numbers and words, and no interval has zero width; a run without items is refused."""
import ast, json, re
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from cogen_lib.grid import RunFiles
from cogen_lib.metrics import proportion, clustered_mean, wilson_ci
from cogen_lib.results import Recorder

NB = 'nbs/quickstart/summary.ipynb'
CATS = ['active_to_passive', 'cp_recursion', 'obj_to_subj_common', 'pp_recursion', 'prim_to_subj_proper', 'subj_to_obj_proper']
N = 48          # items per run, as in the cpu profile
BUDGET = 64


def run_params(root: Path) -> dict:
    "The parameters of the run notebook (nbs/quickstart/run.ipynb) with their defaults: what every result row carries."
    nb = json.loads((root/'nbs/quickstart/run.ipynb').read_text())
    src = next(''.join(c['source']) for c in nb['cells'] if 'parameters' in c['metadata'].get('tags', []))
    return {n.target.id: ast.literal_eval(n.value) for n in ast.parse(src).body if isinstance(n, ast.AnnAssign)}


def fake_run(folder: Path, root: Path, model: str, seed: int, f1_gain: float, em_rate: float) -> pd.DataFrame:
    """One synthetic quickstart run of `model` (its rows `<slug>.csv` and items `<slug>.items.csv.gz`, with the metrics of
    the run notebook): our token F1 is the constant baseline's plus `f1_gain`, our exact match a draw at `em_rate`."""
    params = {**run_params(root), 'model': model, 'seed': seed, 'n_examples': N, 'max_new_tokens': BUDGET}
    params.pop('results_path', None)
    rng = np.random.default_rng([seed, len(model)])
    gold_tokens = np.where(np.arange(N) % 3 == 0, BUDGET + 10, BUDGET - 20)               # a third of the golds are too long
    const_f1 = np.clip(rng.normal(0.64, 0.1, N), 0, 1)
    it = pd.DataFrame({'item': [f'gen:{seed * 1000 + i}' for i in range(N)], 'category': [CATS[i % len(CATS)] for i in range(N)],
                       'sentence': 'A cat slept .', 'gold': 'cat ( x _ 1 )', 'prediction': 'a fake LF', 'error': '', 'finish_reason': 'length',
                       'em': (rng.random(N) < em_rate) & (gold_tokens <= BUDGET), 'token_f1': np.clip(const_f1 + f1_gain + rng.normal(0, 0.02, N), 0, 1),
                       'hit_budget': rng.random(N) < 0.7, 'gold_tokens': gold_tokens, 'truncated': gold_tokens > BUDGET,
                       'random_lf': 'dog ( x _ 1 )', 'random_lf_em': False, 'random_lf_f1': np.clip(const_f1 - 0.06 + rng.normal(0, 0.1, N), 0, 1),
                       'constant_lf': 'cake ( x _ 1 )', 'constant_lf_em': False, 'constant_lf_f1': const_f1})
    it['error'] = None
    slug = f"model={model}_n_examples={N}_seed={seed}-fake0001"
    rec = Recorder('quickstart', params, folder/f'{slug}.csv')
    for prefix, em, f1 in (('', 'em', 'token_f1'), ('random_lf_', 'random_lf_em', 'random_lf_f1'), ('constant_lf_', 'constant_lf_em', 'constant_lf_f1')):
        p = proportion(it[em].astype(int)); rec.add(f'{prefix}exact_match', p['value'], n=N, ci_low=p['ci_low'], ci_high=p['ci_high'], interval='wilson')
        c = clustered_mean(it[f1], it.category); rec.add(f'{prefix}token_f1', c['value'], n=N, ci_low=c['ci_low'], ci_high=c['ci_high'], interval='clustered')
    for m, flags in (('hit_budget', it.hit_budget), ('gold_over_budget', it.truncated)):
        p = proportion(flags.astype(int)); rec.add(m, p['value'], n=N, ci_low=p['ci_low'], ci_high=p['ci_high'], interval='wilson')
    v, lo, hi = wilson_ci(7770, 21000); rec.add('gold_over_budget_split', v, n=21000, ci_low=lo, ci_high=hi, interval='wilson')
    for p, v in ((50, 61), (90, 130), (95, 281), (100, 622)): rec.add(f'gold_tokens_p{p}', v, n=21000, interval='none')
    rec.add('failed_examples', 0, n=N); rec.add('model_calls', N, n=N)
    folder.mkdir(parents=True, exist_ok=True)
    rec.save_items(it); rec.save()
    return it


def execute_summary(root: Path, results: Path, figures: Path, log: Path):
    from cogen_lib.kernel import run_notebook
    run_notebook(root/NB, figures.parent/'summary.ipynb', log, cwd=root,
                 parameters=dict(results_dir=str(results), runs_file='', figures_dir=str(figures), profile='cpu'))


def zero_width(text: str) -> list[str]:
    "The intervals `a-b` (or `a to b`) in `text` whose ends are equal."
    return [m.group(0) for m in re.finditer(r'(-?\d+\.\d)(?:-| to )(-?\d+\.\d)\b', text) if m.group(1) == m.group(2)]


def test_zero_width_finder():
    assert zero_width('| 0.0-0.0 | 1.0-3.8 | 2.5 to 2.5 |') == ['0.0-0.0', '2.5 to 2.5'] and zero_width('0.0-3.8') == []


def test_summary_on_synthetic_runs(tmp_path, root):
    "Two models x 2 seeds: smollm2-135m (`flat`) never matches and sits at the constant baseline; gemma3-270m (`good`) is 15 points above it, with some exact matches."
    res = tmp_path/'results'
    items = {(m, s): fake_run(res, root, m, s, gain, em) for m, gain, em in (('smollm2-135m', 0.0, 0.0), ('gemma3-270m', 0.15, 0.4)) for s in (0, 1)}
    figs = tmp_path/'figures'
    execute_summary(root, res, figs, tmp_path/'kernel.log')
    for f in ('verdicts', 'exact_match', 'baseline_tests', 'budget', 'per_run'):
        text = (figs/f'{f}.md').read_text()
        assert not zero_width(text), (f, zero_width(text))
        assert re.search(r'\|\s*n\s*\|', text.splitlines()[0]), f   # n in every table
    assert (figs/'exact_match.png').stat().st_size > 10_000
    read = lambda name: pd.read_csv(figs/f'{name}.csv', keep_default_na=False)

    # every model's numbers sit beside both baselines computed on its items; pooled over 2 seeds, n = 96
    em = read('exact_match')
    assert list(em.source) == ['ours', 'baseline (input-blind)', 'baseline (input-blind)'] * 2
    assert set(em.system) == {'smollm2-135m', 'gemma3-270m', 'random train LF', 'best constant train LF'} and (em.n == 2 * N).all()
    flat = em[em['items of'] == 'smollm2-135m'].set_index('system')
    hi = 100 * stats.binomtest(0, 2 * N).proportion_ci(method='wilson').high
    assert flat.loc['smollm2-135m', 'EM 95% CI (Wilson)'] == f'0.0-{hi:.1f}'                       # 0 of 96: an honest one-sided bound
    assert flat.loc['smollm2-135m', 'EM over seeds (95%)'] == '2 seeds all at 0.0: no spread measured'
    good = pd.concat([items['gemma3-270m', 0], items['gemma3-270m', 1]])
    assert em.set_index('system').loc['gemma3-270m', 'token F1 (%)'] == pytest.approx(100 * good.token_f1.mean(), abs=0.05)
    seeds = np.array([items['gemma3-270m', s].em.mean() for s in (0, 1)])
    h = stats.t.ppf(0.975, 1) * seeds.std(ddof=1) / np.sqrt(2)
    lo, hi2 = max(0, seeds.mean() - h), min(1, seeds.mean() + h)
    assert em.set_index('system').loc['gemma3-270m', 'EM over seeds (95%)'] == f"{100 * lo:.1f}-{100 * hi2:.1f} (t, 2 seeds)"

    # the paired tests: against the stronger baseline, with the MDE; numbers only (the verdicts come from the engine)
    t = read('baseline_tests').set_index(['model', 'metric'])
    assert 'verdict' not in t.columns
    assert t.loc[('smollm2-135m', 'token F1'), 'stronger baseline'] == 'best constant train LF'
    assert t.loc[('smollm2-135m', 'exact match'), 'p'] == '1.000' and t.loc[('smollm2-135m', 'exact match'), 'difference 95% CI'] == f'-{hi:.1f} to {hi:.1f}'
    assert t.loc[('gemma3-270m', 'token F1'), 'p'] == '< 0.001' and t.loc[('gemma3-270m', 'exact match'), 'p'] == '< 0.001'

    # the verdicts open the summary, judged by cogen_lib.claims from claims/quickstart.yaml
    vmd = (figs/'verdicts.md').read_text().splitlines()[0]
    assert len([c for c in vmd.strip('|').split('|')]) <= 6, vmd
    v = pd.read_csv(figs/'verdicts.csv')
    assert list(v.columns[:11]) == ['claim_id', 'claim', 'kind', 'effect', 'ci_low', 'ci_high', 'paper_effect', 'n', 'p', 'mde', 'budget']
    v = v.set_index('claim_id')
    assert set(v.index) == {'exact-match-smollm2', 'exact-match-gemma3'}   # the demo's token-F1 check is not a claim
    assert v.loc['exact-match-smollm2', 'kind'] == 'not testable' and 'precondition not met' in v.loc['exact-match-smollm2', 'why']   # at 0%: the floor
    good = pd.concat([items['gemma3-270m', 0], items['gemma3-270m', 1]])
    k = int(good.em.sum()); ci = stats.binomtest(k, 2 * N).proportion_ci(method='wilson')
    g = v.loc['exact-match-gemma3']
    assert g.kind in ('reproduced', 'direction reproduced, size differs') and g.n == 2 * N and g.paper_effect == 35
    assert (g.effect, g.ci_low, g.ci_high) == pytest.approx((100 * k / (2 * N), 100 * ci.low, 100 * ci.high))
    assert g.kind == ('reproduced' if 100 * ci.low <= 35 <= 100 * ci.high else 'direction reproduced, size differs')
    share = np.mean([x for s in (0, 1) for x in items['smollm2-135m', s].truncated])
    nb = json.loads((figs.parent/'summary.ipynb').read_text())
    first_table = next(i for i, c in enumerate(nb['cells']) if c['cell_type'] == 'code' and re.search(r'save_(table|figure|verdict_tables)\(', ''.join(c['source'])))
    assert 'save_verdict_tables' in ''.join(nb['cells'][first_table]['source'])

    b = read('budget').set_index('model')
    assert b.loc['smollm2-135m', 'tokens for 90 / 95 / 100% of the split'] == '130 / 281 / 622'
    assert b.loc['gemma3-270m', 'EM on items that fit (%)'].endswith(f", n={2 * N - int(share * 2 * N)}")


def test_summary_refuses_a_run_without_items(tmp_path, root):
    import papermill as pm
    res = tmp_path/'results'
    fake_run(res, root, 'flat', 0, 0.0, 0.0)
    p = next(res.glob('*.items.csv.gz')); p.unlink()
    with pytest.raises(pm.PapermillExecutionError, match='has no per-item outcomes'):
        execute_summary(root, res, tmp_path/'figures', tmp_path/'kernel.log')
