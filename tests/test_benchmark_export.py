"""`cogen export`: lm-evaluation-harness (the extra `eval`; lm-eval pinned in requirements.txt) runs our exported tasks offline with
the local smollm2 folder, and the metrics it prints equal cogen's own scoring of the same predictions; the `hf` format
round-trips through `datasets` (the extra `hf`), read from the export folder itself. Both papers' tasks (4 examples each) run in one `lm_eval` invocation, about a minute on a
quiet 2-core machine."""
import json, os, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
OFFLINE = {'HF_HUB_OFFLINE': '1', 'HF_DATASETS_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1'}


def _cogen(*args, cwd=ROOT):
    r = subprocess.run([str(BIN/'cogen'), *args], capture_output=True, text=True, cwd=cwd, env={**os.environ, **OFFLINE})
    assert r.returncode == 0, r.stdout + r.stderr
    return r


TASKS = {'cogen_groundcocoa_test': ('cocoa', []),
         'cogen_cogs_gen': ('recogs', ['--option', 'variant=cogs', '--option', 'max_gen_toks=48'])}


@pytest.fixture(scope='module')
def lm_eval_run(tmp_path_factory) -> tuple[Path, str, dict, dict]:
    """Both papers exported (4 examples each) into one include path and run by ONE `lm_eval run` with the local smollm2
    folder (a run pays lm-eval's start-up and model load once): (tasks folder, printed table, results and samples per task)."""
    if not (BIN/'lm_eval').exists(): pytest.skip("lm-eval is not installed: pip install 'cogen_lib[eval]' (or make install)")
    from cogen_lib.models import converted_dir, model_spec
    tmp = tmp_path_factory.mktemp('lmeval'); tasks, out = tmp/'tasks', tmp/'out'
    for paper, opts in TASKS.values(): _cogen('export', paper, '--format', 'lm-eval', '--out', str(tasks/paper), '--limit', '4', *opts)
    folder = converted_dir(model_spec('smollm2-135m'))
    r = subprocess.run([str(BIN/'lm_eval'), 'run', '--model', 'hf', '--model_args', f'pretrained={folder}', '--include_path', str(tasks),
                        '--tasks', *TASKS, '--limit', '4', '--device', 'cpu', '--output_path', str(out), '--log_samples'],
                       capture_output=True, text=True, cwd=tmp, env={**os.environ, **OFFLINE})
    assert r.returncode == 0, r.stderr[-4000:]
    results = json.loads(next(out.rglob('results_*.json')).read_text())['results']
    samples = {t: [json.loads(l) for l in next(out.rglob(f'samples_{t}_*.jsonl')).read_text().splitlines()] for t in TASKS}
    assert all(len(v) == 4 for v in samples.values()), {t: len(v) for t, v in samples.items()}
    return tasks, r.stdout, results, samples


def _printed(table: str, metric: str) -> float:
    "The value lm-eval's printed table gives for `metric` (its rows: |task|version|filter|n-shot|metric|dir|value|...)."
    for line in table.splitlines():
        cells = [c.strip() for c in line.split('|')]
        if metric in cells: return float(cells[cells.index(metric) + 2])
    raise AssertionError(f"no {metric} line in:\n{table}")


def test_lmeval_groundcocoa(lm_eval_run):
    tasks, table, results, samples = lm_eval_run
    res, samples = results['cogen_groundcocoa_test'], samples['cogen_groundcocoa_test']
    # cogen's scoring of the same predictions: the most likely continuation, against gold
    ll = [[float(r[0]) for r in s['filtered_resps']] for s in samples]
    ours = sum(int(max(range(5), key=lambda i: l[i]) == s['doc']['gold']) for l, s in zip(ll, samples)) / 4
    assert res['acc,none'] == pytest.approx(ours) and _printed(table, 'acc') == pytest.approx(ours, abs=1e-4)
    # and the decisions equal cogen's own loglik scoring of the same prompts with the same model
    from cogen_lib.models import load_lm
    lm = load_lm('smollm2-135m')
    for l, s in zip(ll, samples):
        sc = lm.score_options([s['doc']['prompt']] * 5, s['doc']['choices'], chat=False)
        assert max(range(5), key=lambda i: sc[i]) == max(range(5), key=lambda i: l[i]), (sc, l)
    ds = json.loads((tasks/'cocoa'/'datasheet.json').read_text())
    assert ds['counts'] == {'test': 4} and ds['sources'] and all(len(h) == 64 for h in ds['files'].values())


def test_lmeval_recogs(lm_eval_run):
    tasks, table, results, samples = lm_eval_run
    res, samples = results['cogen_cogs_gen'], samples['cogen_cogs_gen']
    from cogen_lib.recogs.sem import sem
    preds = [s['filtered_resps'][0].strip().split('\n')[0].strip() for s in samples]
    golds = [' '.join(s['doc']['target'].split()) for s in samples]
    ours_sem = sum(bool(sem(p, g)) for p, g in zip(preds, golds)) / 4
    ours_em = sum(' '.join(p.split()) == g for p, g in zip(preds, golds)) / 4
    assert (res['sem,none'], res['exact_match,none']) == (pytest.approx(ours_sem), pytest.approx(ours_em))
    assert _printed(table, 'sem') == pytest.approx(ours_sem, abs=1e-4)


def test_hf_round_trip(tmp_path):
    datasets = pytest.importorskip('datasets', reason="--format hf needs the extra hf: pip install 'cogen_lib[hf]'")
    _cogen('export', 'cocoa', '--format', 'hf', '--out', str(tmp_path/'hf'), '--limit', '3')
    _cogen('export', 'cocoa', '--format', 'jsonl', '--out', str(tmp_path/'jl'), '--limit', '3')
    back = datasets.load_from_disk(str(tmp_path/'hf'))['test'].to_list()     # the --out folder itself is the dataset
    assert back == [json.loads(l) for l in (tmp_path/'jl'/'cogen_groundcocoa_test.jsonl').read_text().splitlines()]
    again = tmp_path/'jl2'; _cogen('export', 'cocoa', '--format', 'jsonl', '--out', str(again), '--limit', '3')
    assert (again/'cogen_groundcocoa_test.jsonl').read_bytes() == (tmp_path/'jl'/'cogen_groundcocoa_test.jsonl').read_bytes()   # same seed, same bytes
