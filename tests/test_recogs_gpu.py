"""bench/recogs_gpu.py, the one-call GPU script of the ReCOGS `long` runs: its phases select the grid's 10-epoch runs, a
phase past its deadline is stopped, and a CPU dry run of a tiny grid leaves rows that `cogen results import` takes."""
import importlib.util, json, os, shutil, signal, subprocess, sys, tarfile, time
from pathlib import Path
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT/'bench'/'recogs_gpu.py'

def load_script():
    spec = importlib.util.spec_from_file_location('recogs_gpu', SCRIPT)
    mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
    return mod

G = load_script()


def test_phases_select_the_grids_ten_epoch_runs():
    from cogen_lib.grid import load_grid
    from cogen_lib.runner import select_runs
    runs = load_grid('recogs', ROOT).runs('long')
    (_, greedy), (_, distinct), *comparators = G.phases('recogs-v2', 10, ['cogs', 'recogs-pos'])
    sel = {d: select_runs(runs, only, 'recogs') for d, only in (('greedy', greedy), ('distinct-indices', distinct))}
    for d, rs in sel.items():
        assert sorted(r.value('seed') for r in rs) == [0, 1, 2], d
        assert {(r.value('epochs'), r.value('variant'), r.value('decoding'), r.value('hidden'), r.value('train_limit'),
                 r.value('eval_limit')) for r in rs} == {(10, 'recogs-v2', d, 128, 0, 0)}
    # the two decodings share each seed's training settings (one checkpoint per seed), and nothing but decoding differs
    strip = lambda r: {k: v for k, v in r.params.items() if k != 'decoding'}
    same = lambda d: sorted(json.dumps(strip(r), sort_keys=True) for r in sel[d])
    assert same('greedy') == same('distinct-indices')
    # the 3-epoch runs (committed rows) stay in the grid, apart
    assert len(select_runs(runs, ['variant=recogs-v2', 'epochs=3'], 'recogs')) == 6
    assert [len(select_runs(runs, only, 'recogs')) for _, only in comparators] == [3, 3]
    # the comparators at the same epochs (the budget matched by epochs), not the committed 17-epoch rows
    assert {r.value('epochs') for _, only in comparators for r in select_runs(runs, only, 'recogs')} == {10}


def test_every_kit_wheel_is_pinned():
    pinned = G.pins(ROOT)
    assert list(pinned) == list(G.KIT) and all(pinned.values()), [k for k, v in pinned.items() if not v]


def test_a_phase_past_its_deadline_is_stopped_with_ctrl_c():
    lines, env = [], dict(os.environ)
    def run(code, secs, grace=10):
        return G.run_until([sys.executable, '-c', code], env, time.monotonic() + secs, lines.append, grace)
    t0 = time.monotonic()
    code = ("import time, sys\nprint('started', flush=True)\n"
            "try: time.sleep(60)\nexcept KeyboardInterrupt: print('ctrl-c'); sys.exit(130)")
    assert run(code, 2) == 'stopped'
    assert time.monotonic() - t0 < 10 and lines[0] == 'started' and 'ctrl-c' in lines
    # one that ignores Ctrl-C is killed after the grace period
    t0 = time.monotonic()
    deaf = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\ntime.sleep(60)"
    assert run(deaf, 1, grace=1) == 'stopped'
    assert time.monotonic() - t0 < 10 and any('killed' in l for l in lines)
    assert run('raise SystemExit(1)', 30) == 'failed' and run('pass', 30) == 'done'


TINY = """paper: recogs
notebook: nbs/recogs/experiment.ipynb
name_keys: [model, variant]
model_kind: architecture
profiles:
  long:
    - {variant: cogs, model: transformer, seed: 0, hidden: 16, train_limit: 12, epochs: 1, lr: 0.001, batch_size: 4,
       eval_limit: 1, max_len: 12, threads: 1}
    - {variant: cogs, model: transformer, seed: 0, hidden: 16, train_limit: 12, epochs: 1, lr: 0.001, batch_size: 4,
       eval_limit: 1, max_len: 12, threads: 1, decoding: distinct-indices}
"""

