"Exact match and Semantic Exact Match: known pairs, renamings, perturbations of real gen rows, and scoring."
import itertools, re
from collections import Counter
import pandas as pd
import pytest
from cogen_lib.core import CogenError, make_rng
from cogen_lib.data import load_cogs
from cogen_lib.recogs.lf import LFParseError, parse_lf
from cogen_lib.recogs.sem import SemResult, em, score, seed_summary, seed_table, sem, sem_lf

G = '* cat ( 1 ) ; Emma ( 5 ) ; like ( 2 ) AND agent ( 2 , 5 ) AND theme ( 2 , 1 )'


@pytest.mark.parametrize('pred,gold,ok', [
    (G, G, True),
    ('Emma ( 50 ) ; * cat ( 7 ) ; like ( 3 ) AND theme ( 3 , 7 ) AND agent ( 3 , 50 )', G, True),          # renaming
    ('Emma ( 1 ) ; * cat ( 5 ) ; like ( 2 ) AND theme ( 2 , 5 ) AND agent ( 2 , 1 )', G, True),            # swap names
    ('* cat ( 1 ) AND Emma ( 5 ) AND like ( 2 ) ; agent ( 2 , 5 ) ; theme ( 2 , 1 )', G, True),            # ; <-> AND
    ('* cat ( 1 ) ; Emma ( 5 ) ; like ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 5 )', G, False),           # swapped roles
    ('* cat ( 1 ) ; Emma ( 5 ) ; like ( 2 ) AND agent ( 2 , 5 ) AND theme ( 2 , 1 ) AND like ( 3 ) AND agent ( 3 , 5 )',
     G, False),                                                                                            # duplicated event
    ('Emma ( 5 ) ; * cat ( 1 ) ; like ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 5 ) AND Emma ( 9 ) AND * cat ( 8 ) AND '
     'like ( 7 ) AND agent ( 7 , 8 ) AND theme ( 7 , 9 )',
     'Emma ( 5 ) ; * cat ( 1 ) ; like ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 5 )', False),             # ... with its arguments
    ('* cat ( 1 ) ; Emma ( 5 ) ; like ( 2 ) AND agent ( 2 , 5 ) AND theme ( 2 , 1 ) AND agent ( 2 , 5 )', G, False),
    ('cat ( 1 ) ; Emma ( 5 ) ; like ( 2 ) AND agent ( 2 , 5 ) AND theme ( 2 , 1 )', G, False),             # lost '*'
    ('* cat ( 1 ) ; Emma ( 1 ) ; like ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 1 )', G, False),           # merged vars
    ('table ( 46 ) AND sturdy ( 7 )', 'table ( 1 ) AND sturdy ( 1 )', False),                              # paper, sec. 5
    ('table ( 46 ) AND sturdy ( 46 )', 'table ( 1 ) AND sturdy ( 1 )', True),
    ('cat ( 1 ) AND cat ( 2 )', 'cat ( 3 ) AND cat ( 3 )', False),
    ('* cat ( x _ 9 ) ; like . theme ( x _ 4 , Emma ) AND like . agent ( x _ 4 , x _ 9 )',
     '* cat ( x _ 1 ) ; like . agent ( x _ 2 , x _ 1 ) AND like . theme ( x _ 2 , Emma )', True),
    ('* cat ( x _ 9 ) ; like . theme ( x _ 4 , Ava ) AND like . agent ( x _ 4 , x _ 9 )',
     '* cat ( x _ 1 ) ; like . agent ( x _ 2 , x _ 1 ) AND like . theme ( x _ 2 , Emma )', False),         # constants exact
    ('cat ( 1 )', 'cat ( x _ 1 )', False),                                                                 # kinds differ
    ('Emma', 'Emma', True), ('Ava', 'Emma', False),
    ('LAMBDA a . LAMBDA e . run ( e ) AND agent ( e , a )', 'LAMBDA a . LAMBDA e . agent ( e , a ) AND run ( e )', True),
    ('LAMBDA b . LAMBDA e . run ( e ) AND agent ( e , b )', 'LAMBDA a . LAMBDA e . run ( e ) AND agent ( e , a )', False),
    ('  cat ( 1 )   AND dog ( 2 ) ', 'dog ( 5 ) AND cat ( 6 )', True),                                    # whitespace
])
def test_known_pairs(pred, gold, ok):
    r = sem(pred, gold)
    assert r.match is ok and bool(r) is ok and (r.reason is None) is ok, r
    assert sem_lf(parse_lf(pred, strict=False), parse_lf(gold)).match is ok
    assert sem(gold, pred).match is ok   # symmetric


