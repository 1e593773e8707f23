"The runner resumes a grid killed at a random point with exactly the rows of an uninterrupted run, with every executor."
import os, signal, subprocess, sys, time
from pathlib import Path
import numpy as np
import pandas as pd
import pytest
from cogen_lib.grid import load_grid
from cogen_lib.results import collect_results, PROVENANCE_PROFILES
from cogen_lib.runner import run_grid

FIX = Path(__file__).resolve().parent/'fixtures'/'toy'
RUN = ("import sys; from cogen_lib.runner import run_grid; "
       "r = run_grid('toy', 'smoke', root=sys.argv[1], out=sys.argv[2], summary=False, executor=sys.argv[3], workers=int(sys.argv[4])); "
       "sys.exit(1 if r.failed else 0)")
EXECUTORS = [('local', 1), ('local', 2), pytest.param('dask', 2, marks=pytest.mark.skipif(
    __import__('importlib').util.find_spec('distributed') is None, reason='dask.distributed is not installed'))]

def _rows(out: Path) -> pd.DataFrame:
    return collect_results('toy', out).sort_values(['slug', 'metric', 'category'], kind='stable').reset_index(drop=True)

@pytest.fixture(scope='module')
def uninterrupted(tmp_path_factory) -> tuple[pd.DataFrame, float]:
    """The rows of the toy grid run without interruption (one local worker) and its wall time: the reference of every
    executor below, since a grid's rows do not depend on the executor that ran it."""
    slugs = [r.slug for r in load_grid('toy', FIX).runs('smoke')]
    ref, t0 = tmp_path_factory.mktemp('ref'), time.monotonic()
    rep = run_grid('toy', 'smoke', root=FIX, out=ref, summary=False, executor='local', workers=1)
    t_ref = time.monotonic() - t0
    assert len(rep.ran) == len(slugs) and not rep.failed
    expected = _rows(ref)
    assert sorted(expected.slug.unique()) == sorted(slugs)
    return expected, t_ref

