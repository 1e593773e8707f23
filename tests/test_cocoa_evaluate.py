"GroundCocoa evaluation: prompts, answer extraction, bookkeeping with a stand-in model, analyses, the official loader."
import json
from pathlib import Path
from types import SimpleNamespace
import numpy as np, pandas as pd
import pytest
from cogen_lib.core import CogenError
from cogen_lib.metrics import mcnemar
from cogen_lib.cocoa import analysis, evaluate as ev, prompts as pr, records, report
from cogen_lib.cocoa.generate import LETTERS
from cogen_lib.cocoa.check import check_record as independent_check

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT/'tests'/'fixtures'/'cocoa_sample.jsonl'


@pytest.fixture(scope='module')
def recs():
    return records.load_records(FIXTURE)


class FakeLM:
    "Answers from a script of replies (cycled), counts calls, scores ' The answer is Option X' by a fixed preference."
    name, revision = 'fake', '0'
    def __init__(self, replies=('The answer is Option B.',), prefer='B'):
        self.replies, self.prefer, self.prompts = list(replies), prefer, []
        self.stats = dict(model_calls=0, cache_hits=0, errors=0, new_tokens=0, model_seconds=0.0)
    def generate(self, prompts, max_new_tokens=8, batch_size=8, chat=None, desc=None):
        self.prompts += list(prompts); self.stats['model_calls'] += len(prompts)
        return [SimpleNamespace(text=self.replies[i % len(self.replies)], error=None, n_new_tokens=3,
                                finish_reason='stop') for i in range(len(prompts))]
    def score_options(self, prompt, options, batch_size=8, chat=None, desc=None):
        assert chat is False and len(prompt) == len(options)
        self.stats['model_calls'] += len(options)
        return [0.0 if o.endswith(self.prefer) else -1.0 for o in options]


def test_fixture_and_exemplar_pass_the_independent_check(recs):
    assert len(recs) == 3
    for r in recs + [pr.EXEMPLAR]:
        assert independent_check(r) == [], r['id']
        assert [l for l in LETTERS if pr.option_satisfies(r, l)] == [r['answer']]


@pytest.mark.parametrize('text,want', [
    ('The answer is Option B', 'B'), ('the answer is **Option c**.', 'C'), ('**The answer is: Option (D)**', 'D'),
    ('Example: the answer is Option A.\nSo the answer is option `E`', 'E'), ('ANSWER IS OPTION a', 'A'),
    ('Option B looks best', None), ('the answer is optional', None), ('', None), (None, None)])
def test_extract_answer_takes_the_last_match(text, want):
    assert pr.extract_answer(text) == want


def test_prompts_hold_the_question_and_the_right_number_of_worked_options(recs):
    r = recs[1]
    for style in ('direct', 'loglik', 'cot-partial', 'cot-full'):
        p = ev.build_prompt(r, style)
        assert r['query'] in p and all(pr.render_flight(r['options'][l]) in p for l in LETTERS)
    assert ev.build_prompt(r, 'cot-full').count('Requirement 1:') == 5
    partial = ev.build_prompt(r, 'cot-partial')
    assert partial.count('Requirement 1:') == 2 and 'The answer is Option B.' in partial   # the exemplar's D shown as B
    assert ev.build_prompt(r, 'direct').startswith(pr.instruction())
    assert '1. Either' in pr.l2m_decompose_prompt(r) and 'Requirements:\nMY LIST' in pr.l2m_solve_prompt(r, 'MY LIST')
    with pytest.raises(CogenError, match='two prompts'): ev.build_prompt(r, 'least-to-most')
    with pytest.raises(CogenError, match='unknown prompt style'): ev.build_prompt(r, 'zero-shot')


def test_explanations_follow_the_truth_table(recs):
    for r in recs + [pr.EXEMPLAR]:
        for l in LETTERS:
            e = pr.explain_option(r, l)
            assert e.endswith('meets every requirement.') == (l == r['answer'])


def test_generated_styles_count_parse_failures_and_errors(recs):
    lm = FakeLM(replies=['Hmm. The answer is Option B.', 'I cannot tell.', 'the answer is option a'])
    df, s = ev.evaluate_records(recs, lm, 'cot-partial', max_new_tokens=16)
    assert df.predicted.fillna('-').tolist() == ['B', '-', 'A']
    assert df.correct.tolist() == [True, False, True] and df.parse_failed.tolist() == [False, True, False]
    assert s['n'] == 3 and s['parse_failure_rate'] == pytest.approx(1/3) and s['accuracy'] == pytest.approx(2/3)
    assert s['model_calls'] == 3 and s['style_label'] == ev.STYLES['cot-partial']
    assert set(df.columns) >= {'id', 'slots', 'minterms', 'is_typical', 'lcc', 'max_degree', 'gold', 'predicted',
                               'correct', 'parse_failed', 'gold_entropy', 'output'}
    assert df.gold_entropy.tolist() == [recs[i]['entropy'][recs[i]['answer']] for i in range(3)]


