"""The ReCOGS summary end to end: on synthetic runs (fake result rows and per-item outcomes, written by the library's
`Recorder` with the run notebook's parameters and metrics) its verdicts, Tables 4 and 6, Figure 5 and the paired
contrasts come out with the right numbers, words and budgets; on the smoke run it shows committed GPU rows beside its own."""
import ast, json, os, re, time
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from scipy import stats
from cogen_lib.results import Recorder, committed_dir

NB = 'nbs/recogs/summary.ipynb'
GEN_CATS = ['active_to_passive', 'cp_recursion', 'do_dative_to_pp_dative', 'obj_omitted_transitive_to_transitive', 'obj_pp_to_subj_pp',
            'obj_to_subj_common', 'obj_to_subj_proper', 'only_seen_as_transitive_subj_as_unacc_subj',
            'only_seen_as_unacc_subj_as_obj_omitted_transitive_subj', 'only_seen_as_unacc_subj_as_unerg_subj', 'passive_to_active',
            'pp_dative_to_do_dative', 'pp_recursion', 'prim_to_inf_arg', 'prim_to_obj_common', 'prim_to_obj_proper', 'prim_to_subj_common',
            'prim_to_subj_proper', 'subj_to_obj_common', 'subj_to_obj_proper', 'unacc_to_transitive']   # the 21 COGS gen categories
# true success rates of the fake models, per variant: lexical categories, then the structural ones (0 on COGS's Obj PP)
RATE = {'cogs': dict(lex=0.80, obj_pp_to_subj_pp=0.0, cp_recursion=0.01, pp_recursion=0.05),
        'recogs-pos': dict(lex=0.85, obj_pp_to_subj_pp=0.0, cp_recursion=0.50, pp_recursion=0.05),
        'recogs-v2': dict(lex=0.55, obj_pp_to_subj_pp=0.05, cp_recursion=0.20, pp_recursion=0.02)}
PER_CAT, PER_SPLIT = 200, 100     # gen rows per category, dev and test rows


def run_params(root: Path) -> dict:
    "The parameters of the run notebook (nbs/recogs/experiment.ipynb), with their defaults: what every result row carries."
    nb = json.loads((root/'nbs/recogs/experiment.ipynb').read_text())
    src = next(''.join(c['source']) for c in nb['cells'] if 'parameters' in c['metadata'].get('tags', []))
    return {n.target.id: ast.literal_eval(n.value) for n in ast.parse(src).body if isinstance(n, ast.AnnAssign)}


