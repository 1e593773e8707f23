"""The fast lane (`make test-fast`, `pytest --fast`): tests/durations.csv is read as written, and the lane leaves out
the tests recorded as slow, the files slow as a whole and the unrecorded tests of the grid-running groups, but keeps
the fast and the unrecorded others."""
import os, subprocess, sys
from pathlib import Path
from conftest import DURATIONS, plain_nodeid, read_durations, write_durations

ROOT = Path(__file__).resolve().parents[1]


def test_durations_file():
    """The committed file says what it is, and every row is a test id with its seconds (a row of a file since deleted
    does no harm: `make durations` drops it)."""
    text = DURATIONS.read_text(encoding='utf-8')
    assert text.startswith('# Seconds per test') and '\ntest,seconds\n' in text
    rows = read_durations()
    assert len(rows) > 500 and all(v >= 0 for v in rows.values())
    assert all(k.startswith('tests/test_') and '.py::test_' in k for k in rows), [k for k in rows if '.py::test_' not in k][:5]
    assert all(k == plain_nodeid(k) for k in rows), [k for k in rows if k != plain_nodeid(k)][:5]   # ids as collected


def test_plain_nodeid():
    "The ids recorded are those the lane looks up: without the '@<group>' that `--dist loadgroup` adds to reports."
    assert plain_nodeid('tests/test_a.py::test_x[p]@module:test_a.py') == 'tests/test_a.py::test_x[p]'
    assert plain_nodeid('tests/test_a.py::test_y@shared') == 'tests/test_a.py::test_y'
    assert plain_nodeid('tests/test_a.py::test_z[a@b]') == 'tests/test_a.py::test_z[a@b]'      # an '@' in a parameter stays


def test_round_trip(tmp_path):
    "What write_durations writes, read_durations reads back (ids with commas and quotes too), slowest first."
    rows = {'tests/test_a.py::test_x[a,b]': 1.5, 'tests/test_a.py::test_y["q"]': 0.25, 'tests/test_b.py::test_z': 9.0}
    write_durations(tmp_path/'d.csv', rows)
    assert read_durations(tmp_path/'d.csv') == rows
    assert (tmp_path/'d.csv').read_text().splitlines()[-3].startswith('tests/test_b.py::test_z,')


def test_lane_selection(tmp_path):
    "A collection with --fast over a durations file of our own: which of a few real tests the lane keeps."
    ids = {'fast': 'tests/test_notebooks.py::test_notebook[00_core.ipynb]',
           'slow': 'tests/test_notebooks.py::test_notebook[02_models.ipynb]',
           'in_slow_file': 'tests/test_recogs_rewrites.py::test_recogs_pool',              # fast, but its file is not
           'shared_unrecorded': 'tests/test_notebooks.py::test_notebook[04_runner.ipynb]',   # runs grids: never fast
           'unrecorded': 'tests/test_packaging.py::test_make_help'}                           # new: fast until measured
    write_durations(tmp_path/'d.csv', {ids['fast']: 1.0, ids['slow']: 50.0, ids['in_slow_file']: 1.0,
                                       'tests/test_recogs_rewrites.py::test_split_sizes': 70.0})
    env = {**{k: v for k, v in os.environ.items() if not k.startswith('COGEN_FAST')}, 'COGEN_DURATIONS': str(tmp_path/'d.csv')}
    r = subprocess.run([sys.executable, '-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider', '--fast', *ids.values()],
                       cwd=ROOT, capture_output=True, text=True, timeout=300, env=env)
    kept = {l.strip() for l in r.stdout.splitlines() if '::' in l}
    assert kept == {ids['fast'], ids['unrecorded']}, r.stdout + r.stderr
    assert '(3 deselected)' in r.stdout, r.stdout


def test_record_durations(tmp_path):
    "`--record-durations CSV` (make durations) writes the tests it ran into CSV, keeps the other rows, drops deleted files'."
    out = tmp_path/'d.csv'
    write_durations(out, {'tests/test_fast_lane.py::test_round_trip': 7.0, 'tests/test_gone.py::test_x': 1.0})
    r = subprocess.run([sys.executable, '-m', 'pytest', '-q', '-p', 'no:cacheprovider', '--record-durations', str(out),
                        'tests/test_packaging.py::test_make_help'], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    rows = read_durations(out)
    assert set(rows) == {'tests/test_fast_lane.py::test_round_trip', 'tests/test_packaging.py::test_make_help'}, rows
    assert rows['tests/test_fast_lane.py::test_round_trip'] == 7.0 and rows['tests/test_packaging.py::test_make_help'] < 60
