"GroundCocoa generator: every question of a full set passes the independent check; the authors' label bugs stay fixed; CLI."
import copy, importlib.util, itertools, json, sys, types
from collections import Counter
from pathlib import Path

import numpy as np, pandas as pd, pytest
from typer.testing import CliRunner

from cogen_lib.core import CogenError, make_rng
from cogen_lib.cocoa.flights import make_routes, parse_flight, parse_clock
from cogen_lib.cocoa.conditions import SLOTS, SLOT_OPS, FlightTable, Primitive, make_primitive, truth, templates, is_atypical
from cogen_lib.cocoa.check import check_record, holds, entropy2, atypical_literal, parse_pos, clauses
from cogen_lib.cocoa.generate import (CONFIGS, generate, posform_clauses, posform_direct, binary_entropy, query_truth,
                                      draw_query, write_jsonl, read_jsonl, table1, graph_metrics)
from cogen_lib.cocoa.cli import app

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='module')
def full_set():
    return generate(100, seed=1)


def test_full_set_every_record_checks(full_set):
    recs = full_set
    assert len(recs) == 600 and Counter(tuple(r['config']) for r in recs) == {c: 100 for c in CONFIGS}
    problems = [p for r in recs for p in check_record(r)]
    assert problems == []
    assert len({r['id'] for r in recs}) == len(recs)
    assert max(Counter(r['query_id'] for r in recs).values()) <= 3
    for r in recs:
        n, m = r['config']
        assert len(r['slots']) == n and len(set(r['slots'])) == n
        assert len(r['minterms']) == m and len({tuple(x) for x in r['minterms']}) == m       # distinct minterms
        cl = clauses(parse_pos(r['pos']))
        assert len(cl) >= 2 and any(c[0] == 'or' for c in cl)
        syms = [p['symbol'] for p in r['primitives']]
        assert sorted(syms) == sorted(set(syms))                                              # fresh primitive per occurrence
        assert r['answer'] in 'ABCDE' and set(r['option_truth']) == set('ABCDE')
    typ = Counter(r['is_typical'] for r in recs)
    assert typ[True] > 50 and typ[False] > 50
    for c in CONFIGS:                                            # the gold letter is balanced per configuration
        assert Counter(r['answer'] for r in recs if tuple(r['config']) == c) == {L: 20 for L in 'ABCDE'}
        first = [r['answer'] for r in recs if tuple(r['config']) == c][:10]
        assert Counter(first) == {L: 2 for L in 'ABCDE'}            # and so is every prefix of 5k questions


def test_record_schema(full_set):
    r = full_set[0]
    for k in ('id', 'config', 'query', 'pos', 'primitives', 'options', 'answer', 'option_truth', 'entropy', 'lcc',
              'longest_path', 'max_degree', 'width', 'is_typical'):
        assert k in r
    assert set(r['primitives'][0]) >= {'symbol', 'slot', 'op', 'value', 'text'}
    f = r['options']['A']
    for k, t in dict(airlines=list, ticket_class=str, date=str, departure=str, arrival=str, travel_minutes=int, layovers=int,
                     layover_cities=list, layover_minutes=list, price_usd=float, carbon_diff_pct=float, source=str,
                     destination=str, display=dict).items():
        assert isinstance(f[k], t), k
    assert len(f['date']) == 10 and f['date'][4] == '-' and len(f['departure']) == 5
    assert set(r['option_truth']) == set('ABCDE') and set(r['entropy']) == set('ABCDE')
    json.dumps(r)


def test_check_record_catches_wrong_labels(full_set):
    r = full_set[3]
    other = next(L for L in 'ABCDE' if L != r['answer'])
    muts = {
        'answer': lambda x: x.update(answer=other),
        'truth': lambda x: x['option_truth'][other].update({'p0': not x['option_truth'][other]['p0']}),
        'entropy': lambda x: x['entropy'].update({other: x['entropy'][other] + 0.1}),
        'typical': lambda x: x.update(is_typical=not x['is_typical']),
        'lcc': lambda x: x.update(lcc=x['lcc'] + 1),
        'path': lambda x: x.update(longest_path=x['longest_path'] + 1),
        'degree': lambda x: x.update(max_degree=x['max_degree'] + 1),
        'width': lambda x: x.update(width=x['width'] + 1),
        'missing': lambda x: x.pop('pos'),
        'reused symbol': lambda x: x.update(pos=x['pos'].replace('p1', 'p0')),
        'flight': lambda x: x['options'][other].update(price_usd=x['options'][other]['price_usd'] + 1e6, ticket_class='Nope'),
    }
    assert check_record(r) == []
    for name, f in muts.items():
        bad = copy.deepcopy(r); f(bad)
        assert check_record(bad), name


