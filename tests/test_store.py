"""The committed store of expensive runs, on a toy grid (tests/fixtures/store): a finished `cpu` or `long` run writes
its rows and per-item file into results/<paper>/<profile>/ with provenance; `cogen run` then uses them and says so,
`--force` executes them again; summaries show the other committed profiles beside their own; `cogen verify`
re-executes a seeded sample and passes, then fails naming the row when a committed value is altered; `--set` and
`--model` make runs of their own, fresh and resumable, never committed."""
import json, shutil
from pathlib import Path
import pandas as pd
import pytest
from typer.testing import CliRunner
from cogen_lib.cli import app
from cogen_lib.core import CogenError
from cogen_lib.grid import load_grid, RunFiles
from cogen_lib.results import committed_dir, VERIFY_RULE, MANIFEST_NAME, read_manifest, write_manifest, committed_files
from cogen_lib.runner import run_grid, verify_committed, plan_runs, NotApplicable

FIX = Path(__file__).resolve().parent/'fixtures'/'store'


@pytest.fixture
def proj(tmp_path, monkeypatch) -> Path:
    "A copy of the toy project that `project_root()` finds (settings.ini and nbs/), as the working directory."
    p = tmp_path/'proj'; shutil.copytree(FIX, p)
    (p/'settings.ini').write_text('[DEFAULT]\nlib_name = store\n')
    monkeypatch.chdir(p); monkeypatch.setenv('COGEN_COMMIT', 'abc1234')
    return p


def _csv(p: Path) -> pd.DataFrame:
    return pd.read_csv(p, keep_default_na=False, na_values=[''])


def test_store_commit_reuse_force_verify(proj, capsys):
    slugs = [r.slug for r in load_grid('store', proj).runs('cpu')]
    cdir = committed_dir('store', 'cpu', proj)
    rep = run_grid('store', 'cpu', root=proj, summary=False)
    assert rep.ran == slugs and not rep.failed
    # 1. the finished runs wrote their rows and items into the store, with provenance (torch threads: a `threads` parameter)
    assert sorted(p.name for p in cdir.iterdir()) == sorted([f'{s}.csv' for s in slugs] + [f'{s}.items.csv.gz' for s in slugs] + [MANIFEST_NAME])
    assert sorted(read_manifest(cdir)) == sorted(p.name for p in committed_files(cdir))    # each file recorded: rows, sha256
    rows = _csv(cdir/f'{slugs[0]}.csv')
    assert set(rows.commit) == {'abc1234'} and rows.device.str.len().min() > 0 and (rows.wall_seconds > 0).all()
    assert set(rows.torch_threads) == {1}
    assert (cdir/f'{slugs[0]}.csv').read_bytes() == RunFiles(proj, 'store', slugs[0]).results.read_bytes()
    assert 'finished run(s) wrote their rows to results/store/cpu/: commit them' in capsys.readouterr().out

    # 2. the next invocation uses them and says so in one line (how many, from where, device); --force executes them
    msgs = []
    rep = run_grid('store', 'cpu', root=proj, summary=False, log=msgs.append)
    assert rep.reused == slugs and rep.ran == []
    line = [m for m in msgs if 'use the rows committed' in m]
    assert len(line) == 1 and line[0].startswith('store/cpu: 2 of 2 run(s) use the rows committed in results/store/cpu/ (device: cpu')
    assert 'not executed here (--force executes them again)' in line[0]
    rep = run_grid('store', 'cpu', root=proj, summary=False, force=True, log=msgs.append)
    assert rep.ran == slugs and rep.reused == []

    # 3. verify: the seeded draw re-executes one run and finds its rows and items identical (timing and cache metrics aside)
    rec = verify_committed('store', 'cpu', runs=1, seed=0, root=proj, log=msgs.append)
    assert rec['ok'] and rec['differences'] == [] and rec['rule'] == VERIFY_RULE
    (checked,) = rec['checked']
    assert checked['slug'] in slugs and checked['items_compared'] and checked['committed_commit'] == 'abc1234'
    saved = json.loads((cdir/'VERIFIED.json').read_text())
    from cogen_lib.site import verified_line                                          # the site reads the record as written
    assert verified_line('store', 'cpu', 2, saved).endswith('re-executing 1 run: **identical rows**.'), verified_line('store', 'cpu', 2, saved)
    assert saved == rec and set(saved) >= {'when', 'commit', 'device', 'checked', 'ok', 'differences', 'seed', 'command'}
    import cogen_lib.committed as C                      # the re-executed run's progress reaches the terminal as it works
    beats, real = [], C.heartbeat
    C.heartbeat = lambda folder, log, **kw: beats.append((sorted(kw['names']), log)) or real(folder, log, **kw)
    try: assert verify_committed('store', 'cpu', runs=1, seed=0, root=proj, log=msgs.append)['checked'][0]['slug'] == checked['slug']
    finally: C.heartbeat = real
    assert len(beats) == 1 and len(beats[0][0]) == 1 and beats[0][1] == msgs.append, beats

    # 4. one committed value altered: verify fails and names the run, metric, row, column and both values
    victim = cdir/f"{checked['slug']}.csv"
    df = _csv(victim); i = df.index[(df.metric == 'accuracy') & (df.category == 'b')][0]
    true_value = df.loc[i, 'value']; df.loc[i, 'value'] = 0.015625; df.to_csv(victim, index=False)
    with pytest.raises(CogenError, match='truncated or edited'):          # not the file its manifest records: refused
        verify_committed('store', 'cpu', runs=1, seed=0, root=proj, log=msgs.append)
    write_manifest(cdir, [victim.name])                                  # as if committed so
    msgs = []
    rec = verify_committed('store', 'cpu', runs=1, seed=0, root=proj, out=proj/'verify-out', log=msgs.append)
    assert not rec['ok']
    assert rec['differences'] == [dict(slug=checked['slug'], file='rows', metric='accuracy', row='split=dev, category=b', index=1,
                                       column='value', committed=0.015625, new=true_value)]
    assert any(m.startswith(f"  {checked['slug']} | rows | metric=accuracy | split=dev, category=b | value: committed 0.015625, new ") for m in msgs), msgs
    assert json.loads((cdir/'VERIFIED.json').read_text())['ok'] is False

    # ... and through the command: exit status 1, the differing row printed, the rule printed
    res = CliRunner().invoke(app, ['verify', 'store', '--profile', 'cpu', '--runs', '2', '--seed', '3', '--out', str(proj/'verify-cli')])
    assert res.exit_code == 1, res.output
    assert f"DIFFERS {checked['slug']}: 1 difference(s)" in res.output and 'split=dev, category=b | value' in res.output
    assert VERIFY_RULE in res.output and 'FAILED: 1 of 2 run(s) identical' in res.output
    # 5. a per-item file altered: the differing item is named
    df.loc[i, 'value'] = true_value; df.to_csv(victim, index=False)
    items = cdir/f"{checked['slug']}.items.csv.gz"
    it = pd.read_csv(items); it.loc[3, 'correct'] = 1 - it.loc[3, 'correct']; it.to_csv(items, index=False)
    write_manifest(cdir, [victim.name, items.name])
    rec = verify_committed('store', 'cpu', runs=1, seed=0, root=proj, out=proj/'verify-out2', log=msgs.append)
    assert [(d['file'], d['row'], d['column']) for d in rec['differences']] == [('items', 'item=a-3', 'correct')]


