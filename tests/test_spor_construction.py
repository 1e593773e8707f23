"SPOR construction: the fast systematicity path equals the baseline on real data, tries replay, productivity is exact, CLI errors."
import json
import numpy as np
import pytest
from typer.testing import CliRunner
from cogen_lib.spor.data import load_corpus, Corpus, _webnlg_samples
from cogen_lib.spor import systematicity as S
from cogen_lib.spor.productivity import build_productivity
from cogen_lib.spor.cli import app


def _key(splits):
    return [(cs.test, cs.atom, sorted(cs.comb), cs.atom_counts, cs.comb_counts) for cs in splits]


@pytest.fixture(scope='module')
def webnlg_problem():
    return S.make_problem(load_corpus('webnlg'))


def test_fast_equals_baseline_webnlg(webnlg_problem):
    P = webnlg_problem
    for t in (0, 1):
        base = S.run_try(P, 7, t, 20, impl='baseline')
        fast = S.run_try(P, 7, t, 20)
        assert _key(fast) == _key(base)
        assert [cs.comb for cs in fast] == [cs.comb for cs in base]         # Combination in the same order, too
        assert S.fast_score(P, S.try_ranks(len(P.samples), 7, t, 20)) == S.try_score(P, base)


def test_fast_equals_baseline_e2e_subset():
    "E2E's single cluster with its rare-atom filter, on a 1,500-sample E2E pool (the full baseline takes ~75 s a try)."
    from cogen_lib.spor.data import _e2e_samples
    tr = _e2e_samples('train')
    P = S.make_problem(Corpus('e2e', tuple(tr[:1200]), tuple(tr[3000:3300])))
    assert len(P.clusters) == 1 and P.drop_rare == 3
    for t in range(3):
        base = S.run_try(P, 1, t, 3, impl='baseline')
        assert _key(S.run_try(P, 1, t, 3)) == _key(base)
    assert sum(len(cs.test) for cs in base) > 0


def test_search_is_deterministic_and_replays(webnlg_problem):
    P = S.make_problem(Corpus('webnlg', tuple(s for s in load_corpus('webnlg').train if s.category == 'Astronaut'), ()))
    b1, s1, sc1 = S.search(P, 6, seed=3, workers=1, progress=False)
    b2, s2, sc2 = S.search(P, 6, seed=3, workers=2, progress=False)
    assert (b1, s1, sc1) == (b2, s2, sc2)
    assert S.try_score(P, S.run_try(P, 3, b1, 6)) == s1 == max(sc1)
    assert len(set(sc1)) > 1                                             # tries differ


def test_productivity_webnlg_n5_matches_paper():
    ps = build_productivity(load_corpus('webnlg', compat=True), 5)
    assert ps.stats['invisible_by_size'] == [249, 193, 239, 260, 227, 0, 0]
    assert ps.stats['visible_by_size'] == [9, 52, 128, 99, 34, 203, 178]
    assert ps.stats['test_samples'] == 99
    assert ps.stats['invisible_units'] == ps.stats['visible_units']
    assert ps.stats['divergence_all_units'] <= 0.02


def test_committed_stats_are_current():
    "measured/spor/stats.json (read by the statistics notebook) holds what the code builds now (deterministic parts)."
    from cogen_lib.core import project_root
    st = json.loads((project_root()/'measured'/'spor'/'stats.json').read_text())
    ps = build_productivity(load_corpus('webnlg'), 4)
    for k in ('invisible_by_size', 'visible_by_size', 'test_by_size', 'test_samples'):
        assert st['webnlg_productivity_N=4'][k] == ps.stats[k]


@pytest.mark.parametrize('args,msg', [
    (['build', '--aspect', 'fluency', '--dataset', 'webnlg', '--out', 'X'], "'fluency'"),
    (['build', '--aspect', 'productivity', '--dataset', 'dart', '--n', '3', '--out', 'X'], "'dart'"),
    (['build', '--aspect', 'productivity', '--dataset', 'webnlg', '--n', '0', '--out', 'X'], 'N=0'),
    (['build', '--aspect', 'productivity', '--dataset', 'webnlg', '--n', '8', '--out', 'X'], 'N=8'),
    (['build', '--aspect', 'productivity', '--dataset', 'webnlg', '--out', 'X'], '--n'),
    (['build', '--aspect', 'systematicity', '--dataset', 'webnlg', '--tries', '0', '--out', 'X'], 'tries'),
])
def test_cli_build_errors(tmp_path, args, msg):
    args = [str(tmp_path/'o') if a == 'X' else a for a in args]
    r = CliRunner().invoke(app, args)
    assert r.exit_code == 1 and msg in r.output and 'Traceback' not in r.output


