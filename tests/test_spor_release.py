"SPOR release writer: strict JSON only (no NaN / Infinity); E2E samples without a name never enter the pool; the paper's E2E counts."
import json
from dataclasses import replace
import pytest
from cogen_lib.core import CogenError
from cogen_lib.spor import release as R
from cogen_lib.spor.data import Corpus, load_corpus
from cogen_lib.spor.order import build_order


def _strict(path):
    "Every line of a JSON-lines file (or the whole of a .json file) parsed with NaN / Infinity refused."
    def no_constant(c): raise ValueError(f"{path}: non-finite constant {c}")
    text = path.read_text(encoding='utf-8')
    docs = [text] if path.suffix == '.json' else text.splitlines()
    return [json.loads(d, parse_constant=no_constant) for d in docs if d.strip()]


@pytest.fixture(scope='module')
def e2e():
    return load_corpus('e2e', compat=True)


def test_build_order_e2e_writes_strict_json(tmp_path, monkeypatch, e2e):
    "A small E2E order-invariance build from the real pool writes strict JSON, every sample with its name."
    small = Corpus('e2e', e2e.train[:200], e2e.test[:40], compat=True)
    monkeypatch.setattr(R, 'load_corpus', lambda dataset, compat=False: small)
    st = R.build('order', 'e2e', tmp_path, compat=True, progress=False)
    files = sorted(tmp_path.rglob('*.json*'))
    assert len(files) == 6                                   # 4 splits + main + stats.json
    recs = {f.parent.name: _strict(f) for f in files}
    assert all(isinstance(r['name'], str) and r['name'] for f, rs in recs.items() if f != tmp_path.name for r in rs)
    assert len(recs['test_e2e_order-invariance_performance']) == st['performance_samples'] == len(small.test)
    assert all(k in r for r in recs['test_e2e_order-invariance_main'] for k in ('input_order_1', 'input_order_2', 'output_order'))


def test_writer_refuses_nan(tmp_path, e2e):
    "A sample holding NaN (how pandas reads an MR without a name) is an error naming the file and the sample; nothing is written."
    s = replace(e2e.test[0], key='e2e:dev#364', name=float('nan'))
    with pytest.raises(CogenError, match=rf"dataset.jsonl: sample {s.key} holds a non-finite number in 'name'"):
        R.write_split(tmp_path, 'e2e', 'order', {}, {'performance': [e2e.test[0], s]}, {})
    assert not list(tmp_path.rglob('dataset.jsonl'))


def test_e2e_counts_match_paper(e2e):
    "The loader drops the 5 devel MRs without a name: the paper's 1,635 E2E test samples and 1,623 order-invariance main samples."
    assert all(isinstance(s.name, str) and s.name for s in e2e.train + e2e.test)
    assert len(e2e.test) == 1635
    assert len(build_order(e2e, seed=0, match=False).main) == 1623