def fake_run(folder: Path, root: Path, variant: str, seed: int, provenance: bool = False, dev_rate: float = 0.95, gen: bool = True,
             decoding: str = 'greedy', epochs: int = 17) -> pd.DataFrame:
    """Write one synthetic run of the `long` budget (its rows `<slug>.csv` and items `<slug>.items.csv.gz`) into `folder`
    as the run notebook writes them (same parameters, metrics and columns; `dev_rate`: its share right on dev and test;
    `gen` False: never right on gen, in any category; `decoding`: the run's decoding parameter; `epochs`: its training
    schedule); returns its items."""
    params = {**run_params(root), 'variant': variant, 'model': 'transformer', 'seed': seed, 'epochs': epochs, 'train_limit': 0,
              'eval_limit': 0, 'max_len': 512, 'hidden': 128, 'lr': 0.001, 'batch_size': 64, 'chunks': 4, 'decoding': decoding}
    params.pop('results_path', None)
    rng = np.random.default_rng([seed, ['cogs', 'recogs-pos', 'recogs-v2'].index(variant)])
    items = []
    for split, n in (('dev', PER_SPLIT), ('test', PER_SPLIT)):
        items.append(pd.DataFrame({'item': [f'{split}:{i}' for i in range(n)], 'split': split, 'type': 'in_distribution',
                                   'em': (rng.random(n) < dev_rate).astype(int)}))
    for k, cat in enumerate(GEN_CATS):
        p = RATE[variant].get(cat, RATE[variant]['lex']) if gen else 0.0
        items.append(pd.DataFrame({'item': [f'gen:{k * PER_CAT + i}' for i in range(PER_CAT)], 'split': 'gen', 'type': cat,
                                   'em': (rng.random(PER_CAT) < p).astype(int)}))
    items = pd.concat(items, ignore_index=True)
    if variant == 'cogs': items['sem'] = items.em | (rng.random(len(items)) < 0.02)     # SEM >= exact match
    else: items['sem'], items['em'] = items.em, 0                                       # renamed variables: no exact match
    items['prediction'] = 'a fake LF'
    items = items[['item', 'split', 'type', 'prediction', 'em', 'sem']].astype({'sem': int})
    slug = (f"variant={variant}_model=transformer_seed={seed}" + ('' if decoding == 'greedy' else f'_decoding={decoding}')
            + ('' if epochs == 17 else f'_epochs={epochs}')
            + f"-{'long' if provenance else 'fake'}0001")   # a committed run is another run: its own slug
    rec = Recorder('recogs', params, folder/f'{slug}.csv')
    for split, df in items.groupby('split', sort=True):
        for cat, g in [('', df), *(df.groupby('type', sort=True) if split == 'gen' else [])]:
            for metric, col in (('exact_match', 'em'), ('sem', 'sem')):
                lo, hi = stats.binomtest(int(g[col].sum()), len(g)).proportion_ci(method='wilson')
                rec.add(metric, g[col].mean(), n=len(g), ci_low=lo, ci_high=hi, split=split, category=cat)
        for m, v in (('sem_parse_errors', 0), ('src_unk_rate', 0.0), ('tgt_unk_rate', 0.001), ('decode_seconds', 0.01 * len(df))):
            rec.add(m, v, n=len(df), split=split, category='')
    for m, v in dict(train_epochs=epochs, train_rows=24155, train_seconds=1300.0, train_examples_per_s=316.0, n_params=1258000,
                     final_train_loss=0.01, epochs_run_this_call=epochs).items():
        rec.add(m, v, n=24155, split='train', category='')
    folder.mkdir(parents=True, exist_ok=True)
    rec.save_items(items)
    df = rec.save()
    if provenance:   # a committed run carries where it ran
        df.assign(device='cpu (x86_64, 2 cores)', commit='abc1234def', wall_seconds=2400.0).to_csv(folder/f'{slug}.csv', index=False)
    return items


def execute_summary(root: Path, results: Path, figures: Path, profile: str, committed: Path, log: Path):
    from cogen_lib.kernel import run_notebook
    run_notebook(root/NB, figures.parent/'summary.ipynb', log, cwd=root, parameters=dict(
        results_dir=str(results), runs_file='', figures_dir=str(figures), profile=profile, committed_root=str(committed)))


