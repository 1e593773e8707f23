"""The GroundCocoa summary end to end: on synthetic runs (fake models answering generated questions through the library's
`evaluate_records`, their rows and per-item outcomes written by `record_results` and `Recorder.save_items`, as the run
notebook writes them) its verdicts, Table 3 with its baselines and intervals, the letter-bias and cost tables and both
figures come out with the numbers the items imply."""
import ast, hashlib, json
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from cogen_lib.results import Recorder
from cogen_lib.cocoa import analysis, evaluate as ev, prompts as pr, records, report
from cogen_lib.cocoa.generate import generate
from cogen_lib.cocoa.finetune import record_loss_curve

NB = 'nbs/cocoa/summary.ipynb'
FT_LOG = [dict(step=i, loss=2.0 - i / 30, seconds=10.0 * i) for i in range(45)]   # a fake fine-tuning log: 45 steps, falling loss
STYLES_RUN = {'direct': 0, 'loglik': 0, 'cot-partial': 30, 'cot-full': 30, 'least-to-most': 30}   # style -> limit (0: all 60)


def run_params(root: Path) -> dict:
    "The parameters of the run notebook (nbs/cocoa/eval.ipynb) with their defaults: what every result row carries."
    nb = json.loads((root/'nbs/cocoa/eval.ipynb').read_text())
    src = next(''.join(c['source']) for c in nb['cells'] if 'parameters' in c['metadata'].get('tags', []))
    return {n.target.id: ast.literal_eval(n.value) for n in ast.parse(src).body if isinstance(n, ast.AnnAssign)}


class FakeLM:
    """Answers a question right with probability `p(question)` (a fixed coin per prompt and model), else `wrong`; with
    `constant`, always that letter. Knows the right letter by finding the question's rendered options in the prompt."""
    revision = '0'
    def __init__(self, name, answers, p=None, constant=None, wrong='A'):
        self.name, self.answers, self.p, self.constant, self.wrong = name, answers, p, constant, wrong
        self.stats = dict(model_calls=0, cache_hits=0, errors=0, new_tokens=0, model_seconds=0.0)
    def _letter(self, prompt, salt=''):
        if self.constant: return self.constant
        hit = [v for k, v in self.answers.items() if k in prompt]
        if not hit: return None
        gold, lcc = hit[-1]
        coin = int(hashlib.sha1(f"{self.name}|{salt}|{prompt}".encode()).hexdigest()[:8], 16) / 16 ** 8
        return gold if coin < self.p(lcc) else (self.wrong if gold != self.wrong else 'B')
    def generate(self, prompts, max_new_tokens=8, batch_size=8, chat=None, desc=None):
        from types import SimpleNamespace
        self.stats['model_calls'] += len(prompts); self.stats['new_tokens'] += 5 * len(prompts); self.stats['model_seconds'] += 0.01 * len(prompts)
        out = []
        for p in prompts:
            L = self._letter(p)
            out.append(SimpleNamespace(text='1. A requirement.' if L is None else f'So the answer is Option {L}.', error=None,
                                       n_new_tokens=5, finish_reason='stop'))
        return out
    def score_options(self, prompt, options, batch_size=8, chat=None, desc=None):
        self.stats['model_calls'] += len(options); self.stats['model_seconds'] += 0.01 * len(options)
        out = []
        for ctx, o in zip(prompt, options):
            L = self._letter(ctx)
            rec = next(v for k, v in self.texts.items() if k in ctx)
            right = (f'{pr.LOGLIK_LEAD} Option {L}', f"{pr.LOGLIK_LEAD} {pr.render_flight(rec['options'][L])}",
                     pr.LOGLIK_LEAD)
            out.append(0.0 if o in right else -1.0 - 0.001 * len(o))
        return out


