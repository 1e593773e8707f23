"""A grid file is input too (issue #40): a user editing `grids/<paper>.yaml` who makes a mistake gets, before anything
runs, one `error:` line naming the file, the line and the key, and the remedy; never a traceback, never a run page
that was not written.

Each mistake is written into a toy project of its own (settings.ini, nbs/toy.ipynb with a tagged `parameters` cell,
grids/toy.yaml) and `cogen run toy --profile smoke` runs there as a real process; `cogen verify` and `cogen results
import` read grids through the same `load_grid` and are checked in-process (typer's CliRunner), with the work they
would do forbidden. A misspelled paper name is refused before the runner (papermill, pandas) is imported: well under a
second on a quiet machine."""
import json, os, subprocess, sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cogen_lib.cli import app
from cogen_lib.grid import load_grid, list_papers, notebook_parameters, Parameter

ROOT = Path(__file__).resolve().parents[1]
COGEN = Path(sys.executable).parent/'cogen'

PARAMS = ("model: str = 'toy'  # a name only\n"
          "n_examples: int = 4  # how many examples\n"
          "lr: float = 0.001  # a learning rate\n"
          "seed: int = 0  # seeds the values\n"
          "results_path: str = ''  # set by the runner\n")
DECLARES = "nbs/toy.ipynb declares (name: type = default): model: str = 'toy', n_examples: int = 4, lr: float = 0.001, seed: int = 0"
GOOD = ("paper: toy\n"
        "notebook: nbs/toy.ipynb\n"
        "profiles:\n"
        "  smoke:\n"
        "    - {model: m1, n_examples: 4, seed: [0, 1]}\n"
        "  cpu:\n"
        "    - {model: [m1, m2], n_examples: 8, lr: 0.0005, seed: 0}\n")

# (id, the grid as the user left it (str, or bytes), what the error line must say after `error: grid <file> `)
MISTAKES = [
    # 1. a YAML syntax error: YAML's own description, with the line
    ('yaml-syntax', GOOD.replace('seed: [0, 1]}', 'seed: [0, 1}'),
     "line 5: not valid YAML: expected ',' or ']', but got '}' at column 45 (while parsing a flow sequence)"),
    ('yaml-tab', GOOD.replace('  cpu:', '\tcpu:'), "line 6: not valid YAML: found character '\\t' that cannot start any token"),
    # 2. a value of the wrong type, against the notebook's parameters cell
    ('wrong-type', GOOD.replace('n_examples: 4', 'n_examples: four'), f"line 5: profiles.smoke[0].n_examples: 'four' is not an int; {DECLARES}"),
    ('wrong-type-in-list', GOOD.replace('seed: [0, 1]', 'seed: [0, one]'), "line 5: profiles.smoke[0].seed[1]: 'one' is not an int"),
    ('bool-for-int', GOOD.replace('n_examples: 4', 'n_examples: yes'), 'line 5: profiles.smoke[0].n_examples: True is not an int'),
    ('float-as-text', GOOD.replace('lr: 0.0005', 'lr: 5e-4'), "line 7: profiles.cpu[0].lr: '5e-4' is not a float: YAML reads it as text; write 0.0005"),
    ('number-for-str', GOOD.replace('model: m1,', 'model: 135,'), 'line 5: profiles.smoke[0].model: 135 is not a str: quote it'),
    # 3. an unknown key, in the profile that runs or in another one
    ('unknown-key', GOOD.replace('n_examples: 4', 'n_exampels: 4'),
     f"line 5: profiles.smoke[0].n_exampels: no parameter 'n_exampels' (did you mean 'n_examples'?); {DECLARES}"),
    ('unknown-key-other-profile', GOOD.replace('lr: 0.0005', 'learning_rate: 0.0005'), "line 7: profiles.cpu[0].learning_rate: no parameter 'learning_rate'"),
    ('results-path', GOOD.replace('seed: 0}', 'seed: 0, results_path: x.csv}'), 'line 7: profiles.cpu[0].results_path: the runner sets it'),
    ('unknown-top-key', GOOD.replace('profiles:', 'profile:'), "line 3: profile: not a key of a grid (did you mean 'profiles'?); a grid has: paper, title"),
    ('duplicate-key', GOOD.replace('seed: [0, 1]', 'seed: [0, 1], seed: 2'), 'line 5: profiles.smoke[0].seed: given twice in one mapping (first on line 5)'),
    ('unknown-profile', GOOD.replace('  cpu:', '  gpu:'), "line 6: profiles.gpu: unknown profile(s) ['gpu']; allowed: ['smoke', 'cpu', 'long', 'paper']"),
    # 4. a grid that is not UTF-8 text (saved in Latin-1, say)
    ('binary', GOOD.replace('m2', 'm\xe9').encode('latin-1'), 'line 7: not UTF-8 text (byte 0xe9 at column 21)'),
    # 5. a notebook that does not exist: the grid's, an entry's, a summary
    ('missing-notebook', GOOD.replace('notebook: nbs/toy.ipynb', 'notebook: nbs/tyo.ipynb'),
     "line 2: notebook: nbs/tyo.ipynb does not exist in {proj} (did you mean 'nbs/toy.ipynb'?); give a run notebook's path relative to the project folder"),
    ('missing-entry-notebook', GOOD.replace('{model: [m1, m2]', '{notebook: nbs/other.ipynb, model: [m1, m2]'),
     'line 7: profiles.cpu[0].notebook: nbs/other.ipynb does not exist in {proj}'),
    ('missing-summary', GOOD.replace('profiles:', 'summary: [nbs/toy.ipynb, nbs/summary.ipynb]\nprofiles:'), 'line 3: summary[1]: nbs/summary.ipynb does not exist'),
]
FIVE = ['yaml-syntax', 'wrong-type', 'unknown-key', 'binary', 'missing-notebook']      # the five, for the other commands