@pytest.mark.parametrize('pred', ['* cat ( 1 ) ; like ( 2', '', 'cat ( 1 ) AND', None, 5, 'AND AND'])
def test_malformed_prediction_is_a_verdict(pred):
    r = sem(pred, G)
    assert isinstance(r, SemResult) and not r.match and r.parse_error


def test_malformed_gold_raises():
    with pytest.raises(LFParseError, match='gold LF'): sem(G, 'cat ( 1')


def _cycle(edges): return ' AND '.join(f'nmod . in ( {a} , {b} )' for a, b in edges)


def test_refinement_blind_spots_are_searched():
    six = _cycle([(1, 2), (2, 3), (3, 4), (4, 5), (5, 6), (6, 1)])
    two = _cycle([(1, 2), (2, 3), (3, 1), (4, 5), (5, 6), (6, 4)])
    assert not sem(six, two) and not sem(two, six)
    assert sem(_cycle([(9, 8), (8, 7), (7, 9), (4, 5), (5, 6), (6, 4)]), two)


def _brute(pred, gold):
    "All bijections between the variables (small LFs only): the definition itself."
    p, g = parse_lf(pred), parse_lf(gold)
    if (p.name, p.lambdas) != (g.name, g.lambdas): return False
    key = lambda c, m: (c.definite, c.pred, tuple(m.get(a, a) for a in c.args))
    gc = Counter(key(c, {}) for c in g.conjuncts)
    pv, gv = p.variables, g.variables
    if len(pv) != len(gv): return False
    return any(Counter(key(c, dict(zip(pv, perm))) for c in p.conjuncts) == gc for perm in itertools.permutations(gv))


def _rename(s, rng):
    vs = list(dict.fromkeys(re.findall(r'x _ (\d+)', s)))
    pool = rng.permutation(max([int(v) for v in vs] + [0]) + 10)[:len(vs)]
    m = dict(zip(vs, map(str, pool)))
    return re.sub(r'x _ (\d+)', lambda mo: 'x _ ' + m[mo.group(1)], s)


def _perturb(s, rng):
    "A seeded damage: swap two arguments, duplicate a conjunct, merge two variables, or flip a definite."
    lf = parse_lf(s)
    cs = [str(c) for c in lf.conjuncts]
    op = int(rng.integers(4))
    if op == 0:
        two = [i for i, c in enumerate(lf.conjuncts) if len(c.args) == 2]
        if two:
            c = lf.conjuncts[two[int(rng.integers(len(two)))]]
            cs[lf.conjuncts.index(c)] = str(c._replace(args=c.args[::-1]))
    elif op == 1: cs.append(cs[int(rng.integers(len(cs)))])
    elif op == 2 and len(lf.variables) > 1:
        a, b = lf.variables[:2]
        cs = [str(c._replace(args=tuple(a if x == b else x for x in c.args))) for c in lf.conjuncts]
    else:
        i = int(rng.integers(len(cs)))
        cs[i] = cs[i][2:] if cs[i].startswith('* ') else '* ' + cs[i]
    return ' AND '.join(cs)


@pytest.fixture(scope='module')
def gen():
    return load_cogs('gen')


def test_gen_self_renamed_shuffled(gen):
    rng = make_rng(0)
    for s in gen.lf:
        assert sem(s, s), s
        lf = parse_lf(s)
        if lf.is_primitive: continue
        cs = [str(c) for c in lf.conjuncts]
        shuffled = ' AND '.join(cs[i] for i in rng.permutation(len(cs)))
        assert sem(_rename(shuffled, rng), s), s