def fake_runs(folder: Path, root: Path) -> dict:
    "Two fake models x five styles on 60 generated questions (30 for the CoT styles) in 5 rotations; returns the items per run."
    qs = generate(10, seed=0)
    answers, texts = {}, {}
    for q in qs:
        for k in range(5):
            r = records.rotate_options(q, k)
            answers[pr.render_question(r)] = (r['answer'], q['lcc'])
            texts[pr.render_question(r)] = r
    good_p = {'direct': lambda lcc: 0.9 if lcc <= 2 else 0.3, 'loglik': lambda lcc: 0.9 if lcc <= 2 else 0.3,
              'cot-partial': lambda lcc: 0.97, 'cot-full': lambda lcc: 0.6, 'least-to-most': lambda lcc: 0.2}
    base, out = run_params(root), {}
    folder.mkdir(parents=True, exist_ok=True)
    for model in ('fake-good', 'fake-constant'):
        for style, limit in STYLES_RUN.items():
            lm = FakeLM(model, answers, p=good_p[style], constant='C' if model == 'fake-constant' else None)
            lm.texts = texts
            tokens = {'direct': 32, 'loglik': None}.get(style, 256)
            rows, summary = ev.evaluate_records(qs, lm, style, limit=limit or None, max_new_tokens=tokens, rotations=5)
            if (model, style) == ('fake-constant', 'direct'):   # as if resumed: 75 of its 300 calls computed, 225 read from the cache
                summary = {**summary, 'model_calls': 75, 'cache_hits': 225, 'wall_seconds': 100.0, 'cpu_seconds': 50.0}
            if (model, style) == ('fake-constant', 'loglik'):   # as if every call came from the cache: the run measured no cost
                summary = {**summary, 'model_calls': 0, 'cache_hits': summary['model_calls'] + summary['cache_hits'], 'wall_seconds': 1.0}
            params = {**base, 'model': model, 'prompt_style': style, 'per_config': 10, 'limit': limit, 'max_new_tokens': tokens or 0,
                      'rotations': 5, 'seed': 0}
            params.pop('results_path', None)
            slug = f"model={model}_prompt_style={style}-fake0001"
            rec = Recorder('cocoa', {**params, 'data': 'generated(per_config=10, seed=0)'}, folder/f'{slug}.csv')
            analysis.record_results(rec, rows, summary)
            rec.save_items(analysis.item_outcomes(rows))
            rec.save()
            out[model, style] = analysis.item_outcomes(rows)
    # a fine-tuned run (our protocol): the model and style of a released run above, told apart only by finetune_questions
    lm = FakeLM('fake-good-ft', answers, p=lambda lcc: 0.8); lm.texts = texts
    rows, summary = ev.evaluate_records(qs, lm, 'loglik', rotations=5)
    params = {**base, 'model': 'fake-good', 'prompt_style': 'loglik', 'per_config': 10, 'limit': 0, 'max_new_tokens': 0,
              'rotations': 5, 'seed': 0, 'finetune_questions': 20}
    params.pop('results_path', None)
    rec = Recorder('cocoa', {**params, 'data': 'generated(per_config=10, seed=0)'}, folder/'model=fake-good_prompt_style=loglik_finetune_questions=20-fake0002.csv')
    analysis.record_results(rec, rows, summary); rec.save_items(analysis.item_outcomes(rows))
    record_loss_curve(rec, FT_LOG); rec.save()                                  # its training loss, as the run notebook records it
    out['fake-good-ft', 'loglik'] = analysis.item_outcomes(rows)
    return out


def execute_summary(root: Path, results: Path, figures: Path, committed: Path, log: Path):
    from cogen_lib.kernel import run_notebook
    run_notebook(root/NB, figures.parent/'summary.ipynb', log, cwd=root, parameters=dict(
        results_dir=str(results), runs_file='', figures_dir=str(figures), profile='cpu', committed_root=str(committed)))


@pytest.fixture(scope='module')
def summary(tmp_path_factory):
    root = Path(__file__).resolve().parents[1]
    tmp = tmp_path_factory.mktemp('cocoa-summary')
    items = fake_runs(tmp/'results', root)
    proj = tmp/'proj'; (proj/'results'/'cocoa').mkdir(parents=True)          # no committed rows
    execute_summary(root, tmp/'results', tmp/'figures', proj, tmp/'kernel.log')
    return items, tmp/'figures'