def _flights():
    base = dict(Airline='[Emirates]', TicketClass='Economy', DepartureTime='10:00 AM', ArrivalTime='12:10 AM',
                TravelTime='14 hr 25 min', NumberOfLayovers='0', CarbonEmissionAvgDiff='0', Price='$900',
                TravelDate='July 3, 2024', SourceCity='A', DestinationCity='B', LayoverLocations='', LayoverTimes='')
    nonstop = parse_flight(base)
    via = parse_flight({**base, 'Airline': '[Emirates, Qatar Airways]', 'NumberOfLayovers': '2',
                        'LayoverLocations': 'Dubai, Doha', 'LayoverTimes': '1 hr, 3 hr 5 min', 'DepartureTime': '12:00 PM'})
    return [nonstop, via]


@pytest.mark.parametrize('slot,op,value,expected', [
    ('Airline', 'subset_of', ['Emirates'], [True, False]),                   # the single airline [Emirates] matches
    ('Airline', 'disjoint_from', ['Emirates'], [False, False]),
    ('LayoverLocations', 'disjoint_from', ['Doha'], [True, False]),          # ' Doha' is stripped
    ('LayoverLocations', 'subset_of', ['Doha', 'Dubai'], [True, True]),
    ('LayoverLocations', 'subset_of', ['Dubai'], [True, False]),             # nonstop: "only layovers in X" holds vacuously
    ('ArrivalTime', 'lt', '01:00', [True, True]),                            # 12:10 AM is 00:10, not noon
    ('DepartureTime', 'lt', '12:00', [True, False]),                         # 12:00 PM is noon
    ('DepartureTime', 'lt', '10:00', [False, False]),                        # "before 10:00" is false at 10:00 ...
    ('DepartureTime', 'ge', '10:00', [True, True]),                          # ... and its complement true
    ('DepartureTimeBetween', 'between', ['10:00', '11:00'], [True, False]),  # inclusive
    ('LayoverTimes', 'each_lt', 120, [True, False]),
    ('LayoverTimes', 'each_gt', 59, [True, True]),
    ('TotalLayoverTime', 'gt', 240, [False, True]),
    ('CarbonEmissionAvgDiff', 'lt', 0, [False, False]),
    ('CarbonEmissionAvgDiff', 'gt', 0, [False, False]),
    ('TicketClass', 'in', ['Economy'], [True, True]),
    ('TravelDate', 'eq', '2024-07-03', [True, True]),
])
def test_authors_label_bugs_fixed(slot, op, value, expected):
    fl = _flights()
    p = Primitive('p0', slot, op, value)
    assert truth(p, FlightTable(fl)).tolist() == expected                               # generator's evaluator
    assert [holds(p.to_json(False), f.to_json()) for f in fl] == expected               # independent checker


def test_negation_is_the_complement():
    "A negated primitive is false exactly where the primitive is true, also for set conditions and nonstop flights."
    fl = _flights()
    for slot, op, v in [('LayoverLocations', 'subset_of', ['Dubai']), ('Airline', 'subset_of', ['Emirates']),
                        ('LayoverTimes', 'each_lt', 120), ('DepartureTime', 'lt', '10:00')]:
        rec_like = dict(slot=slot, op=op, value=v)
        t = [holds(rec_like, f.to_json()) for f in fl]
        lit = [not x for x in t]
        assert lit == (~truth(Primitive('p0', slot, op, v), FlightTable(fl))).tolist()
    # the complement sentences say "at least one ... other than", not the authors' "I do not want layovers in X"
    assert templates('LayoverLocations', 'subset_of', ['Dubai'])[1] == 'I want at least one layover somewhere other than Dubai'
    assert 'other than' in templates('Airline', 'subset_of', ['Emirates'])[1]
    assert parse_clock('12:00 AM') == 0 and parse_clock('12:00 PM') == 720


def test_evaluators_agree_on_random_primitives():
    routes = make_routes(make_rng(5), n_routes=8)
    rng = make_rng(6)
    n = 0
    for r in routes:
        t = FlightTable(r.flights)
        fj = [f.to_json() for f in r.flights]
        for slot in SLOTS:
            for _ in range(15):
                p = make_primitive(rng, t, slot, 'p0')
                assert truth(p, t).tolist() == [holds(p.to_json(False), f) for f in fj], (slot, p)
                n += 1
    assert n == 8 * 14 * 15