def test_least_to_most_makes_two_calls_per_question(recs):
    lm = FakeLM(replies=['1. Either this or that.', 'The answer is Option B'])
    df, s = ev.evaluate_records(recs[:2], lm, 'least-to-most', max_new_tokens=64)
    assert s['model_calls'] == 4 and len(lm.prompts) == 4
    assert lm.prompts[2].count('Requirements:\n1. Either this or that.') == 1    # stage 2 sees stage 1's reply
    assert df.output[0].startswith('[requirements]')


def test_loglik_picks_the_most_likely_continuation(recs):
    lm = FakeLM(prefer='B')
    df, s = ev.evaluate_records(recs, lm, 'loglik')
    assert df.predicted.tolist() == ['B', 'B', 'B'] and df.correct.tolist() == [True, True, False]
    assert s['parse_failure_rate'] == 0 and s['model_calls'] == 33          # five letters, the lead and five option texts per question
    assert df.predicted_content.tolist() == ['A', 'A', 'A']                  # the texts tie: the earliest letter
    assert lm.prompts == []                                                  # nothing generated


def test_loglik_scores_letters_and_texts_after_one_shared_context(recs):
    seen = {}
    class Spy(FakeLM):
        def score_options(self, prompt, options, batch_size=8, chat=None, desc=None):
            seen.update(prompt=list(prompt), options=list(options))
            return super().score_options(prompt, options, batch_size=batch_size, chat=chat, desc=desc)
    ev.evaluate_records(recs[:1], Spy(), 'loglik')
    assert len(set(seen['prompt'])) == 1 and seen['prompt'][0] == pr.question_prompt(recs[0])
    assert seen['options'][:6] == [f' The answer is Option {L}' for L in 'ABCDE'] + [' The answer is']   # the letters as exported to lm-eval
    assert seen['options'][6:] == [' The answer is ' + pr.render_flight(recs[0]['options'][L]) for L in 'ABCDE']


def test_rotations_make_a_constant_answer_earn_exactly_chance(recs):
    for style in ('direct', 'loglik'):
        df, s = ev.evaluate_records(recs, FakeLM(prefer='C', replies=['The answer is Option C']), style, max_new_tokens=None, rotations=5)
        assert len(df) == 15 and s['n'] == 3 and s['rotations'] == 5
        assert df.groupby('id').correct.mean().tolist() == pytest.approx([0.2] * 3)
        assert s['rotated_accuracy'] == pytest.approx(0.2) and s['rotated_ci_low'] < 0.2 < s['rotated_ci_high']
        v = analysis.vs_best_baseline(df.drop(columns='shortcut'))   # against the input-blind baselines: no difference
        assert v['rotated']['effect'] == pytest.approx(0.0) and v['rotated']['p'] == 1.0
        c = analysis.baseline_contrast(v['rotated'])
        assert c.startswith('0.0 [') and ', p 1.000, MDE ' in c
        w = analysis.vs_best_baseline(df)                        # the shortcut is right more often than 1 in 5 here
        sc = df.shortcut.eq(df.gold).mean()
        assert sc > 0.2 and w['rotated']['baseline'] == analysis.SHORTCUT_NAME
        assert w['rotated']['effect'] == pytest.approx(0.2 - sc)
    # the gold letter moves with the right option
    r = records.rotate_options(recs[1], 2)
    assert r['options'][r['answer']] == recs[1]['options'][recs[1]['answer']] and independent_check(r) == []


def test_intervals_are_never_zero_width_for_small_n():
    for flags, clusters in (([0] * 6, None), ([1] * 6, None), ([0] * 6, list('aabbcc')), ([0] * 10, ['q'] * 10)):
        a = ev.accuracy_interval(flags, clusters)
        assert a['ci_high'] - a['ci_low'] > 0.3, (flags, clusters, a)
    df = pd.DataFrame(dict(correct=[False] * 6, parse_failed=[True] * 6, is_typical=[True, False] * 3,
                           query_id=list('aabbcc'), id=[f'q{i}' for i in range(6)]))
    t = analysis.accuracy_by_typical(df)
    assert (t.ci_high > 0.3).all() and (t.ci_low == 0).all()


