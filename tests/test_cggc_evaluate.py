"CGGC evaluation: pycocoevalcap / rouge-score metrics on a predictions file under both protocols, error rows, malformed input."
import json
from pathlib import Path

import numpy as np, pandas as pd, pytest
from typer.testing import CliRunner

from cogen_lib.core import CogenError
from cogen_lib.cggc.cli import app
from cogen_lib.cggc.evaluate import read_predictions, evaluate

runner = CliRunner()
DOG = ['The dog is wagging his tail.', 'A dog wags its tail.']
ROWS = [dict(setting='id', concepts=['dog', 'tail', 'wag'], reference=DOG[0], references=DOG, prediction='The dog is wagging its tail.'),
        dict(setting='id', concepts=['ski', 'mountain', 'skier'], reference='A skier is skiing down a mountain.', references=['A skier is skiing down a mountain.'], prediction='A skier skis down the mountain.'),
        dict(setting='ood', concepts=['dog', 'tail', 'wag'], reference=DOG[1], references=DOG, prediction='A tail.'),
        dict(setting='ood', concepts=['ski', 'mountain', 'skier'], reference='A skier is skiing down a mountain.', references=['A skier is skiing down a mountain.'], prediction=None, error='model failed: out of memory'),
        dict(setting='same', concepts=['dog', 'tail', 'wag'], reference=DOG[1], references=[DOG[1]], prediction='A dog wags its tail.'),
        dict(setting='same', concepts=['dog', 'tail', 'wag'], reference=DOG[1], references=[DOG[1]], prediction='A dog wags its tail.'),
        dict(setting='other', concepts=['dog', 'tail', 'wag'], reference=DOG[0], references=DOG, prediction='A dog wags its tail.')]


def test_evaluate_file(tmp_path):
    p = tmp_path/'pred.jsonl'
    p.write_text(''.join(json.dumps(r) + '\n' for r in ROWS))
    t = evaluate(read_predictions(p))
    idr, ood, gap = (t[t.setting == s].iloc[0] for s in ('id', 'ood', 'Δ (id - ood)'))
    assert (idr.n, idr.errors, ood.n, ood.errors) == (2, 0, 1, 1)                       # the error row is counted, not scored
    assert idr['BLEU-4'] > ood['BLEU-4'] and idr['Coverage'] == 100 and ood['Coverage'] == pytest.approx(100 / 3)
    assert gap['CIDEr'] == pytest.approx(idr['CIDEr'] - ood['CIDEr'])
    assert np.isnan(idr['SPICE'])
    same = t[t.setting == 'same'].iloc[0]                                                # identical to the reference
    assert same['BLEU-4'] > 99 and same['ROUGE-L'] > 99 and same['METEOR'] > 90 and same['Coverage'] == 100
    r = runner.invoke(app, ['score', str(p)])                               # a failed call: counted, and status 1
    assert r.exit_code == 1 and 'error: 1 of 7 predictions in' in r.output and 'first error: model failed: out of memory' in r.output
    r = runner.invoke(app, ['score', str(p), '--max-errors', '1'])
    assert r.exit_code == 0 and 'SPICE unavailable' in r.output and 'Δ (id - ood)' in r.output and 'errors' in r.output
    assert 'protocol own: each sample against its own reference' in r.output


def test_protocols(tmp_path):
    "A prediction equal to the set's second reference: perfect against all references, not against its own (the first)."
    p = tmp_path/'pred.jsonl'
    p.write_text(''.join(json.dumps(r) + '\n' for r in ROWS))
    own, allr = (evaluate(read_predictions(p, pr), protocol=pr) for pr in ('own', 'set'))
    o, a = own[own.setting == 'other'].iloc[0], allr[allr.setting == 'other'].iloc[0]
    assert a['ROUGE-L'] == pytest.approx(100) and o['ROUGE-L'] < 80 and a['METEOR'] > o['METEOR']
    r = runner.invoke(app, ['score', str(p), '--protocol', 'set', '--max-errors', '1'])
    assert r.exit_code == 0 and 'protocol set: each sample against every reference of its concept set' in r.output
    p.write_text(json.dumps({k: v for k, v in ROWS[0].items() if k != 'reference'}) + '\n')
    r = runner.invoke(app, ['score', str(p)])                               # own needs the sample's own reference
    assert r.exit_code == 1 and "line 1: field 'reference'" in r.output and '--protocol set' in r.output
    assert runner.invoke(app, ['score', str(p), '--protocol', 'set']).exit_code == 0


def test_malformed_predictions(tmp_path):
    p = tmp_path/'pred.jsonl'
    p.write_text(json.dumps(ROWS[0]) + '\n{"prediction": "x"\n')
    with pytest.raises(CogenError, match=r'pred.jsonl line 2: not JSON'): read_predictions(p)
    p.write_text(json.dumps(dict(ROWS[0], prediction=None)) + '\n')
    with pytest.raises(CogenError, match=r"line 1: no prediction and no error"): read_predictions(p)
    r = runner.invoke(app, ['score', str(tmp_path/'none.jsonl')])
    assert r.exit_code == 1 and 'does not exist' in r.output
    r = runner.invoke(app, ['score', str(p)])
    assert r.exit_code == 1 and 'line 1: no prediction and no error' in r.output


def test_one_meteor_process_serves_every_call(tmp_path):
    "Two evaluations share one METEOR (Java) process; one that ended, or a discarded one, is replaced by a running one."
    from cogen_lib.cggc.evaluate import shared_meteor, discard_meteor
    p = tmp_path/'pred.jsonl'
    p.write_text(''.join(json.dumps(r) + '\n' for r in ROWS))
    first = evaluate(read_predictions(p))
    m = shared_meteor(); pid = m.meteor_p.pid
    second = evaluate(read_predictions(p))
    assert shared_meteor().meteor_p.pid == pid and m.meteor_p.poll() is None
    pd.testing.assert_frame_equal(first, second)                       # the reused process scores as a fresh one did
    m.meteor_p.kill(); m.meteor_p.wait()
    m2 = shared_meteor(); assert m2 is not m and m2.meteor_p.poll() is None
    discard_meteor(m2); assert m2.meteor_p.poll() is not None and shared_meteor() is not m2
