"PARENT in cogen_lib.spor.metrics agrees with a transcription of the reference implementation on real WebNLG and E2E samples."
import random
import pytest
from cogen_lib.spor.data import _webnlg_samples, _e2e_samples
from cogen_lib.spor.metrics import parent, parent_example, tokenize, sample_table
import parent_reference as ref


def _cases(samples, rng, k):
    "Predictions of every kind: a reference, a truncated reference, another sample's reference, an empty string, a list of values."
    out = []
    for s in rng.sample(samples, k):
        other = rng.choice(samples)
        toks = tokenize(s.texts[0])
        preds = [s.texts[0], ' '.join(toks[: max(1, len(toks) // 2)]), other.texts[0], '',
                 ' and '.join(u[-1].replace('_', ' ') for u in s.units)]
        for p in preds: out.append((tokenize(p), [tokenize(t) for t in s.texts], sample_table(s)))
    return out


@pytest.fixture(scope='module')
def cases():
    rng = random.Random(0)
    return {'webnlg': _cases(_webnlg_samples('dev'), rng, 40), "e2e": _cases(_e2e_samples("train"), rng, 40)}


@pytest.mark.parametrize('ds', ['webnlg', 'e2e'])
def test_parent_matches_reference(cases, ds):
    cs = cases[ds]
    preds, refs, tabs = zip(*cs)
    p, r, f, ex = parent(preds, refs, tabs)
    rp, rr, rf, rall = ref.parent(preds, refs, tabs)
    assert abs(p - rp) < 1e-6 and abs(r - rr) < 1e-6 and abs(f - rf) < 1e-6
    assert max(abs(e.f - x) for e, x in zip(ex, rall)) < 1e-9          # every example, not only the mean
    assert len({round(x, 6) for x in rall}) > len(rall) // 3              # the cases are varied, not all 0 or 1


@pytest.mark.parametrize('lam,smooth', [(0.0, 1e-5), (1.0, 1e-5), (0.3, 1e-3)])
def test_parent_matches_reference_other_settings(cases, lam, smooth):
    preds, refs, tabs = zip(*cases['e2e'][:100])
    ours = parent(preds, refs, tabs, lambda_weight=lam, smoothing=smooth)[:3]
    theirs = ref.parent(preds, refs, tabs, lambda_weight=lam, smoothing=smooth)[:3]
    assert all(abs(a - b) < 1e-9 for a, b in zip(ours, theirs))