def test_summaries_show_other_committed_profiles(proj):
    "A summary of `cpu` shows the committed `long` rows beside its own, labelled with their profile."
    run_grid('store', 'long', root=proj, summary=False)
    msgs = []
    rep = run_grid('store', 'cpu', root=proj, log=msgs.append)
    assert not rep.failed
    assert any("the summaries also show the 1 committed 'long' run(s) in results/store/long/" in m for m in msgs), msgs
    means = pd.read_csv(proj/'figures'/'store'/'means.csv')
    assert means[['profile', 'model', 'runs']].values.tolist() == [['cpu', 'small', 1], ['cpu', 'tiny', 1], ['long', 'tiny', 1]]


def test_set_and_model_make_runs_of_their_own(proj):
    grid = load_grid('store', proj)
    ours = [r.slug for r in grid.runs('cpu')]
    msgs = []
    rep = run_grid('store', 'cpu', root=proj, summary=False, sets=['n=8'], models=['small'], log=msgs.append)
    (slug,) = rep.ran                                                   # --model selects the `small` architecture
    assert slug not in ours and not rep.failed
    rows = pd.read_csv(RunFiles(proj/'runs'/'_yours', 'store', slug).results)   # your runs write beside ours, never into them
    assert not RunFiles(proj, 'store', slug).results.exists()
    assert set(rows.model) == {'small'} and set(rows.loc[rows.metric == 'accuracy', 'n']) == {8}
    assert not committed_dir('store', 'cpu', proj).exists()             # not a run of the grid: never committed
    assert any('not committed (only the runs of grids/store.yaml are)' in m for m in msgs), msgs
    rep = run_grid('store', 'cpu', root=proj, summary=False, sets=['n=8'], models=['small'], log=msgs.append)
    assert rep.skipped == [slug] and rep.ran == []                      # fresh, like any run
    with pytest.raises(NotApplicable, match="no parameter 'no_such_key'; nbs/store.ipynb declares"):
        plan_runs(grid, 'cpu', proj, sets=['no_such_key=1'])
    with pytest.raises(CogenError, match="'abc' is not an int; nbs/store.ipynb declares \\(name: type = default\\): model: str = 'tiny', seed: int = 0"):
        plan_runs(grid, 'cpu', proj, sets=['n=abc'])
    with pytest.raises(NotApplicable, match=r"store trains its models from scratch, so its `model` parameter chooses an architecture \(small, tiny\)"):
        plan_runs(grid, 'cpu', proj, models=['gemma3-270m'])


def test_committed_runs_nothing(proj):
    """`cogen run --committed` (what `make site` does on a fresh clone): the summary reads the committed rows of every
    profile, no run executes, and the runs without rows are listed; a profile whose rows are never committed is refused."""
    run_grid('store', 'long', root=proj, summary=False)                 # commits the `long` run; `cpu` has no rows
    r = CliRunner().invoke(app, ['run', 'store', '--profile', 'cpu', '--committed'])
    assert r.exit_code == 0, r.output
    assert 'store/cpu: 2 of 2 run(s) have no committed rows in results/store/cpu/ and no fresh rows here' in r.output, r.output
    assert 'ran 0, skipped 0 (fresh), not executed 2 (no rows here; --committed), failed 0' in r.output, r.output
    assert not committed_dir('store', 'cpu', proj).exists()
    means = pd.read_csv(proj/'figures'/'store'/'means.csv')             # the summary ran, over the committed `long` rows only
    assert means[['profile', 'model', 'runs']].values.tolist() == [['long', 'tiny', 1]]
    r = CliRunner().invoke(app, ['run', 'store', '--profile', 'smoke', '--committed'])
    assert r.exit_code == 1 and "'smoke' rows are never committed" in r.output and 'Traceback' not in r.output, r.output