def _read(figs, name): return pd.read_csv(figs/f'{name}.csv', keep_default_na=False, dtype=str)


def test_files_and_figures(summary):
    _, figs = summary
    for f in ('verdicts', 'table3', 'letter_bias', 'cost'): assert (figs/f'{f}.md').exists(), f
    for f in ('fig3_complexity', 'fig5_entropy'): assert (figs/f'{f}.png').stat().st_size > 10_000, f
    assert (figs/'verdicts.md').read_text().startswith('| claim ')


def test_table3_numbers_intervals_and_baselines(summary):
    items, figs = summary
    t = _read(figs, 'table3')
    ours = t[t.source == 'ours (cpu)'].set_index(['model', 'style', 'scoring']).sort_index()
    d = items['fake-good', 'direct']
    raw = d[d.rotation == 0]
    a, r = ev.accuracy_interval(raw.correct, raw.query_id), ev.accuracy_interval(d.correct, d.query_id)
    row = ours.loc[('fake-good', 'direct', 'letter')]
    assert row['raw order'] == f"{100 * a['value']:.1f}" and row['raw 95% CI'] == f"{100 * a['ci_low']:.1f}-{100 * a['ci_high']:.1f}"
    assert row['rotated'] == f"{100 * r['value']:.1f}" and row['questions'] == '60' and row['rotations'] == '5'
    vs = analysis.vs_best_baseline(d)                                  # against the shortcut, the best baseline here
    assert row['vs best baseline (rotated)'] == analysis.baseline_contrast(vs['rotated'])   # the engine's formatting
    assert vs['rotated']['p'] < 0.05 and row['vs best baseline (rotated)'].startswith('+')  # significantly above the shortcut
    assert row['best baseline (rotated)'] == f"{vs['rotated']['baseline']}: {100 * vs['rotated']['baseline_accuracy']:.1f}"
    # a constant letter: exactly chance over the rotations, and on the raw order too (the gold letter is balanced); against the
    # input-blind baselines nothing to tell, against the best baseline (the shortcut, when it beats 1 in 5) what the items say
    c = ours.loc[('fake-constant', 'loglik', 'letter')]
    assert c['rotated'] == '20.0' and c['raw order'] == '20.0' and c['favourite letter (accuracy)'] == 'C (20.0)'
    d = items['fake-constant', 'loglik']
    sc = d[d.rotation == 0].shortcut.eq(d[d.rotation == 0].gold).mean()
    assert sc > 0.2 and c['best baseline (raw)'] == f"{analysis.SHORTCUT_NAME}: {100 * sc:.1f}"
    vs = analysis.vs_best_baseline(d)
    assert c['vs best baseline (raw)'] == analysis.baseline_contrast(vs['raw'])
    assert c['vs best baseline (rotated)'] == analysis.baseline_contrast(vs['rotated'])
    assert not any(w in ' '.join(t[col].str.cat(sep=' ') for col in ('vs best baseline (raw)', 'vs best baseline (rotated)'))
                   for w in ('above', 'below', 'distinguishable'))                  # numbers only: no verdict words of the table's own
    assert {'letter', 'option text (acc)', 'option text per character (acc_norm)'} == set(ours.loc['fake-good', 'loglik'].index)
    # every number of ours carries its interval (never zero-width), the rotated accuracy is there for every style, and the paper's rows are there
    assert set(ours.reset_index()['style']) == set(STYLES_RUN) and (ours['rotations'] == '5').all() and (ours['rotated'] != '').all()
    for col in ('raw 95% CI', 'rotated 95% CI'):
        assert ours[col].str.fullmatch(r'\d+\.\d-\d+\.\d').all(), col
        lo_hi = ours[col].str.split('-', expand=True).astype(float)
        assert (lo_hi[1] > lo_hi[0]).all(), col
    assert (t.source == 'paper (Kohli et al. 2025, Table 3)').sum() == 22
    assert t[t.source.str.startswith('paper')].budget.str.contains('released').all()