def test_atypical_definitions_agree():
    for slot in ('CarbonEmissionAvgDiff', 'Price', 'NumberOfLayovers', 'TravelTime'):
        for op, v, neg in itertools.product(('lt', 'gt'), (0, 1, 2, 3, 800), (False, True)):
            assert is_atypical(slot, op, v, neg) == atypical_literal(slot, op, v, neg)


def test_entropy_paper_example():
    assert abs(entropy2(3, 4) - 0.811278) < 1e-6 and entropy2(2, 4) == 1.0
    assert abs(float(binary_entropy(3, 4)) - 0.811278) < 1e-6 and float(binary_entropy(2, 4)) == 1.0


def test_graph_metrics_lcc_vs_path():
    assert graph_metrics([['a', 'b'], ['a', 'c'], ['a', 'd']]) == dict(lcc=4, longest_path=3, max_degree=3, width=3)


def _fn(n, cl):
    return tuple(all(any(bool((r >> (n - 1 - v)) & 1) != ng for v, ng in c) for c in cl) for r in range(2 ** n))


def test_canonical_posform_is_minimal_and_exact():
    rng = make_rng(0)
    cases = [(4, 3, c) for c in itertools.combinations(range(16), 3)]
    cases += [(n, 2, tuple(sorted(rng.choice(2 ** n, 2, replace=False).tolist()))) for n in (5, 6) for _ in range(40)]
    for n, m, combo in cases:
        mt = tuple(tuple((r >> (n - 1 - i)) & 1 for i in range(n)) for r in combo)
        a, b = posform_clauses(n, mt), posform_direct(n, mt)
        assert _fn(n, a) == tuple(r in combo for r in range(2 ** n))
        assert (len(a), sum(map(len, a))) == (len(b), sum(map(len, b)))


def test_bench_baseline_evaluator_matches():
    spec = importlib.util.spec_from_file_location('cocoa_bench', ROOT/'bench'/'cocoa_generate.py')
    bench = importlib.util.module_from_spec(spec); spec.loader.exec_module(bench)
    routes = make_routes(make_rng(2), n_routes=6)
    tables = [FlightTable(r.flights) for r in routes]
    rng = make_rng(3)
    for n, m in CONFIGS:
        q = draw_query(rng, tables, n, m)
        T, sat, ent = bench.baseline_evaluate(tables[q.route], q.prims, q.clauses)
        assert (T == q.truth).all() and (sat == q.sat).all() and np.allclose(ent, q.entropy)


def test_balancing_leaves_queries_and_option_sets_unchanged():
    "The gold letter comes from a child stream: the same queries and the same five flights per question as an unbalanced draw."
    from cogen_lib.cocoa import generate as G
    routes = make_routes(make_rng(0), n_routes=6)
    tables = [FlightTable(r.flights) for r in routes]
    bal = G.generate_config(3, 2, 10, make_rng(4), routes, tables)
    fixed = G.generate_config(3, 2, 10, make_rng(4), routes, tables, gold_rng=make_rng(99))
    assert [r['query'] for r in bal] == [r['query'] for r in fixed]
    flights = lambda r: sorted(json.dumps(o, sort_keys=True) for o in r['options'].values())
    assert [flights(r) for r in bal] == [flights(r) for r in fixed]
    assert [r['options'][r['answer']] for r in bal] == [r['options'][r['answer']] for r in fixed]   # the same right flight
    assert Counter(r['answer'] for r in bal) == Counter(r['answer'] for r in fixed) == {L: 2 for L in 'ABCDE'}
    assert all(check_record(r) == [] for r in bal + fixed)


def test_generate_errors():
    with pytest.raises(CogenError, match='per_config'): generate(0)
    with pytest.raises(CogenError, match='no such file'): read_jsonl('/nonexistent/x.jsonl')


def test_cli_same_seed_same_bytes(tmp_path):
    runner = CliRunner()
    outs = []
    for name, seed in (('a', 7), ('b', 7), ('c', 8)):
        p = tmp_path/f'{name}.jsonl'
        res = runner.invoke(app, ['generate', '--per-config', '5', '--seed', str(seed), '--out', str(p)])
        assert res.exit_code == 0, res.output
        outs.append(p.read_bytes())
    assert outs[0] == outs[1] and outs[0] != outs[2]
    assert len(outs[0].decode().splitlines()) == 30


