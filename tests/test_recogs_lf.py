"The ReCOGS logical-form parser: byte-exact round trips on every COGS row, ReCOGS forms, and positioned errors."
import pytest
from cogen_lib.core import CogenError, make_rng
from cogen_lib.data import load_cogs
from cogen_lib.recogs.lf import (LF, Arg, Conjunct, LFParseError, build_lf, index_var, parse_lf, render, tokens, x_var,
                                 _slow_parse)


@pytest.fixture(scope='module')
def cogs():
    return load_cogs()


def test_every_cogs_row_round_trips(cogs):
    assert len(cogs) == 51155
    bad = [s for s in cogs.lf if render(parse_lf(s)) != s]
    assert not bad, bad[:3]


def test_fast_and_reference_parsers_agree(cogs):
    for s in cogs.lf.iloc[::7]:
        assert _slow_parse(s) == parse_lf(s), s


def test_cogs_structure(cogs):
    for s in cogs.lf.iloc[::13]:
        lf = parse_lf(s)
        if lf.is_primitive: continue
        # COGS puts exactly the definite nouns in the ';' prefix and uses only x-variables and names
        assert lf.prefix == lf.definites, s
        assert all(c.sep == 'AND' for c in lf.body[:-1]), s
        assert {a.kind for c in lf.conjuncts for a in c.args} <= {'x', 'name'}, s
        assert tokens(lf) == s.split(' ')


RECOGS = [
    'Liam ( 0 ) ; * cat ( 3 ) ; hope ( 1 ) AND agent ( 1 , 0 ) AND ccomp ( 1 , 6 ) AND burn ( 6 ) AND theme ( 6 , 3 )',
    '* girl ( 1 ) ; * weapon ( 4 ) ; machine ( 7 ) ; nmod . beside ( 4 , 7 ) AND offer ( 2 ) AND agent ( 2 , 1 ) AND theme ( 2 , 4 )',
    'box ( 13 ) ; girl ( 44 ) ; agent . hope ( 42 , Liam ) AND ccomp . hope ( 42 , 50 ) AND theme . burn ( 50 , 13 )',
    'agent . sleep ( 36 , Ethan )',
    'LAMBDA a . Emma ( a )',
    'LAMBDA a . LAMBDA e . run ( e ) AND agent ( e , a )',
    'LAMBDA a . LAMBDA b . LAMBDA e . like ( e ) AND agent ( e , b ) AND theme ( e , a )',
]


@pytest.mark.parametrize('s', RECOGS)
def test_recogs_round_trip(s):
    lf = parse_lf(s)
    assert render(lf) == s and _slow_parse(s) == lf


def test_recogs_accessors():
    lf = parse_lf(RECOGS[0])
    assert [c.predicate for c in lf.prefix] == ['Liam', 'cat', ]
    assert [c.predicate for c in lf.definites] == ['cat']
    assert lf.variables == tuple(index_var(i) for i in (0, 3, 1, 6))
    assert lf.body[1] == Conjunct(False, ('agent',), (index_var(1), index_var(0)), 'AND')
    lam = parse_lf(RECOGS[-1])
    assert lam.lambdas == ('a', 'b', 'e') and lam.variables == () and lam.conjuncts[1].args == (Arg('bound', 'e'), Arg('bound', 'b'))


@pytest.mark.parametrize('s,pos,tok', [
    ('cat ( x _ 1', 11, 5), ('cat ( x _ 1 ) AND', 17, 7), ('cat ( x _ 1 )  AND', 14, 6), ('', 0, 0),
    ('cat ( x _ 1 ) dog ( x _ 2 )', 14, 6), ('LAMBDA ab . cat ( a )', 7, 1), ('* * cat ( x _ 1 )', 2, 1),
    ('cat ( x _ 1 , )', 14, 6), ('cat . ( x _ 1 )', 6, 2),
])
def test_errors_name_the_position(s, pos, tok):
    with pytest.raises(LFParseError) as e: parse_lf(s)
    assert (e.value.pos, e.value.token) == (pos, tok)
    assert f'char {pos}' in str(e.value) and isinstance(e.value, CogenError)


def test_non_string_is_a_parse_error():
    with pytest.raises(LFParseError): parse_lf(None)


def test_mutations_parse_or_raise_consistently(cogs):
    "Randomly damaged LFs either parse (and round-trip) or raise LFParseError; both parsers agree."
    rng = make_rng(0)
    lfs = cogs.lf.iloc[rng.choice(len(cogs), 300, replace=False)].tolist()
    vocab = ['(', ')', ',', '.', ';', 'AND', '*', 'x', '_', '3', 'LAMBDA', 'a', 'cat', 'Emma']
    for s in lfs:
        t = s.split(' ')
        for _ in range(5):
            u = list(t)
            i = int(rng.integers(len(u)))
            op = int(rng.integers(3))
            if op == 0 and len(u) > 1: del u[i]
            elif op == 1: u.insert(i, vocab[int(rng.integers(len(vocab)))])
            else: u[i] = vocab[int(rng.integers(len(vocab)))]
            m = ' '.join(u)
            try: fast = parse_lf(m)
            except LFParseError:
                with pytest.raises(LFParseError): _slow_parse(m)
                continue
            assert render(fast) == m and _slow_parse(m) == fast


def test_build_lf_has_no_leading_separator():
    c = parse_lf('* cat ( x _ 1 ) ; run . agent ( x _ 2 , x _ 1 )').conjuncts
    assert render(build_lf([], [c[1]])) == 'run . agent ( x _ 2 , x _ 1 )'
    assert render(build_lf([c[0]], [c[1]])) == '* cat ( x _ 1 ) ; run . agent ( x _ 2 , x _ 1 )'
    assert render(LF(name='Emma')) == 'Emma' and x_var(3).tokens == ['x', '_', '3']