def toy_project(where: Path, grid: str | bytes = GOOD) -> Path:
    "A project `project_root()` finds (settings.ini and nbs/) with one run notebook and the grid `grid`."
    proj = where/'proj'
    (proj/'nbs').mkdir(parents=True); (proj/'grids').mkdir()
    (proj/'settings.ini').write_text('[DEFAULT]\n')
    cell = lambda src, **meta: {'cell_type': 'code', 'execution_count': None, 'metadata': meta, 'outputs': [], 'source': src}
    nb = {'cells': [cell(PARAMS, tags=['parameters']), cell("raise SystemExit('this run should never have started')")],
          'metadata': {'kernelspec': {'name': 'python3', 'display_name': 'Python 3', 'language': 'python'}}, 'nbformat': 4, 'nbformat_minor': 5}
    (proj/'nbs'/'toy.ipynb').write_text(json.dumps(nb))
    f = proj/'grids'/'toy.yaml'
    f.write_bytes(grid) if isinstance(grid, bytes) else f.write_text(grid)
    return proj


def one_error_line(stderr: str) -> str:
    lines = [l for l in stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith('error: '), stderr
    return lines[0]


def test_good_grid_loads(tmp_path):
    "The toy grid as written is valid: the mistakes below are each a one-place edit of it."
    g = load_grid('toy', toy_project(tmp_path))
    assert [len(g.runs(p)) for p in ('smoke', 'cpu')] == [2, 2]


@pytest.mark.parametrize('grid,msg', [c[1:] for c in MISTAKES], ids=[c[0] for c in MISTAKES])
def test_cogen_run_refuses_the_grid(tmp_path, grid, msg):
    "`cogen run toy --profile smoke` in the project: exit 1, one line naming the file, the line and the key; nothing ran."
    proj = toy_project(tmp_path, grid)
    r = subprocess.run([str(COGEN), 'run', 'toy', '--profile', 'smoke'], cwd=proj, capture_output=True, text=True, timeout=120,
                       env={**os.environ, 'COLUMNS': '300'})
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert 'Traceback' not in r.stderr and r.stdout == '', r.stdout + r.stderr
    line = one_error_line(r.stderr)
    assert line.startswith(f"error: grid {proj/'grids'/'toy.yaml'} "), line
    assert msg.replace('{proj}', str(proj)) in line, (msg, line)
    assert not (proj/'runs').exists() and not (proj/'results').exists()         # nothing ran, no run page pointed at


def forbid(monkeypatch, target: str):
    mod, attr = target.split(':')
    def called(*a, **k): raise AssertionError(f'{target} was called: the grid was not checked before the work')
    monkeypatch.setattr(__import__(mod, fromlist=[attr]), attr, called)


@pytest.mark.parametrize('args,target', [
    (['verify', 'toy', '--profile', 'cpu'], 'cogen_lib.runner:verify_committed'),
    (['verify', 'all', '--profile', 'cpu'], 'cogen_lib.runner:verify_committed'),
    (['results', 'import', 'toy', '{src}', '--profile', 'cpu'], 'cogen_lib.runner:import_results'),
    (['run', 'all', '--profile', 'smoke'], 'cogen_lib.runner:run_grid'),
    (['site'], 'cogen_lib.site:build_site'),
], ids=['verify', 'verify-all', 'results-import', 'run-all', 'site'])
@pytest.mark.parametrize('case', FIVE)
def test_other_commands_refuse_the_grid(tmp_path, monkeypatch, args, target, case):
    "`cogen verify`, `cogen results import`, `cogen run all` and `cogen site` read the grid through `load_grid`: the same line."
    _, grid, msg = next(c for c in MISTAKES if c[0] == case)
    proj = toy_project(tmp_path, grid)
    forbid(monkeypatch, target)
    monkeypatch.chdir(proj)
    res = CliRunner().invoke(app, [a.format(src=tmp_path/'gpu-out') for a in args])
    assert res.exception is None or isinstance(res.exception, SystemExit), repr(res.exception)
    assert res.exit_code == 1, (res.exit_code, res.output)
    line = one_error_line(res.stderr)
    assert line.startswith(f"error: grid {proj/'grids'/'toy.yaml'} ") and msg.replace('{proj}', str(proj)) in line, line
    assert not (proj/'runs').exists() and not (proj/'results').exists()


PROBE = ("import atexit, sys\n"
         "atexit.register(lambda: print('heavy:', sorted(m for m in ('cogen_lib.runner', 'papermill', 'pandas') if m in sys.modules), file=sys.stderr))\n"
         "from cogen_lib.cli import main\n"
         "main(sys.argv[1:])\n")


def test_misspelled_paper_is_refused_at_once():
    """`cogen run recgos`: one line naming the closest paper, without importing the runner, papermill or pandas (what
    makes the refusal take well under a second; a wall-clock bound here would fail on a loaded machine, not on a slow CLI)."""
    r = subprocess.run([str(COGEN), 'run', 'recgos'], cwd=ROOT, capture_output=True, text=True, timeout=120, env={**os.environ, 'COLUMNS': '300'})
    assert r.returncode == 1 and 'Traceback' not in r.stderr, r.stderr
    assert f"error: no grid for paper 'recgos' (did you mean 'recogs'?): {ROOT/'grids'/'recgos.yaml'} does not exist; known papers: [" in one_error_line(r.stderr)
    r = subprocess.run([sys.executable, '-c', PROBE, 'run', 'recgos'], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and 'heavy: []' in r.stderr, r.stderr


def test_wrong_grid_is_refused_before_the_runner_is_imported(tmp_path):
    proj = toy_project(tmp_path, GOOD.replace('n_examples: 4', 'n_examples: four'))
    r = subprocess.run([sys.executable, '-c', PROBE, 'run', 'toy'], cwd=proj, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "'four' is not an int" in r.stderr and 'heavy: []' in r.stderr, r.stderr


@pytest.mark.parametrize('paper', list_papers(ROOT))
def test_every_real_grid_is_valid(paper):
    "Every entry of every profile of the project's grids passes the checks (the runs of each profile expand)."
    g = load_grid(paper, ROOT)
    assert all(g.runs(p) for p in g.profiles)


def _parameter_cells():
    for nb in sorted((ROOT/'nbs').rglob('*.ipynb')) + sorted((ROOT/'tests'/'fixtures').rglob('*.ipynb')):
        cells = [c for c in json.loads(nb.read_text())['cells'] if 'parameters' in c.get('metadata', {}).get('tags', [])]
        if len(cells) == 1: yield pytest.param(nb, ''.join(cells[0]['source']), id=str(nb.relative_to(ROOT)))


@pytest.mark.parametrize('nb,src', list(_parameter_cells()))
def test_parameters_read_as_papermill_reads_them(nb, src):
    "`notebook_parameters` parses with Python's `ast` (papermill's import takes seconds): the same parameters as papermill's parser."
    from papermill.translators import PythonTranslator
    assert list(notebook_parameters(nb).values()) == [Parameter(*q) for q in PythonTranslator.inspect({'source': src}) if q.name != 'results_path']