def test_cli_stats(tmp_path, full_set):
    p = write_jsonl(full_set[:60], tmp_path/'s.jsonl')
    res = CliRunner().invoke(app, ['stats', str(p)])
    assert res.exit_code == 0, res.output
    assert 'Samples' in res.output and 'Unique queries' in res.output and '60 of 60 records pass' in res.output
    t = table1(full_set)
    assert t.loc['Samples', 'Total'] == 600 and t.loc['Samples', '(4,3)'] == 100
    bad = copy.deepcopy(full_set[0]); bad['answer'] = next(L for L in 'ABCDE' if L != bad['answer'])
    q = write_jsonl([bad], tmp_path/'bad.jsonl')
    res = CliRunner().invoke(app, ['stats', str(q)])
    assert res.exit_code == 1


def test_cli_score_missing_module(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, 'cogen_lib.cocoa.evaluate', None)
    res = CliRunner().invoke(app, ['score', str(tmp_path/'d.jsonl'), '--model', 'x', '--prompt', 'direct'])
    assert res.exit_code == 1 and 'error:' in res.output and 'evaluate' in res.output


def test_cli_score_prints_accuracy_and_parse_failures(tmp_path, monkeypatch):
    seen = {}
    def evaluate_file(data_path, model, prompt_style, limit=None, rotations=1, max_errors=0):
        seen.update(data=str(data_path), model=model, style=prompt_style, limit=limit, rotations=rotations)
        df = pd.DataFrame(dict(correct=[True, False, True, False] * rotations, parse_failed=[False, True, False, False] * rotations))
        return df, dict(n=4, accuracy=0.5, parse_failure_rate=0.25, rotated_accuracy=0.3, rotated_ci_low=0.1, rotated_ci_high=0.6)
    fake = types.ModuleType('cogen_lib.cocoa.evaluate'); fake.evaluate_file = evaluate_file
    monkeypatch.setitem(sys.modules, 'cogen_lib.cocoa.evaluate', fake)
    res = CliRunner().invoke(app, ['score', 'd.jsonl', '--model', 'm', '--prompt', 'cot-full', '--limit', '4'])
    assert res.exit_code == 0, res.output
    assert 'accuracy 0.500' in res.output and 'parse-failure rate 0.250' in res.output and 'rotations' not in res.output
    assert seen == dict(data='d.jsonl', model='m', style='cot-full', limit=4, rotations=1)
    res = CliRunner().invoke(app, ['score', 'd.jsonl', '--model', 'm', '--prompt', 'loglik', '--rotations', '5'])
    assert res.exit_code == 0, res.output
    assert '4 questions | accuracy 0.500 | over 5 rotations 0.300 [0.100, 0.600]' in res.output and seen['rotations'] == 5


def test_paraphrase_hook_keeps_structure(full_set, monkeypatch):
    "The optional two-step paraphrase replaces only the query text (template kept), through cogen_lib.models.load_lm."
    from cogen_lib.cocoa import generate as G
    import cogen_lib.models as M
    class Gen:
        def __init__(self, text, error=None): self.text, self.error = text, error
    calls, fail = [], [True]
    class FakeLM:
        def generate(self, prompts, max_new_tokens, batch_size, chat, desc):
            calls.append(len(prompts))
            return [Gen(None, error='boom') if fail[0] and i == 0 else Gen(f'P{len(calls)}.{i}') for i, p in enumerate(prompts)]
    monkeypatch.setattr(M, 'load_lm', lambda name: FakeLM())
    recs = full_set[:9]
    with pytest.raises(M.FailedCalls, match='1 of .* paraphrase calls failed.*First error: boom'):   # never kept as data
        G.paraphrase(recs, 'fake')
    calls.clear(); fail[0] = False
    out = G.paraphrase(recs, 'fake')
    assert len(calls) == 2                                                   # sum terms, then paragraphs
    assert [r['query_template'] for r in out] == [r['query'] for r in recs]
    assert all(o['query'].startswith('I am looking for a flight from') and 'P2.' in o['query'] for o in out)
    assert all(o['primitives'] == r['primitives'] and o['answer'] == r['answer'] for o, r in zip(out, recs))
    assert all(check_record(o) == [] for o in out)                          # labels still check (template text kept)