def test_summary_on_synthetic_runs(tmp_path, root):
    """3 seeds x COGS, ReCOGS_pos, ReCOGS in the profile; one seed of COGS (0 on every gen category), ReCOGS_pos and ReCOGS
    (0 on dev) committed in `long`; no `paper` rows."""
    t0 = time.perf_counter()
    own, proj = tmp_path/'results', tmp_path/'proj'
    items = {(v, s): fake_run(own, root, v, s) for v in RATE for s in (0, 1, 2)}
    long_dir = committed_dir('recogs', 'long', proj)
    fake_run(long_dir, root, 'cogs', 0, provenance=True, gen=False)          # learned in distribution, 0 on every gen category
    fake_run(long_dir, root, 'recogs-pos', 0, provenance=True)
    # ReCOGS at the long profile's 3 epochs (its main budget in grids/recogs.yaml, beside COGS at 17) ...
    unl = fake_run(long_dir, root, 'recogs-v2', 0, provenance=True, dev_rate=0.0, epochs=3)   # never right in distribution either ...
    from cogen_lib.recogs.rewrites import convert
    gold = {sp: convert('recogs-v2', sp, 0).lf for sp in ('dev', 'test', 'gen')}
    unl['prediction'] = [re.sub(r'\b\d+\b', '44', g) if k % 2 else g for k, g in enumerate(gold[sp].iloc[int(i.split(':')[1])] for sp, i in zip(unl.split, unl.item))]
    unl.to_csv(long_dir/'variant=recogs-v2_model=transformer_seed=0_epochs=3-long0001.items.csv.gz', index=False)   # ... yet the gold structure, every other row's entities at index 44
    fake_run(long_dir, root, 'recogs-v2', 0, provenance=True, decoding='distinct-indices', epochs=3)   # the same training, decoded with distinct indices: learned
    fake_run(long_dir, root, 'recogs-v2', 0, provenance=True, epochs=30)   # a second schedule of ReCOGS: a budget of its own
    for v_ in ('recogs-v2', 'cogs'): fake_run(long_dir, root, v_, 0, provenance=True, epochs=10)   # a third, with COGS beside it
    figs = tmp_path/'figures'
    execute_summary(root, own, figs, 'cpu', proj, tmp_path/'kernel.log')
    read = lambda name: pd.read_csv(figs/f'{name}.csv', keep_default_na=False)
    for f in ('verdicts', 'table4_token_removal', 'table6_structural', 'fig5_recogs', 'contrasts', 'contrasts_per_seed', 'budget'):
        assert (figs/f'{f}.md').exists(), f
    for f in ('fig5_recogs', 'fig4_concat'): assert (figs/f'{f}.png').stat().st_size > 10_000, f

    # Table 4: our COGS overall = mean over the 3 seeds [t interval], computed here from the items
    per_seed = np.array([100 * items['cogs', s].query("split == 'gen'").em.mean() for s in (0, 1, 2)])
    h = stats.t.ppf(0.975, 2) * per_seed.std(ddof=1) / np.sqrt(3)
    t4 = read('table4_token_removal')
    cogs = t4[(t4.model == 'transformer') & (t4.variant == 'COGS')].set_index('source')
    assert cogs.loc['ours: cpu', 'Gen overall'] == f"{per_seed.mean():.1f} [{per_seed.mean() - h:.1f}, {per_seed.mean() + h:.1f}]"
    assert cogs.loc['ours: cpu', 'seeds x rows per category'] == '3 seeds x 200 rows'
    assert cogs.loc['ours: cpu', 'interval'] == 't over 3 seeds'
    assert cogs.loc['ours: long (committed)', 'interval'] == 'one seed: Wilson over its rows'
    assert '(one seed)' in cogs.loc['ours: long (committed)', 'seeds x rows per category']
    assert 'cpu (x86_64, 2 cores), commit abc1234def' in cogs.loc['ours: long (committed)', 'budget']
    assert cogs.loc['paper (Wu et al. 2023)', 'Gen overall'] == '81.3 [80.7, 81.9]'
    assert '17 epochs x 24,155 train rows' in cogs.loc['ours: cpu', 'budget'] and 'seeds 0, 1, 2' in cogs.loc['ours: cpu', 'budget']
    tr1 = t4[(t4.model == 'transformer') & (t4.variant == '+ Token Removal {x _}')]
    assert list(tr1.source) == ['paper (Wu et al. 2023)', 'ours'] and tr1.budget.iloc[1].startswith('not run at this budget')

    # Table 6: COGS Obj PP -> Subj PP is 0 in every seed: no zero-width interval, the pooled rows' Wilson interval instead
    t6 = read('table6_structural')
    c6 = t6[(t6.model == 'transformer') & (t6.variant == 'COGS') & (t6.source == 'ours: cpu')].iloc[0]
    hi = 100 * stats.binomtest(0, 600).proportion_ci(method='wilson').high
    assert c6['Obj PP -> Subj PP'] == f"0.0 [0.0, {hi:.1f}]" and c6['interval'] == '3 seeds all equal: Wilson over their 600 rows'

    # Figure 5: ReCOGS's row is there for every source; the committed long profile did not run it
    f5 = read('fig5_recogs')
    rc = f5[f5.variant == 'ReCOGS (recogs-v2) (SEM)'].set_index('source')
    assert rc.loc['ours: long (committed)', 'budget'].startswith('transformer hidden 128')
    assert rc.loc['ours: cpu', 'Gen overall'] != '—' and rc.loc['paper (Wu et al. 2023), text', 'Obj PP -> Subj PP'] == '4.5'

    # the budget table: each source's runs with their final train loss (the fake runs record 0.01)
    bud = read('budget').set_index(['source', 'variant'])
    assert float(bud.loc[('ours: long (committed)', 'recogs-v2'), 'final train loss']) == 0.01
    assert bud.loc[('ours: cpu', 'cogs'), 'seeds'] == 3

    # contrasts (3 pairs of variants: 3 seeds in cpu, seed 0 in long; ReCOGS - COGS at 10 epochs, seed 0): one per seed and gen
    # category + overall, paired on all 4,200 gen rows; the over-seeds effect = mean of the seeds'
    ps = read('contrasts_per_seed')
    assert len(ps) == (3 * 3 + 3 + 1) * 22 and (ps[ps.category == 'Gen overall']['paired rows'] == 21 * PER_CAT).all()
    con = read('contrasts')
    pos = con[(con.source == 'ours: cpu') & (con.contrast.str.startswith('transformer ReCOGS_pos (SEM) - transformer COGS'))
              & (con.category == 'Gen overall')].iloc[0]
    diffs = [100 * (items['recogs-pos', s].query("split == 'gen'")['sem'].mean() - items['cogs', s].query("split == 'gen'").em.mean()) for s in (0, 1, 2)]
    assert abs(pos['A - B (points)'] - np.mean(diffs)) < 1e-9 and pos.seeds == '0, 1, 2'
    assert pos['learned in distribution'] == 'both', pos['learned in distribution']
    # a ReCOGS at 0 on dev (long): its gen contrasts are marked, with its dev score
    low = con[(con.source == 'ours: long (committed)') & con.contrast.str.startswith('transformer ReCOGS (recogs-v2)')]
    assert len(low) and low['learned in distribution'].str.match(r'B only \(A: dev 0\.\d%\)$').all(), low['learned in distribution'].unique()

    # verdicts: the engine's, one structured row per claim and budget, one line per claim in verdicts.md (6 columns)
    from cogen_lib.claims import load_claims
    vc = pd.read_csv(figs/'verdicts.csv')                                           # numbers as numbers (not run: empty)
    assert list(vc.columns[:11]) == ['claim_id', 'claim', 'kind', 'effect', 'ci_low', 'ci_high', 'paper_effect', 'n', 'p', 'mde', 'budget']
    assert set(vc.claim_id) == {c.id for c in load_claims('recogs', root)}        # every claim has a row, run or not
    # the main budgets (the 10- and 30-epoch schedules are checked at the end)
    v = vc[~vc.budget.fillna('').str.contains(r'\b(?:10|30) epochs')].set_index(['claim_id', 'profile'])
    r = v.loc[('pos-above-cogs-gen', 'cpu')]                                        # 3 trained models: the seeds are the units
    assert r.kind in ('reproduced', 'direction reproduced, size not determined', 'direction reproduced, size differs', 'inconclusive')
    assert int(r.n) == 3 and abs(r.effect - np.mean(diffs)) < 1e-9 and r.unit_of_analysis == 'training runs' and r.seeds == 3
    assert r.paper_effect == 4.8 and v.loc[('pos-above-cogs-gen', 'cpu'), 'test'].startswith('t over 3 seeds')
    r = v.loc[('pos-above-cogs-gen', 'long')]                                      # one trained model: no verdict of significance
    assert r.kind == 'not testable' and 'one trained model: a claim about what training does' in r.why and r.test == 'McNemar (exact)'
    # "ReCOGS is harder": testable where ReCOGS is learned in distribution (cpu), not where it is 0 on dev (long), whatever the gap
    assert v.loc[('recogs-below-cogs', 'cpu'), 'kind'] != 'not testable' and v.loc[('recogs-below-cogs', 'cpu'), 'effect'] < 0
    r = v.loc[('recogs-below-cogs', 'long')]
    assert r.kind == 'not testable' and r.why.startswith('precondition not met: recogs-v2 above 50') and 'on dev' in r.why and '0.0 [0.0,' in r.why, r.why
    # ... and "in distribution, near COGS" is not judged on that model either: at 0 on dev it has not learned the task at our budget
    r = v.loc[('recogs-in-distribution', 'long')]
    assert r.kind == 'not testable' and r.why.startswith('precondition not met: recogs-v2 above 50') and r.effect < -90, (r.kind, r.effect, r.why)
    # THE FLOOR: a near-0 claim holds for a model that solves the lexical categories (cpu: 80%) ...
    r = v.loc[('cogs-objpp-near-zero', 'cpu')]
    assert r.kind == 'reproduced' and r.effect == 0 and r.ci_high < 10 and int(r.n) == PER_CAT, r.why
    # ... and is not testable for a model at 0 on every category (long), though its Obj PP -> Subj PP is 0 just the same
    for cid in ('cogs-objpp-near-zero', 'cogs-cp-recursion-near-zero', 'cogs-pp-recursion-near-zero'):
        r = v.loc[(cid, 'long')]
        assert r.kind == 'not testable' and r.effect == 0 and 'part lexical' in r.why and 'measured 0.0 [0.0, ' in r.why, (cid, r.why)
    for cid in ('concat-cp-recursion', 'concat-pp-recursion', 'preposing-objpp', 'participial-easy-objpp', 'lstm-above-transformer-recogs-objpp'):
        assert vc[vc.claim_id == cid].kind.tolist() == ['not run'], cid                # no such runs yet
    md = (figs/'verdicts.md').read_text().splitlines()
    assert [c.strip() for c in md[0].split('|')[1:-1]] == ['claim', 'paper', 'ours [95% CI]', 'n', 'verdict', 'why']   # six columns
    assert sum(1 for l in md if l.startswith('| ') and not l.startswith('| claim')) == vc.claim_id.nunique()
    assert (figs/'verdicts_details.md').exists()
    # what ReCOGS's misses are made of stays a table (not a verdict): the gold structure, every other row's entities at one index
    unary = lambda g: len(re.findall(r'(?:^|; |AND )(?:\* )?[A-Za-z]+ \( \d+ \)(?= ;| AND|$)', g))     # entities and events: one index each
    collide = 100 * np.mean([k % 2 == 1 and unary(g) >= 2 for k, g in enumerate(gold['dev'].iloc[:PER_SPLIT])])
    st = read('structure').set_index(['source', 'variant', 'split']).sort_index()
    r = st.loc[('ours: long (committed)', 'ReCOGS (recogs-v2)', 'dev')]
    assert (r.n, r['SEM (%)'], r['structure, indices abstracted (%)']) == (PER_SPLIT, 0.0, 100.0)
    assert abs(r['two entities, one index (%)'] - collide) < 1e-9 and 40 < collide <= 50
    assert (st.loc['ours: cpu', 'structure, indices abstracted (%)'] == 0).all()     # 'a fake LF' has no structure
    # the distinct-indices run: a source of its own beside the greedy one (same model, variant, seed), and the claims that name
    # that decoding judged on it, while the greedy claims keep the greedy run (0 on dev: not testable)
    DI = 'ours: long (committed), distinct-indices decoding'
    assert DI in set(st.index.get_level_values('source')) and DI in set(read('fig5_recogs').source)
    r = v.loc[('recogs-below-cogs-distinct', 'long')]
    assert r.kind == 'not testable' and 'one trained model: a claim about what training does' in r.why and int(r.n) == 21 * PER_CAT, (r.kind, r.why)
    assert '(distinct-indices decoding)' in r.budget and r.origin == 'protocol' and r.qualifies == 'recogs-below-cogs'
    assert '(greedy decoding)' in v.loc[('recogs-below-cogs', 'long'), 'budget'] and v.loc[('recogs-below-cogs', 'long'), 'kind'] == 'not testable'
    # the 30-epoch ReCOGS run: a source and a budget of its own, never pooled with the 17-epoch run of the same seed
    S30 = 'ours: long (committed), 30 epochs'
    assert S30 in set(read('fig5_recogs').source) and S30 in set(st.index.get_level_values('source'))
    assert not vc[(vc.profile == 'long') & vc.budget.fillna('').str.contains('30 epochs') & vc.claim_id.isin(
        ['recogs-below-cogs', 'recogs-below-pos'])].shape[0]                        # no COGS at 30 epochs: no contrast there
    # ReCOGS and COGS at 10 epochs: a budget of their own, contrasted with each other, while the main budget keeps ReCOGS at
    # 3 epochs against COGS at 17 (COGS's fewer epochs do not make its 10-epoch run the main one)
    S10 = 'ours: long (committed), 10 epochs'
    assert S10 in set(read('fig5_recogs').source) and S10 in set(t4.source)
    r10 = vc[(vc.claim_id == 'recogs-below-cogs') & vc.budget.fillna('').str.contains('10 epochs')]
    assert len(r10) == 1 and 'one trained model' in r10.why.iloc[0] and int(r10.n.iloc[0]) == 21 * PER_CAT, r10.to_dict('records')
    assert '3 epochs' in v.loc[('recogs-below-cogs', 'long'), 'budget'], v.loc[('recogs-below-cogs', 'long'), 'budget']
    assert '17 epochs' in t4[(t4.variant == 'COGS') & (t4.source == 'ours: long (committed)')].budget.iloc[0]
    assert S10 in set(con.source) and S10 in set(ps.source)
    print(f"synthetic summary: {time.perf_counter() - t0:.1f} s")