def test_cpu_dry_run_rows_import(tmp_path):
    "The script end to end on the CPU: a tiny grid's two `long` runs, packed, unpacked and imported into the project."
    proj = tmp_path/'proj'
    (proj/'nbs'/'recogs').mkdir(parents=True); (proj/'grids').mkdir()
    (proj/'settings.ini').write_text('[DEFAULT]\n')
    shutil.copy(ROOT/'nbs'/'recogs'/'experiment.ipynb', proj/'nbs'/'recogs'/'experiment.ipynb')
    (proj/'grids'/'recogs.yaml').write_text(TINY)
    kit = tmp_path/'kit'; G.prepare_mirror(kit)                      # the COGS files as the device gets them
    out, work = tmp_path/'OUT', tmp_path/'work'
    env = {**os.environ, 'CUDA_VISIBLE_DEVICES': '', 'COGEN_HEARTBEAT': '0'}
    env.pop('COGEN_MIRROR', None); env.pop('COGEN_CACHE', None)      # the kit's mirror, the work folder's cache
    args = ['--kit', kit, '--out', out, '--work', work, '--root', proj, '--commit', 'dryrun0000', '--variant', 'cogs',
            '--epochs', 1, '--comparators', '--workers', 1, '--limit', 400, '--reserve', 10, '--min-phase', 5]
    r = subprocess.run([sys.executable, str(SCRIPT), *map(str, args)], env=env, capture_output=True, text=True,
                       timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert 'computes on cpu' in r.stdout, r.stdout[-3000:]
    assert r.stdout.count(': done after') == 2, r.stdout[-3000:]     # both phases ran to their end
    # nothing was stopped, so no checkpoint came back
    assert sorted(p.name for p in out.iterdir()) == ['recogs_gpu.log', 'recogs_long.tar.gz']
    src = tmp_path/'back'
    with tarfile.open(out/'recogs_long.tar.gz') as t: t.extractall(src, filter='data')
    from cogen_lib.runner import import_results
    files = import_results('recogs', src, 'long', root=proj, log=lambda s: None)
    csvs = [f for f in files if f.name.endswith('.csv')]
    assert len(csvs) == 2 and len(files) == 4                        # two runs, each with its per-item file
    for f in csvs:
        df = pd.read_csv(f, keep_default_na=False, na_values=[''])
        assert (df.commit == 'dryrun0000').all() and df.device.str.startswith('cpu').all()
        assert (df.wall_seconds > 0).all()
        assert set(df.split) == {'dev', 'test', 'gen', 'train'} and df.torch_threads.eq(1).all()
    assert {'decoding=distinct-indices' in f.name for f in csvs} == {True, False}
    # importing again finds nothing new; a run whose file was changed after it finished is refused
    assert import_results('recogs', src, 'long', root=proj, log=lambda s: None) == []
    shutil.rmtree(proj/'results'/'recogs'/'long')
    victim = sorted((src/'results'/'recogs').glob('*.csv'))[0]
    victim.write_text(victim.read_text().replace('dryrun0000', 'edited0000'))
    from cogen_lib.core import CogenError
    with pytest.raises(CogenError, match='does not record a finished'): import_results('recogs', src, 'long', root=proj)
    # a stopped call brings its checkpoints back; a call with them in its kit resumes from them
    cks = G.bring_back_checkpoints(work/'cache', tmp_path, print)
    assert len(cks) == 1 and cks[0].stat().st_size < G.MAX_FILE
    (kit/'checkpoints').mkdir(); shutil.move(cks[0], kit/'checkpoints'/cks[0].name)
    G.install_kit(kit, tmp_path/'fresh', print)
    old, new = (sorted(p.relative_to(c) for p in c.rglob('last.pt')) for c in (work/'cache', tmp_path/'fresh'/'cache'))
    assert len(new) == 1 and new == old
