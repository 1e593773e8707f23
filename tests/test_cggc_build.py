"CGGC construction end to end on the shipped ConceptNet sample: build, fast == plain, determinism, prompts' constraints, errors."
import gzip, json
from pathlib import Path

import numpy as np, pytest
from typer.testing import CliRunner

from cogen_lib.core import CogenError, cache_dir, temp_env
from cogen_lib.cggc.cli import app
from cogen_lib.cggc.kg import load_kg, EmbeddingStore
from cogen_lib.cggc.graphs import prepare, fast_graphs, plain_graph, nx_graph, read_graphs, run_graphs
from cogen_lib.cggc.labels import compositional
from cogen_lib.cggc.prompts import check_prompts_file, check_prompt, make_prompts

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT/'tests/fixtures/cggc/conceptnet5_sample.csv'
LIMIT = 40
runner = CliRunner()


@pytest.fixture(scope='module', autouse=True)
def store():
    # a persistent store of its own (CI starts without one); separate from the big triple store's folder
    with temp_env(COGEN_CGGC_STORE=str(cache_dir('cggc', 'test-store'))): yield


@pytest.fixture(scope='module')
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp('build')
    r = runner.invoke(app, ['build', '--kg', 'conceptnet5', '--kg-path', str(SAMPLE), '--limit', str(LIMIT), '--out', str(out)])
    assert r.exit_code == 0, r.output
    return out


def test_build_files(build):
    recs = read_graphs(build)
    st = json.loads((build/'stats.json').read_text())
    assert st['sentences'] == len(recs) == 120 and st['sets'] == LIMIT and st['kg'] == 'conceptnet5' and st['hops'] == 0
    assert {'seconds', 'labels_kept', 'triples_used', 'ms_per_sentence'} <= set(st)
    for r in recs:
        assert set(r) >= {'set_id', 'concepts', 'target', 'nodes', 'edges', 'label', 'structure', 'missing_pairs'}
        assert r['label'] == '&'.join(sorted({e[1] for e in r['edges']}))
        assert set(r['concepts']) - {c for p in r['missing_pairs'] for c in p} <= set(r['nodes']) or not r['edges']
        assert r['structure'] in (None, 'A', 'B', 'C')
        if r['structure']: assert len(r['concepts']) == 3 and len(r['label'].split('&')) == 2
        for h, rel, t in r['edges']: assert h in r['nodes'] and t in r['nodes']
    assert sum(r['structure'] is not None for r in recs) > 0


def test_fast_equals_plain_and_workers_agree():
    sents, ix, S, _ = prepare('conceptnet5', SAMPLE, LIMIT, progress=False)
    cls = sents.concepts.tolist()
    fast = fast_graphs(ix, S, cls)
    G = nx_graph(ix)
    assert [plain_graph(ix, S[i], cls[i], G) for i in range(len(S))] == fast
    assert run_graphs(ix, S, cls, workers=2, batch=16, progress=False) == fast


def test_build_is_deterministic(build, tmp_path):
    r = runner.invoke(app, ['build', '--kg', 'conceptnet5', '--kg-path', str(SAMPLE), '--limit', str(LIMIT), '--workers', '1', '--out', str(tmp_path)])
    assert r.exit_code == 0, r.output
    assert (tmp_path/'graphs.jsonl').read_bytes() == (build/'graphs.jsonl').read_bytes()


def test_store_never_recomputes(build):
    class Boom:
        dim = 384
        def embed(self, texts, batch_size=32): raise AssertionError(f'recomputed {len(texts)} texts')
    sents, ix, S, _ = prepare('conceptnet5', SAMPLE, LIMIT, progress=False)
    EmbeddingStore().ensure(ix.texts() + sents.target.tolist(), embedder=Boom(), progress=False)


@pytest.mark.parametrize('setting,order', [('id', 'random'), ('ood', 'random'), ('ood', 'easy-to-hard')])
def test_prompts_constraints(build, tmp_path, setting, order):
    out = tmp_path/'p.jsonl'
    args = ['prompts', str(build), '--setting', setting, '--order', order, '--min-samples', '2', '--shots', '2', '--seed', '3', '--out', str(out)]
    r = runner.invoke(app, args)
    if order == 'easy-to-hard' and r.exit_code != 0:           # the 40-set sample may have too few typed demonstrations
        assert 'could get a valid' in r.output; return
    assert r.exit_code == 0, r.output
    n = check_prompts_file(out)
    assert n > 0
    first = out.read_bytes()
    assert runner.invoke(app, args).exit_code == 0 and out.read_bytes() == first          # same seed, same bytes
    for p in map(json.loads, out.read_text().splitlines()):
        assert p['prompt'].startswith('Please generate a natural sentence') and p['prompt'].endswith('sentence:')
        assert p['references'] and all(d['set_id'] != p['set_id'] for d in p['demonstrations'])
        assert p['item'] == f"{p['set_id']}/{p['ref']}" and p['reference'] in p['references']      # one sample: its own reference among its set's
    items = [json.loads(l)['item'] for l in out.read_text().splitlines()]
    assert len(items) == len(set(items))


def test_prompts_file_recheck_catches_tampering(build, tmp_path):
    out = tmp_path/'p.jsonl'
    assert runner.invoke(app, ['prompts', str(build), '--setting', 'ood', '--min-samples', '2', '--shots', '2', '--out', str(out)]).exit_code == 0
    p = json.loads(out.read_text().splitlines()[0])
    p['demonstrations'][0]['label'] = p['label']                                         # a demonstration with the test's label
    out.write_text(json.dumps(p) + '\n')
    with pytest.raises(CogenError, match="ood: a demonstration has the test's label"): check_prompts_file(out)


def test_errors(tmp_path, build):
    bad = tmp_path/'bad.csv'
    lines = SAMPLE.read_text().splitlines()[:5]
    lines.insert(3, 'not an assertion')
    bad.write_text('\n'.join(lines) + '\n')
    r = runner.invoke(app, ['build', '--kg', 'conceptnet5', '--kg-path', str(bad), '--limit', '2', '--out', str(tmp_path/'o')])
    assert r.exit_code == 1 and f'{bad} line 4' in r.output
    r = runner.invoke(app, ['build', '--kg', 'conceptnet6', '--out', str(tmp_path/'o')])
    assert r.exit_code == 1 and "unknown knowledge graph 'conceptnet6'" in r.output
    r = runner.invoke(app, ['build', '--kg', 'conceptnet5', '--out', str(tmp_path/'o')])
    assert r.exit_code == 1 and '--kg-path' in r.output
    r = runner.invoke(app, ['prompts', str(build), '--setting', 'iid', '--out', str(tmp_path/'p.jsonl')])
    assert r.exit_code == 1 and "unknown setting 'iid'" in r.output
    r = runner.invoke(app, ['prompts', str(build), '--setting', 'ood', '--order', 'sideways', '--out', str(tmp_path/'p.jsonl')])
    assert r.exit_code == 1 and "unknown order 'sideways'" in r.output
    r = runner.invoke(app, ['stats', str(tmp_path/'nowhere')])
    assert r.exit_code == 1 and 'does not exist' in r.output


def test_relation_mapping_of_sample():
    kg = load_kg('conceptnet5', SAMPLE, cache=False)
    assert ('dog', 'HasA', 'paw') in set(map(tuple, kg.values.tolist()))                  # PartOf reversed into HasA
    assert not (kg['relation'] == 'RelatedTo').any() and 'hund' not in set(kg['head'])   # dropped relation, non-English edge