def test_table3_baselines_on_the_same_items(summary):
    "Dropping a baseline row, or its interval, from Table 3 fails here: each item set has chance, a constant letter and the shortcut."
    items, figs = summary
    t = _read(figs, 'table3')
    base = t[t.source == 'baseline (cpu)']
    sets = base.groupby('questions')                       # the fake runs: 60 questions (direct, loglik) and 30 (the CoT styles)
    assert set(sets.groups) == {'60', '30'}
    for q, g in sets:
        b = g.set_index('style')
        assert len(b) == 3, b.index.tolist()
        ch = b.loc['chance (1 in 5)']
        assert (ch['raw order'], ch['raw 95% CI'], ch['rotated'], ch['rotated 95% CI']) == ('20.0', 'exact', '20.0', 'exact')
        const = b.loc[[s for s in b.index if s.startswith('always ')][0]]
        assert const['raw order'] == '20.0' and const['rotated 95% CI'] == 'exact'        # balanced gold letters
        lo, hi = map(float, const['raw 95% CI'].split('-'))
        assert lo < 20 < hi
        d = items['fake-good', 'direct' if q == '60' else 'cot-full']                     # the shortcut on exactly those items
        raw = d[d.rotation == 0]
        a, r = ev.accuracy_interval(raw.shortcut.eq(raw.gold), raw.query_id), ev.accuracy_interval(d.shortcut.eq(d.gold), d.query_id)
        s = b.loc[analysis.SHORTCUT_NAME]
        assert s['raw order'] == f"{100 * a['value']:.1f}" and s['raw 95% CI'] == f"{100 * a['ci_low']:.1f}-{100 * a['ci_high']:.1f}"
        assert s['rotated'] == f"{100 * r['value']:.1f}" and s['rotated 95% CI'] == f"{100 * r['ci_low']:.1f}-{100 * r['ci_high']:.1f}"


VERDICT_COLUMNS = ['claim_id', 'claim', 'kind', 'effect', 'ci_low', 'ci_high', 'paper_effect', 'n', 'p', 'mde', 'budget']


def test_verdicts_follow_the_items(summary):
    "The engine's verdict files: one row per claim (6 columns), every budget structured in verdicts.csv, kinds from the items."
    items, figs = summary
    md = (figs/'verdicts.md').read_text().splitlines()
    assert [c.strip() for c in md[0].strip('|').split('|')] == ['claim', 'paper', 'ours [95% CI]', 'n', 'verdict', 'why']
    v = pd.read_csv(figs/'verdicts.csv', keep_default_na=False)
    assert VERDICT_COLUMNS == [c for c in v.columns if c in VERDICT_COLUMNS] and set(VERDICT_COLUMNS) <= set(v.columns)
    from cogen_lib.claims import KINDS, load_claims
    ids = {c.id for c in load_claims('cocoa', ROOT)}
    assert set(v.kind) <= set(KINDS) and ids - {'complexity-degree'} <= set(v.claim_id) <= ids     # degree: once with LCC where they split alike
    row = lambda cid, who: v[(v.claim_id == cid) & v.budget.str.startswith(who)].iloc[0]
    good = row('complexity-lcc', 'fake-good direct')                  # right 90% at LCC <= 2, 30% above, and above the shortcut
    assert good.kind in ('reproduced', 'direction reproduced, size differs') and float(good.effect) < 0, good.to_dict()
    assert row('cot-partial-vs-direct', 'fake-good cot-partial').kind in ('reproduced', 'direction reproduced, size differs')
    assert row('least-to-most-vs-direct', 'fake-good least-to-most').kind in ('reproduced', 'direction reproduced, size differs')
    const = row('complexity-lcc', 'fake-constant loglik')             # a constant letter: its items say nothing about the questions
    assert const.kind == 'not testable' and 'precondition not met' in const.why, const.to_dict()
    assert not v.why.str.contains('Error|Traceback|group_contrast').any()          # no raw exception message as a verdict
    assert (v[v.shown.astype(str) == 'True'].kind != '').all() and v[v.claim_id == 'headline-spread'].kind.tolist() == ['not testable']


ROOT = Path(__file__).resolve().parents[1]
CFG = ['profile', 'model', 'prompt_style', 'per_config', 'rotations']


