"""The CGGC summary (executed by the runner, skipped by nbdev_test) on the committed `cpu` rows alone (the long rows
left out): every claim of claims/cggc.yaml gets one structured verdict from the engine, over concept sets, and the
verdict page keeps its shape."""
from pathlib import Path
import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
NB = ROOT/'nbs'/'cggc'/'summary.ipynb'
RES = ROOT/'results'/'cggc'/'cpu'


@pytest.fixture(scope='module')
def summary(tmp_path_factory):
    pm = pytest.importorskip('papermill')
    if not any(RES.glob('*.items.csv.gz')): pytest.skip(f'no committed cpu rows in {RES}')
    tmp = tmp_path_factory.mktemp('cggc-summary')
    figs = tmp/'figures'
    pm.execute_notebook(str(NB), str(tmp/'summary.ipynb'), cwd=str(ROOT), kernel_name='python3', language='python', progress_bar=False,
                        parameters=dict(results_dir=str(RES), figures_dir=str(figs), profile='cpu',
                                        committed_root=str(tmp/'no-committed-rows')))   # the project's committed long rows left out
    return figs


def test_verdict_files(summary):
    from cogen_lib.claims import load_claims, KINDS
    head = (summary/'verdicts.md').read_text().splitlines()[0]
    assert head.count('|') - 1 <= 6, head                                              # at most 6 columns
    v = pd.read_csv(summary/'verdicts.csv')
    assert list(v.columns[:11]) == ['claim_id', 'claim', 'kind', 'effect', 'ci_low', 'ci_high', 'paper_effect', 'n', 'p', 'mde', 'budget']
    assert set(v.claim_id) == {c.id for c in load_claims('cggc', ROOT)}                # every claim has a row, run or not
    assert set(v.kind) <= set(KINDS)
    assert (v.set_index('claim_id').loc[['human-evaluation', 'model-ranking'], 'kind'] == 'not testable').all()


def test_id_vs_ood_is_over_concept_sets(summary):
    "The Table 4 contrast: each concept set's mean ROUGE-L over its samples and the seeds, id minus ood, recomputed from the items files."
    v = pd.read_csv(summary/'verdicts.csv').set_index('claim_id').loc['id-beats-ood-smollm2']
    per = []
    for f in sorted(RES.glob('experiment=main_model=smollm2-135m*.items.csv.gz')):
        d = pd.read_csv(f, keep_default_na=False, na_values=[''])
        d = d[(d.system == 'model') & (d.protocol == 'own')]
        per.append(d.groupby(['set_id', 'setting'])['ROUGE-L'].mean().unstack('setting'))
    sets = pd.concat(per, axis=1, keys=range(len(per)), join='inner').T.groupby(level=1).mean().T   # each set's mean over the seeds
    gap = (sets['id'] - sets['ood']).to_numpy()
    assert int(v.n) == len(gap) < len(d)                                               # units are concept sets, not samples
    assert abs(v.effect - gap.mean()) < 1e-9 and v.paper_effect == 2.92
    assert v.kind == 'not testable'                                                    # 5 concept sets cannot reach alpha 0.05
    assert v.ci_low < v.effect < v.ci_high


def test_packaging_is_an_equivalence(summary):
    v = pd.read_csv(summary/'verdicts.csv').set_index('claim_id').loc['packaging-differs-little']
    assert v.paper_effect == 0 and v.kind != 'reproduced'                              # 7 concept sets cannot show equivalence within 1 point


def test_protocol_words_follow_the_numbers(summary):
    "The protocol section: the graph, and the concepts baseline's ood cell of Table 4 placed by comparison with the paper's 6-7B models."
    import json, re
    from cogen_lib.cggc.evaluate import PAPER_TABLE4
    nb = json.loads((summary.parent/'summary.ipynb').read_text())
    md = ''.join(''.join(o['data']['text/markdown']) for c in nb['cells'] if c['id'] == '765ce575' for o in c['outputs'])
    assert 'ours ConceptNet 4 from the data mirror' in md and 'the paper built its graphs from ConceptNet 5' in md
    m = re.search(r'the concepts joined into a sentence score (([\d.]+) \[([\d.]+), ([\d.]+)\]) ROUGE-L, ([^;]+);', md)
    t4 = pd.read_csv(summary/'table4.csv')
    cell = t4[t4.source.str.startswith('baseline: concepts') & (t4.setting == 'ood') & (t4.sets > 1)]
    cell = cell.assign(n=cell['items/seed'] * cell.seeds).sort_values('n', kind='stable')
    assert m[1] == cell['ROUGE-L'].iloc[-1]                                          # Table 4's cell, the most items
    v, lo, hi = map(float, m.group(2, 3, 4))
    p = PAPER_TABLE4[(PAPER_TABLE4.setting == 'ood') & (PAPER_TABLE4.model != 'GPT-4o')]['ROUGE-L']
    words = ('above the ood score of every 6-7B model' if lo > p.max() else 'below the ood score of every' if hi < p.min()
             else 'above the ood score of every 6-7B model' if v > p.max() else f'its mean above {(p < v).sum()} of the {len(p)} 6-7B')
    assert m[5].startswith(words), (m[5], words)