@pytest.mark.parametrize('executor,workers', EXECUTORS)
def test_kill_and_resume_equals_uninterrupted(tmp_path, executor, workers, uninterrupted):
    slugs = [r.slug for r in load_grid('toy', FIX).runs('smoke')]
    expected, t_ref = uninterrupted
    t_ref = t_ref / workers                                   # the runs spread over the workers

    # when to kill: a random point inside the grid's measured duration (printed, so a failure can be replayed);
    # the subprocess also spends ~1 s importing before its first run. The speed of a shared machine varies between
    # the reference run and this one: when the grid finished before the kill, try again earlier (at most 4 times).
    rng = np.random.default_rng()
    for attempt in range(4):
        out = tmp_path/f'killed{attempt}'
        args = [sys.executable, '-c', RUN, str(FIX), str(out), executor, str(workers)]
        at = float(rng.uniform(1.0, 1.0 + 0.9 * t_ref / 2 ** attempt)); print(f"SIGKILL after {at:.2f} s of ~{t_ref + 1:.1f} s")
        p = subprocess.Popen(args, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(at)
        os.killpg(p.pid, signal.SIGKILL); p.wait()
        done_before = len(list((out/'results'/'toy').glob('*.csv'))) if (out/'results'/'toy').exists() else 0
        if done_before < len(slugs): break
        print('the grid finished before the kill: again, earlier')
    assert done_before < len(slugs), "the kill came after the grid finished: nothing was interrupted"

    subprocess.run(args, check=True, capture_output=True)
    got = _rows(out)
    pd.testing.assert_frame_equal(got, expected)
    assert not list((out/'results'/'toy').glob('.*')), "a partial result file was left behind"
    # a third invocation finds everything fresh
    rep = run_grid('toy', 'smoke', root=FIX, out=out, summary=False, executor=executor, workers=workers)
    assert rep.ran == [] and len(rep.skipped) == len(slugs), (rep, done_before)

def test_stale_run_is_redone(tmp_path):
    run_grid('toy', 'smoke', root=FIX, out=tmp_path, summary=False)
    victim = sorted((tmp_path/'results'/'toy').glob('*.csv'))[0]
    victim.write_text(victim.read_text().replace('accuracy', 'accuracy', 1) + 'tampered\n')
    rep = run_grid('toy', 'smoke', root=FIX, out=tmp_path, summary=False)
    assert rep.ran == [victim.stem] and len(rep.skipped) == 5

def test_paper_profile_rows_carry_provenance(tmp_path, monkeypatch):
    "Rows of a `paper`-profile run (the GPU path, here on the CPU) carry device, commit and wall seconds; smoke rows do not."
    import shutil, yaml
    assert 'paper' in PROVENANCE_PROFILES
    root = tmp_path/'proj'; shutil.copytree(FIX, root)
    g = yaml.safe_load((root/'grids'/'toy.yaml').read_text())
    g['profiles']['paper'] = [{'model': 'm1', 'seed': [0, 1], 'pause': 0.0}]
    (root/'grids'/'toy.yaml').write_text(yaml.safe_dump(g))
    monkeypatch.setenv('COGEN_COMMIT', 'abc1234')
    rep = run_grid('toy', 'paper', root=root, out=tmp_path/'out', summary=False, executor='local', workers=2)
    assert len(rep.ran) == 2 and not rep.failed
    rows = collect_results('toy', tmp_path/'out')
    assert set(rows.commit) == {'abc1234'} and rows.device.str.len().min() > 0
    assert (rows.wall_seconds > 0).all() and rows.groupby('slug').wall_seconds.nunique().eq(1).all()
    rep = run_grid('toy', 'paper', root=root, out=tmp_path/'out', summary=False)
    assert rep.ran == [] and len(rep.skipped) == 2            # provenance does not make a finished run stale
    run_grid('toy', 'smoke', root=root, out=tmp_path/'smoke', summary=False)
    assert not {'device', 'commit', 'wall_seconds'} & set(collect_results('toy', tmp_path/'smoke').columns)


def _spans_project(tmp_path, entry: dict, ends: bool):
    """A copy of the toy project whose runs append `<seed> <split> <start>` (and `<end>` when `ends`) to a log, with
    `eval_keys: [split]` and `entry` (written in its order) as the smoke profile; returns (root, log)."""
    import json, shutil, yaml
    root, log = tmp_path/'proj', tmp_path/'spans.txt'
    shutil.copytree(FIX, root)
    nb = json.loads((root/'nbs'/'toy.ipynb').read_text())
    nb['cells'][1]['source'] += "\nspan_log: str = ''  # file each run appends its seed, split, start (and end) to\n"
    end = " {time.time()}" if ends else ''
    say = "with open(span_log, 'a') as f: f.write(f'{seed} {split} {t0}" + end + "\\n')\n"
    body = ''.join(nb['cells'][2]['source'])
    nb['cells'][2]['source'] = ("import time\nt0 = time.time()\n" + body + '\n' + say if ends
                                else "import time\nt0 = time.time()\n" + say + body)
    (root/'nbs'/'toy.ipynb').write_text(json.dumps(nb))
    g = yaml.safe_load((root/'grids'/'toy.yaml').read_text())
    g['eval_keys'] = ['split']
    g['profiles']['smoke'] = [{**entry, 'span_log': str(log)}]
    (root/'grids'/'toy.yaml').write_text(yaml.safe_dump(g, sort_keys=False))
    return root, log

def test_runs_of_one_training_run_in_turn(tmp_path):
    """Runs that differ only in the grid's `eval_keys` share one training: with two workers they never run at once
    (the second would find the training held), and the first listed runs first; runs of other trainings do overlap."""
    root, log = _spans_project(tmp_path, {'model': 'm1', 'seed': [0, 1], 'split': ['dev', 'test'], 'pause': 1.0},
                               ends=True)
    rep = run_grid('toy', 'smoke', root=root, out=tmp_path/'out', summary=False, executor='local', workers=2)
    assert len(rep.ran) == 4 and not rep.failed
    lines = (l.split() for l in log.read_text().splitlines())
    span = {(int(s), split): (float(a), float(b)) for s, split, a, b in lines}
    for seed in (0, 1):                                       # one training's runs: dev, then test, never at once
        assert span[seed, 'dev'][1] <= span[seed, 'test'][0], span
    assert span[0, 'dev'][0] < span[1, 'dev'][1] and span[1, 'dev'][0] < span[0, 'dev'][1], span   # trainings overlap

def test_a_training_whose_first_run_is_done_goes_first(tmp_path):
    """A training whose first run finished earlier (its model trained) is resumed before trainings not started, even
    when the grid lists a run of a new training before its remaining runs."""
    root, log = _spans_project(tmp_path, {'model': 'm1', 'split': ['dev', 'test'], 'seed': [0, 1]}, ends=False)
    out = tmp_path/'out'                                                      # split outer, seed inner
    run_grid('toy', 'smoke', root=root, out=out, summary=False)
    keep = load_grid('toy', root).runs('smoke')[0].slug                       # seed 0, dev: the training's first run
    for f in (out/'results'/'toy').glob('*.csv'):
        if not f.name.startswith(keep): f.unlink()
    log.unlink()
    rep = run_grid('toy', 'smoke', root=root, out=out, summary=False)
    assert len(rep.ran) == 3 and rep.skipped == [keep]
    order = [tuple(l.split()[:2]) for l in log.read_text().splitlines()]
    assert order == [('0', 'test'), ('1', 'dev'), ('1', 'test')], order
