"""Your model beside ours (issue 51): `cogen run --set` (and `--model`), and `--force` over committed rows, write under
`runs/_yours/` and leave every other file of the project as it was; a run ends with its headline score(s) and the paths
of its rows and figures. On a copy of the toy project (tests/fixtures/toy, no model loaded)."""
import hashlib, shutil, subprocess, sys
from pathlib import Path
import pandas as pd
import yaml

FIX = Path(__file__).resolve().parent/'fixtures'/'toy'
COGEN = str(Path(sys.executable).parent/'cogen')


def _cogen(root: Path, *args) -> list[str]:
    r = subprocess.run([COGEN, 'run', 'toy', '--profile', 'cpu', *args], cwd=root, capture_output=True, text=True,
                       env={**__import__('os').environ, 'COGEN_COMMIT': 'abc1234'})
    assert r.returncode == 0, r.stdout + r.stderr
    return [l for l in r.stdout.splitlines() if l.strip()]


def _ending(lines: list[str]) -> list[str]:
    "The score line(s) and the paths line a run ends with (the table of models across papers may follow them)."
    i = max(i for i, l in enumerate(lines) if l.startswith('toy/cpu: rows: '))
    assert all(l.startswith('models table (cpu): ') for l in lines[i + 1:]), lines
    return lines[i - 1:i + 1]


def _tracked(root: Path) -> dict:
    "Every file of the project outside runs/ (which git ignores), with its hash."
    return {p.relative_to(root): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob('*'))
            if p.is_file() and p.relative_to(root).parts[0] != 'runs'}


def test_your_runs_leave_the_project_untouched(tmp_path):
    root = tmp_path/'proj'; shutil.copytree(FIX, root); (root/'settings.ini').write_text('[DEFAULT]\nlib_name = toy\n')
    g = yaml.safe_load((root/'grids'/'toy.yaml').read_text())
    g['profiles']['cpu'] = [{'model': 'm1', 'seed': 0, 'pause': 0.0}]
    (root/'grids'/'toy.yaml').write_text(yaml.safe_dump({**g, 'summary': 'nbs/summary.ipynb'}))
    ours = _cogen(root)                                             # the grid's own run: committed rows and figures
    assert (root/'figures'/'toy'/'headline.csv').exists() and list((root/'results'/'toy'/'cpu').glob('*.csv')), ours
    score, paths = _ending(ours)
    assert score.startswith('toy/cpu: score: m1: accuracy ') and paths == (
        'toy/cpu: rows: results/toy/; figures: figures/toy/; notebooks: runs/toy/'), ours
    before = _tracked(root)

    mine = _cogen(root, '--set', 'pause=0.01')                      # yours: under runs/_yours/, nothing else written
    assert _tracked(root) == before, mine
    assert mine[0].startswith('your runs write under runs/_yours/'), mine
    yours = root/'runs'/'_yours'
    means = pd.read_csv(yours/'figures'/'toy'/'means.csv')
    assert means.model.tolist() == ['m1', 'm1 (yours: pause=0.01)'], means    # beside ours, named as yours
    score, paths = _ending(mine)
    assert score.startswith('toy/cpu: score: m1 (yours: pause=0.01): accuracy '), mine   # the score of yours
    assert paths == 'toy/cpu: rows: runs/_yours/results/toy/; figures: runs/_yours/figures/toy/; notebooks: runs/_yours/runs/toy/', mine

    again = _cogen(root, '--force')                                 # a re-execution of committed runs: the scratch store
    assert _tracked(root) == before, again
    assert list((yours/'results'/'toy'/'cpu').glob('*.csv')), again
    assert any('--replace` (they re-execute committed runs)' in l for l in again), again