def test_cli_evaluate_malformed(tmp_path):
    from cogen_lib.spor.release import write_split
    smp = load_corpus('webnlg').test[:3]
    write_split(tmp_path, 'webnlg', 'systematicity', {}, {'': smp}, {})
    split = tmp_path/'test'/'test_webnlg_systematicity'
    bad = {'notjson.jsonl': 'hello\n', 'nokey.jsonl': '{"text": "a"}\n', 'notstr.jsonl': '{"prediction": null}\n' * 3,
           'short.jsonl': '{"prediction": "a"}\n'}
    for name, body in bad.items():
        (tmp_path/name).write_text(body)
        r = CliRunner().invoke(app, ['score', str(tmp_path/name), '--aspect', 'systematicity', '--split', str(split)])
        assert r.exit_code == 1 and name in r.output and 'Traceback' not in r.output, (name, r.output)
    (tmp_path/'ok.jsonl').write_text(''.join(json.dumps({'prediction': s.texts[0]}) + '\n' for s in smp))
    r = CliRunner().invoke(app, ['score', str(tmp_path/'ok.jsonl'), '--aspect', 'systematicity', '--split', str(split)])
    assert r.exit_code == 0 and 'PARENT' in r.output and 'nrefs:' in r.output
    r = CliRunner().invoke(app, ['score', str(tmp_path/'ok.jsonl'), '--aspect', 'productivity', '--split', str(split)])
    assert r.exit_code == 1 and 'systematicity split' in r.output


def test_rules_sizes_match_paper():
    from cogen_lib.spor.rules import build_rules
    w = build_rules(load_corpus('webnlg', compat=True))
    assert len(w.test) == 1614                                          # the paper / the authors' release
    assert all(any(u[0].startswith('Entity ') or u[2].startswith('Entity ') for u in s.units) for s in w.test)
    e1, e2 = build_rules(load_corpus('e2e'), seed=0), build_rules(load_corpus('e2e'), seed=0)
    assert len(e1.test) == 1440 and [s.units for s in e1.test] == [s.units for s in e2.test]   # seeded: same bytes
    assert all(any('Value' in v for _, v in s.units) for s in e1.test)


def test_order_main_size_matches_paper():
    from cogen_lib.spor.order import build_order
    o = build_order(load_corpus('webnlg', compat=True), seed=0, match=False)
    assert len(o.main) == 1559
    assert all(a != b for a, b in zip(o.orders1, o.orders2))
    assert all(sorted(a) == list(range(s.size)) for a, s in zip(o.orders1, o.main))


def test_cli_build_and_evaluate_rules(tmp_path):
    r = CliRunner().invoke(app, ['build', '--aspect', 'rules', '--dataset', 'e2e', '--out', str(tmp_path)])
    assert r.exit_code == 0, r.output
    d = tmp_path/'test'/'test_e2e_rule-learnability'
    recs = [json.loads(l) for l in (d/'dataset.jsonl').read_text().splitlines()]
    assert len(recs) == 1440 and 'replaced_kv_pair' in recs[0] and 'texts' not in recs[0]
    preds = [' '.join(v for v in rc['replaced_kv_pair'].values()) for rc in recs]        # copies every placeholder
    (tmp_path/'p.jsonl').write_text(''.join(json.dumps({'prediction': p}) + '\n' for p in preds))
    r = CliRunner().invoke(app, ['score', str(tmp_path/'p.jsonl'), '--aspect', 'rules', '--split', str(d)])
    assert r.exit_code == 0 and '(1, 0): 100.00' in r.output, r.output


@pytest.mark.parametrize('dataset', ['webnlg', 'e2e'])
def test_committed_systematicity_split_replays(dataset, webnlg_problem):
    "The winning try recorded in measured/spor/stats.json replays to the recorded Table 1 statistics (WebNLG: also with the baseline)."
    from cogen_lib.core import project_root
    st = json.loads((project_root()/'measured'/'spor'/'stats.json').read_text())[f'{dataset}_systematicity']
    P = webnlg_problem if dataset == 'webnlg' else S.make_problem(load_corpus('e2e'))
    assert st['winning_seed_spawn_key'] == [st['seed'], st['winning_try']]
    splits = S.run_try(P, st['seed'], st['winning_try'], st['tries'])
    got = S.split_stats(P, splits)
    for k in ('atom_samples', 'comb_samples', 'atoms', 'pairs_comb', 'test_samples', 'test_units'):
        assert got[k] == st[k], k
    if dataset == 'webnlg':
        assert _key(S.run_try(P, st['seed'], st['winning_try'], st['tries'], impl='baseline')) == _key(splits)