def judge(frames: dict) -> list[dict]:
    "`claims.judge_runs` over made-up runs {(model, style): item outcomes}, as the summary calls it."
    from cogen_lib.claims import load_claims, judge_runs
    runs = pd.DataFrame([dict(slug=f'{m}|{s}', profile='cpu', model=m, prompt_style=s, per_config=10, rotations=5, seed=0) for m, s in frames])
    units = {f'{m}|{s}': analysis.claim_units(d) for (m, s), d in frames.items()}
    return judge_runs(load_claims('cocoa', ROOT), runs, CFG, units.get)


def test_constant_answer_is_not_testable(summary):
    "A constant letter (20% in every rotation of every question): not testable, below the shortcut or, above it, for zero variance."
    items, _ = summary
    d = items['fake-constant', 'loglik']
    assert set(analysis.claim_units(d).correct) == {0.2}
    rows = {r['claim'].id: r['verdict'] for r in judge({('c', 'loglik'): d})}
    assert rows['complexity-lcc'].kind == rows['atypical-worse'].kind == 'not testable'
    assert 'precondition not met' in rows['complexity-lcc'].why                  # the shortcut beats 20% here
    worse = d.assign(shortcut=np.where(d.gold == 'A', 'B', 'A'))                # a shortcut that is always wrong: the floor passes
    rows = {r['claim'].id: r['verdict'] for r in judge({('c', 'loglik'): worse})}
    for cid in ('complexity-lcc', 'atypical-worse'):
        assert rows[cid].kind == 'not testable' and rows[cid].criteria.get('zero_variance'), (cid, rows[cid].why)


def test_identical_partitions_are_reported_once(summary):
    "When the median splits by LCC and by maximum degree put the same queries on the same side, each claim keeps its row and names the other."
    items, _ = summary
    d = items['fake-good', 'direct']
    rows = judge({('g', 'direct'): d.assign(max_degree=d.lcc)})
    ids = [r['claim'].id for r in rows]
    assert 'complexity-lcc' in ids and 'complexity-degree' in ids
    lcc = next(r for r in rows if r['claim'].id == 'complexity-lcc')
    assert lcc['duplicates'] == ['complexity-degree'] and 'one test, not two' in lcc['verdict'].why
    other = d.assign(max_degree=pd.factorize(d.query_id)[0] % 2 + 1.0)           # every other query: another split, two rows
    assert {'complexity-lcc', 'complexity-degree'} <= {r['claim'].id for r in judge({('g', 'direct'): other})}


def test_letter_bias_and_cost(summary):
    _, figs = summary
    lb = _read(figs, 'letter_bias')
    row = lb[(lb.model == 'fake-constant') & (lb['style'] == 'direct')].iloc[0]
    assert row.C == '100.0' and row['TV distance'] == '80.0'
    gold = lb[lb.scoring == 'gold letters'].iloc[0]
    assert [gold[L] for L in 'ABCDE'] == ['20.0'] * 5                          # balanced gold letters
    cost = _read(figs, 'cost')
    assert len(cost) == 11 and set(cost.rotations.astype(str)) == {'5'}
    part = cost[(cost.model == 'fake-constant') & (cost['style'] == 'direct')].iloc[0]
    assert part['model calls'] == '75 of 300 (225 cached)', part['model calls']
    # the 100 s measure the 75 computed calls, which cover 60 x 75/300 = 15 questions (75 prompts)
    assert (part['wall (s)'], part['s / question'], part['s / prompt'], part['CPU s / question']) == ('100.00', '6.67', '1.33', '3.33'), part
    cached = cost[(cost.model == 'fake-constant') & (cost['style'] == 'loglik')].iloc[0]
    n = int(cached['model calls'].split(' of ')[1].split(' ')[0].replace(',', ''))
    assert n > 0 and cached['model calls'] == f'0 of {n:,} ({n:,} cached)', cached['model calls']    # not a bare '0'
    assert cached['wall (s)'] == cached['s / question'] == cached['CPU s / question'] == 'cached', cached
    full = cost[(cost.model == 'fake-good') & (cost['style'] == 'direct')].iloc[0]
    assert full['model calls'] == '300' and abs(float(full['s / question']) * 60 - float(full['wall (s)'])) < 0.01 * 60, full