def test_agrees_with_brute_force_on_small_rows(gen):
    rng = make_rng(1)
    small = [s for s in gen.lf if not parse_lf(s).is_primitive and len(parse_lf(s).variables) <= 6]
    rows = [small[i] for i in rng.choice(len(small), 400, replace=False)]
    n_false = 0
    for s in rows:
        for p in (_rename(s, rng), _rename(_perturb(s, rng), rng)):
            want = _brute(p, s)
            n_false += not want
            assert sem(p, s).match == want, (p, s)
            assert sem_lf(parse_lf(p), parse_lf(s)).match == want
    assert n_false > 200   # the perturbations do break most rows


def test_score_and_categories(gen):
    g = gen.iloc[:200]
    preds = list(g.lf)
    preds[0] = preds[0] + ' AND'
    preds[1] = _rename(preds[1], make_rng(0))
    s = score(preds, g.lf, 'sem', g.category)
    assert (s.n, s.n_correct, s.n_parse_errors) == (200, 199, 1)
    assert s.by_category.n.sum() == 200 and s.by_category.n_correct.sum() == 199
    assert list(s.by_category.category) == sorted(set(g.category))
    e = score(preds, g.lf, 'em')
    assert e.n_correct == sum(p == q for p, q in zip(preds, g.lf)) == 198
    assert e.by_category is None and s.flags.sum() == 199
    with pytest.raises(CogenError, match='aligned'): score(preds[:-1], g.lf)
    with pytest.raises(CogenError, match='unknown metric'): score(preds, g.lf, 'f1')


def test_seed_summary():
    scores = {}
    for seed in range(4):
        flags = make_rng(seed).random(100) < 0.5 + 0.1 * seed
        preds = ['cat ( 1 )' if f else 'dog ( 1 )' for f in flags]
        scores[seed] = score(preds, ['cat ( 1 )'] * 100, 'em', ['a'] * 50 + ['b'] * 50)
    tab = seed_table(scores)
    assert len(tab) == 12 and set(tab.category) == {'overall', 'a', 'b'}
    summ = seed_summary(tab).set_index('category')
    assert (summ.n == 4).all() and (summ.ci_low <= summ['mean']).all() and (summ['mean'] <= summ.ci_high).all()
    assert summ.equals(seed_summary(tab).set_index('category'))   # seeded: same numbers again


def test_cli_score_on_gen(tmp_path, gen):
    from typer.testing import CliRunner
    from cogen_lib.recogs.cli import app
    g = gen.iloc[:300]
    rng = make_rng(3)
    preds = [_rename(s, rng) if i % 3 else s for i, s in enumerate(g.lf)]
    preds[4] = 'garbage ('
    gold_f, pred_f = tmp_path/'gold.tsv', tmp_path/'pred.tsv'
    gold_f.write_text(''.join(f'{a}\t{b}\t{c}\n' for a, b, c in zip(g.sentence, g.lf, g.category)))
    pred_f.write_text(''.join(f'{a}\t{b}\t{c}\n' for a, b, c in zip(g.sentence, preds, g.category)))
    r = CliRunner().invoke(app, ['score', str(pred_f), '--gold', str(gold_f), '--by-category'])
    assert r.exit_code == 0 and 'sem accuracy: 0.9967 (299 / 300 rows; 1 predictions did not parse)' in r.output, r.output
    n_em = sum(p == q for p, q in zip(preds, g.lf))
    r = CliRunner().invoke(app, ['score', str(pred_f), '--gold', str(gold_f), '--metric', 'em'])
    assert r.exit_code == 0 and f'({n_em} / 300 rows' in r.output
    pred_f.write_text(''.join(f'{a}\t{b}\t{c}\n' for a, b, c in zip(g.sentence[:-1], preds[:-1], g.category[:-1])))
    r = CliRunner().invoke(app, ['score', str(pred_f), '--gold', str(gold_f)])
    assert r.exit_code == 1 and 'error:' in r.output and '299 rows but' in r.output