@pytest.mark.skipif(not os.environ.get('COGEN_MIRROR'), reason='needs the COGS data from COGEN_MIRROR (the test runs on an empty cache)')
def test_summary_shows_committed_gpu_rows(tmp_path, root, monkeypatch):
    "The smoke run's summary: no committed rows says 'one source'; a committed paper run appears as its own source, with its device."
    from cogen_lib.grid import load_grid
    from cogen_lib.runner import run_grid, run_summary
    monkeypatch.setenv('COGEN_CACHE', str(tmp_path/'cache'))
    out = tmp_path/'out'
    rep = run_grid('recogs', 'smoke', root=root, out=out, summary=False, log=lambda s: None)
    assert rep.ran and not rep.failed
    grid = load_grid('recogs', root)
    t4 = lambda: pd.read_csv(out/'runs'/'recogs'/'figures-smoke'/'table4_token_removal.csv', keep_default_na=False)
    slugs = [r.slug for r in grid.runs('smoke')]
    summ = lambda proj: run_summary(grid, NB, 'smoke', root, out, slugs, extra={'committed_root': str(proj)})

    empty = tmp_path/'empty'; (empty/'results'/'recogs'/'paper').mkdir(parents=True)
    summ(empty)
    assert set(t4().source) == {'paper (Wu et al. 2023)', 'ours: smoke', 'ours'}

    # one committed "GPU" run (the smoke run's rows and items with provenance columns, as a paper-profile run would carry)
    proj = tmp_path/'proj'; cdir = committed_dir('recogs', 'paper', proj); cdir.mkdir(parents=True)
    df = pd.read_csv(out/'results'/'recogs'/f'{slugs[0]}.csv', keep_default_na=False, na_values=[''])
    df.assign(device='NVIDIA H100 80GB HBM3', commit='abc1234', wall_seconds=61.5).to_csv(cdir/f'{slugs[0]}-gpu.csv', index=False)
    (cdir/f'{slugs[0]}-gpu.items.csv.gz').write_bytes((out/'results'/'recogs'/f'{slugs[0]}.items.csv.gz').read_bytes())
    summ(proj)
    t = t4()
    cogs = t[(t.model == 'transformer') & (t.variant == 'COGS')].set_index('source')
    gpu = cogs.loc['ours: paper (committed)']
    assert 'NVIDIA H100 80GB HBM3' in gpu.budget and 'commit abc1234' in gpu.budget, gpu.budget
    assert gpu['Gen overall'] == cogs.loc['ours: smoke', 'Gen overall'] != '—'         # the same rows give the same numbers
    assert gpu.interval == 'one seed: Wilson over its rows'
    lstm = t[(t.model == 'lstm') & (t.variant == 'COGS')]
    assert lstm.source.tolist() == ['paper (Wu et al. 2023)', 'ours'] and lstm.budget.iloc[1].startswith('not run at this budget')
    v = pd.read_csv(out/'runs'/'recogs'/'figures-smoke'/'verdicts.csv', keep_default_na=False)
    assert {'smoke', 'paper'} <= set(v.profile) and (v.kind != '').all()
    assert (v[v.claim_id == 'cogs-objpp-near-zero'].kind == 'not testable').all()     # the smoke model is 0 everywhere: below the floor