def test_headline_is_direct_rotated_accuracy_with_its_baseline(summary):
    items, figs = summary
    h = pd.read_csv(figs/'headline.csv')
    ours = h[h.source == 'ours'].set_index('model')
    assert sorted(ours.index) == ['fake-constant', 'fake-good']
    d = items['fake-good', 'direct']
    a, vs = ev.accuracy_interval(d.correct, d.query_id), analysis.vs_best_baseline(d)['rotated']
    row = ours.loc['fake-good']
    assert abs(row.value - 100 * a['value']) < 1e-9 and abs(row.ci_low - 100 * a['ci_low']) < 1e-9 and row.n == 60
    assert row.baseline == vs['baseline'] and abs(row.baseline_value - 100 * vs['baseline_accuracy']) < 1e-9
    assert 'rotations' in row.measure and row.profile == 'cpu'
    paper = h[h.source.str.startswith('paper')]
    assert (ours.baseline.notna() & ours.ci_high.notna()).all() and paper.ci_low.isna().all()
    assert len(paper) == (report.PAPER_TABLE3['style'] == 'direct').sum() and set(paper.n) == {4849}


def test_finetune_loss_beside_accuracy_and_shortcut(summary):
    "The fine-tuned run's loss curve (first and last 20 steps) beside its rotated accuracy and the shortcut on its items."
    from cogen_lib.cocoa.finetune import model_label
    items, figs = summary
    t = pd.read_csv(figs/'finetune_loss.csv')
    assert list(t.model) == [model_label('fake-good', 20)] and t.steps.tolist() == [len(FT_LOG)], t
    first, last = [x['loss'] for x in FT_LOG[:20]], [x['loss'] for x in FT_LOG[40:]]
    assert abs(t.loss_first_window[0] - sum(first) / 20) < 1e-9 and abs(t.loss_last_window[0] - sum(last) / len(last)) < 1e-9
    d = items['fake-good-ft', 'loglik']
    r = ev.accuracy_interval(d.correct, d.query_id)
    assert abs(t.accuracy[0] - 100 * r['value']) < 1e-9 and t.n[0] == len(d)
    assert abs(t.shortcut[0] - 100 * (d.shortcut == d.gold).mean()) < 1e-9, (t.shortcut[0], (d.shortcut == d.gold).mean())
    assert (figs/'finetune_loss.png').stat().st_size > 10_000


def test_a_finetuned_run_is_a_model_of_its_own(summary):
    "A run with finetune_questions > 0 is labelled our protocol everywhere and never pooled with the released model's run."
    from cogen_lib.cocoa.finetune import model_label
    items, figs = summary
    label = model_label('fake-good', 20)
    assert label.startswith('fake-good + LoRA on 20') and "our protocol, not the paper's zero-shot setting" in label
    t = _read(figs, 'table3')
    ours = t[t.source == 'ours (cpu)'].set_index(['model', 'style', 'scoring']).sort_index()
    for model, key in (('fake-good', ('fake-good', 'loglik')), (label, ('fake-good-ft', 'loglik'))):
        d = items[key]
        r = ev.accuracy_interval(d.correct, d.query_id)
        assert ours.loc[(model, 'loglik', 'letter')]['rotated'] == f"{100 * r['value']:.1f}", model     # each on its own items
    vs = analysis.vs_best_baseline(items['fake-good-ft', 'loglik'])['rotated']
    assert ours.loc[(label, 'loglik', 'letter')]['vs best baseline (rotated)'] == analysis.baseline_contrast(vs)
    v = pd.read_csv(figs/'verdicts.csv', keep_default_na=False)
    assert v.budget.str.startswith(label + ' loglik').any() and v.budget.str.startswith('fake-good loglik').any()
    assert label in set(_read(figs, 'cost').model) and label in set(_read(figs, 'letter_bias').model)
