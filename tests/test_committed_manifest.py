"""Committed rows that detect damage: every committed folder of the repository has a `MANIFEST.tsv` matching its files,
and a committed result file truncated (at a line boundary or mid-line), edited or missing makes `cogen run <paper>
--profile cpu --committed` and `cogen verify` exit 1 with one line naming the file and the remedy, before any work.

The CLI cases run as real `cogen` processes in a scratch project: the repository's `nbs/`, `grids/` and `data/` linked,
a copy of the quickstart's committed `cpu` rows (so the repository's own rows are never touched)."""
import os, shutil, subprocess, sys
from pathlib import Path

import pytest

from cogen_lib.results import MANIFEST_NAME, check_committed, committed_files, read_manifest

ROOT = Path(__file__).resolve().parents[1]
COGEN = Path(sys.executable).parent/'cogen'
FOLDERS = sorted(d for d in (ROOT/'results').glob('*/*') if d.is_dir() and committed_files(d))


def test_there_are_committed_folders():
    assert len(FOLDERS) >= 9


@pytest.mark.parametrize('folder', FOLDERS, ids=[str(d.relative_to(ROOT/'results')) for d in FOLDERS])
def test_committed_folder_matches_its_manifest(folder):
    "A committed file added without its line, or changed since, fails here (and so in CI) as it would on reading."
    man = read_manifest(folder)
    assert man is not None, f"{folder/MANIFEST_NAME} is missing: write it with cogen_lib.results.write_manifest('{folder}')"
    assert sorted(man) == [p.name for p in committed_files(folder)]
    check_committed(folder)


@pytest.fixture
def project(tmp_path):
    "A scratch project whose quickstart cpu rows are a copy of the committed ones, with their manifest."
    proj = tmp_path/'proj'; proj.mkdir()
    shutil.copy(ROOT/'settings.ini', proj/'settings.ini')
    for d in ('nbs', 'grids', 'data'): (proj/d).symlink_to(ROOT/d, target_is_directory=True)
    shutil.copytree(ROOT/'results'/'quickstart'/'cpu', proj/'results'/'quickstart'/'cpu',
                    ignore=shutil.ignore_patterns('.*', 'VERIFIED.json'))
    return proj


def cogen(proj: Path, *args) -> subprocess.CompletedProcess:
    env = {**os.environ, 'COGEN_CACHE': str(proj/'cache')}
    return subprocess.run([str(COGEN), *args], cwd=proj, env=env, capture_output=True, text=True, timeout=300)


def damage(f: Path, how: str):
    text = f.read_text()
    if how == 'truncated': f.write_text(''.join(text.splitlines(keepends=True)[:3]))       # 16 rows -> 2, at a line boundary
    elif how == 'cut-mid-line': f.write_text(text[:len(text) // 2])
    elif how == 'edited': f.write_text(text.replace('exact_match,0.0,', 'exact_match,0.5,', 1))
    elif how == 'missing': f.unlink()


def check_refused(out: str, code: int, victim: Path, project: Path):
    assert code == 1, out
    assert f'committed file {victim}:' in out or f'committed file {victim.relative_to(project)}:' in out, out
    assert 'git checkout -- ' in out and 'Traceback' not in out, out


@pytest.mark.parametrize('how', ['truncated', 'cut-mid-line', 'edited', 'missing'])
def test_damaged_committed_file_is_refused(project, how, monkeypatch):
    "In-process (typer's CliRunner), the commands `make site` and `cogen verify` run."
    from typer.testing import CliRunner
    from cogen_lib.cli import app
    monkeypatch.chdir(project); monkeypatch.setenv('COGEN_CACHE', str(project/'cache'))
    victim = sorted((project/'results'/'quickstart'/'cpu').glob('*.csv'))[0]
    damage(victim, how)
    for args in (['run', 'quickstart', '--profile', 'cpu', '--committed', '--out', str(project/'out')],
                 ['verify', 'quickstart', '--profile', 'cpu', '--runs', '1']):
        r = CliRunner().invoke(app, args)
        check_refused(r.output, r.exit_code, victim, project)
    assert not (project/'out'/'figures').exists()                      # no summary ran


def test_truncated_committed_file_real_process(project):
    "The issue's case as a user meets it: 16 rows cut to 2 at a line boundary, `cogen run --committed` in a real process."
    victim = sorted((project/'results'/'quickstart'/'cpu').glob('*.csv'))[0]
    damage(victim, 'truncated')
    r = cogen(project, 'run', 'quickstart', '--profile', 'cpu', '--committed', '--out', str(project/'out'))
    check_refused(r.stdout + r.stderr, r.returncode, victim, project)
    assert 'holds 2 row(s) and not the sha256 of the 16 row(s)' in r.stdout + r.stderr, r.stdout + r.stderr


def test_unlisted_committed_file_is_refused(project, monkeypatch):
    from typer.testing import CliRunner
    from cogen_lib.cli import app
    monkeypatch.chdir(project)
    cdir = project/'results'/'quickstart'/'cpu'
    extra = cdir/'model=x_seed=0-00000000.csv'
    shutil.copy(sorted(cdir.glob('*.csv'))[0], extra)
    r = CliRunner().invoke(app, ['run', 'quickstart', '--profile', 'cpu', '--committed', '--out', str(project/'out')])
    assert r.exit_code == 1 and f'committed file {extra}: not listed in' in r.output, r.output