def test_constant_answer_interval_treats_a_rounding_se_as_none(monkeypatch):
    "A constant letter over 5 rotations is 1 of 5 in every query: no SE, so perfectly correlated clusters, even when a sum leaves 1e-18."
    flags, q = [1, 0, 0, 0, 0] * 6, [f"q{i // 5}" for i in range(30)]
    exact = ev.accuracy_interval(flags, q)
    assert exact['n_eff'] == 30 * 30 / (6 * 25)
    import cogen_lib.metrics as M                                      # accuracy_interval is metrics.clustered_wilson
    real = M.clustered_mean
    monkeypatch.setattr(M, 'clustered_mean', lambda a, c, alpha=0.05: {**real(a, c, alpha), 'se': 1e-18})
    assert ev.accuracy_interval(flags, q) == exact                     # not n_eff = n, a too narrow interval


def test_claim_units_query_and_question_rows(recs):
    d = analysis.item_outcomes(ev.evaluate_records(recs, FakeLM(prefer='B'), 'loglik', rotations=5)[0])
    u = analysis.claim_units(d)
    assert (u.set == 'query').sum() == d.query_id.nunique() and (u.set == 'question').sum() == d['id'].nunique()
    assert u.index.is_unique and u[u.set == 'query'].answered.isna().all() and u[u.set == 'question'].answered.notna().all()
    assert u[u.set == 'query'].correct.mean() == pytest.approx(d.groupby('query_id').correct.mean().mean())
    assert set(u.lcc_high.dropna()) <= {0.0, 1.0} and set(u.degree_high.dropna()) <= {0.0, 1.0}
    with pytest.raises(CogenError, match='no column'): analysis.claim_units(d.drop(columns='gold'))


def test_item_outcomes_are_unique_and_paired_across_styles(recs):
    a, _ = ev.evaluate_records(recs, FakeLM(replies=['The answer is Option B']), 'direct', max_new_tokens=8, rotations=5)
    b, _ = ev.evaluate_records(recs, FakeLM(prefer='B'), 'loglik', rotations=5)
    ia, ib = analysis.item_outcomes(a), analysis.item_outcomes(b)
    assert ia.item.is_unique and list(ia.item) == list(ib.item)              # the same items in the same order: pairable
    assert (ia.correct == ib.correct).all() and 'correct_content_norm' in ib and 'correct_content' not in ia
    assert mcnemar(ia.correct, ib.correct)['p'] == 1.0                      # pairs by item: no discordant pair


def test_evaluate_rejects_bad_input(recs):
    with pytest.raises(CogenError, match='ids repeat'): ev.evaluate_records([recs[0], recs[0]], FakeLM(), 'direct')
    with pytest.raises(CogenError, match='limit'): ev.evaluate_records(recs, FakeLM(), 'direct', limit=-1)
    with pytest.raises(CogenError, match="missing field 'options'"):
        ev.evaluate_records([{k: v for k, v in recs[0].items() if k != 'options'}], FakeLM(), 'direct')
    with pytest.raises(CogenError, match='registry name or a loaded LM'): ev.evaluate_records(recs, object(), 'direct')


def test_evaluate_file_with_limit(recs):
    df, s = ev.evaluate_file(FIXTURE, FakeLM(), 'direct', limit=2)
    assert len(df) == 2 and s['accuracy'] == 1.0


def test_analyses_tables():
    df = pd.DataFrame(dict(correct=[True, False, True, True, False], parse_failed=[False, True, False, False, False],
                           is_typical=[True, True, False, True, False], slots=[2, 2, 3, 3, 4], minterms=[2, 2, 2, 2, 3],
                           lcc=[2, 2, 3, np.nan, 3], longest_path=[2, 2, 3, 3, 4], max_degree=[1, 1, 2, 2, 2]))
    a = analysis.analyses(df)
    assert a['typical'].group.tolist() == ['regular', 'atypical', 'total']
    assert a['typical'].accuracy.tolist() == pytest.approx([2/3, 0.5, 0.6])
    assert a['config'][['slots', 'minterms']].values.tolist() == [[2, 2], [3, 2], [4, 3]]
    assert a['lcc'].n.sum() == 4 and a['max_degree'].set_index('max_degree').accuracy.to_dict() == pytest.approx({1: 0.5, 2: 2/3})
    t = a['typical']
    assert ((t.ci_low <= t.accuracy) & (t.accuracy <= t.ci_high)).all()


def test_entropy_density_integrates_to_one_on_unit_interval():
    df = pd.DataFrame(dict(correct=[True] * 4 + [False] * 3, gold_entropy=[0.0, 0.0, 0.65, 0.81, 1.0, 1.0, np.nan]))
    with pytest.raises(CogenError, match='fewer than min_points=30'): analysis.entropy_density(df)
    d = analysis.entropy_density(df, min_points=2)
    for o, g in d.groupby('outcome'):
        assert np.trapezoid(g.density, g.entropy) == pytest.approx(1.0, abs=0.02)
    assert d[d.outcome == 'wrong'].n_missing.iloc[0] == 1 and d[d.outcome == 'wrong'].n.iloc[0] == 2
    with pytest.raises(CogenError):
        analysis.entropy_density(pd.DataFrame(dict(correct=[True], gold_entropy=[np.nan])), min_points=1)


def test_select_questions_round_robin():
    recs = [dict(id=f"{c}-{i}", config=c) for c in ([2, 2], [3, 2], [4, 3]) for i in range(2)]
    assert [r['id'] for r in records.select_questions(recs, 4)] == ['[2, 2]-0', '[3, 2]-0', '[4, 3]-0', '[2, 2]-1']
    assert records.select_questions(recs, 0) == recs


def _official_row():
    opt = {'Airline': '[Emirates]', 'Ticket Class': 'First', 'Departure Time': '4:15 AM', 'Price': '$7379.0'}
    return {'id': 7, 'query': 'I want to fly first class.', 'slots': 2, 'minterms': 2, 'max_dependency': 1,
            'largest_connected_component': 2, 'entropy_avg': [0.5] * 5, 'entropy_overall': [0.1, 0.2, 0.3, 0.4, 0.5],
            **{f'Option {l}': str(opt) for l in LETTERS}, 'Answer': 'D', 'is_typical': False, 'primitives': "['x']"}


def test_load_official_exports(tmp_path):
    row = _official_row()
    pd.DataFrame([row]).to_csv(tmp_path/'t.csv', index=False)
    (tmp_path/'t.jsonl').write_text(json.dumps(row) + '\n')
    a, b = records.load_official(tmp_path/'t.csv'), records.load_records(tmp_path/'t.jsonl')
    assert a == b
    r = a[0]
    assert (r['id'], r['answer'], r['is_typical'], r['longest_path'], r['lcc'], r['max_degree']) == ('7', 'D', False, 2, None, 1)
    assert r['options']['A']['Ticket Class'] == 'First' and r['entropy'][3] == 0.4
    df, _ = ev.evaluate_records(a, FakeLM(replies=['The answer is Option D']), 'direct')
    assert df.correct.tolist() == [True] and df.gold_entropy.tolist() == [0.4] and np.isnan(df.lcc[0])
    assert 'Ticket Class: First' in ev.build_prompt(r, 'direct')


def test_load_official_parquet(tmp_path):
    pytest.importorskip('pyarrow')
    row = _official_row()
    pd.DataFrame([row]).to_parquet(tmp_path/'t.parquet')
    assert records.load_official(tmp_path/'t.parquet')[0]['answer'] == 'D'


def test_load_official_parquet_without_engine_names_the_remedy(tmp_path, monkeypatch):
    (tmp_path/'t.parquet').write_bytes(b'PAR1')
    def no_engine(*a, **k): raise ImportError('no parquet engine')
    monkeypatch.setattr(pd, 'read_parquet', no_engine)
    with pytest.raises(CogenError, match='pip install pyarrow'): records.load_official(tmp_path/'t.parquet')


def test_load_official_errors(tmp_path):
    with pytest.raises(CogenError, match='harsh147/GroundCocoa'): records.load_official(tmp_path/'missing.parquet')
    bad = _official_row(); del bad['Option C']
    (tmp_path/'b.jsonl').write_text(json.dumps(bad) + '\n')
    with pytest.raises(CogenError, match=r"missing field\(s\) \['Option C'\]"):
        records.load_official(tmp_path/'b.jsonl')
    (tmp_path/'x.txt').write_text('x')
    with pytest.raises(CogenError, match='unknown format'): records.load_official(tmp_path/'x.txt')


def test_paper_table3():
    t = report.PAPER_TABLE3.set_index(['model', 'style'])
    assert len(t) == 22 and t.loc[('GPT-4 Turbo', 'direct'), 'total'] == 62.34
    assert t.loc[('LLAMA 3.1-chat 70B', 'least-to-most'), 'questions'] == '200-question subset'
