import functools, os, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

@pytest.fixture(scope='session')
def root() -> Path:
    return ROOT

def pytest_addoption(parser):
    parser.addoption('--fast', action='store_true', default=os.environ.get('COGEN_FAST', '') not in ('', '0'),
                     help='The fast lane (make test-fast; or COGEN_FAST=1): deselect the tests that tests/durations.csv '
                          'records as slower than COGEN_FAST_SECONDS (default 3), or whose file is slower than '
                          'COGEN_FAST_FILE_SECONDS (60) as a whole, and the unrecorded ones of the shared '
                          'and cggc groups (grid executions, fine-tuning, site builds, CGGC graph builds).')
    parser.addoption('--record-durations', metavar='CSV', default=None,
                     help='Write each test run here (setup + call + teardown seconds) into CSV (tests/durations.csv), '
                          'keeping the rows of the tests not run (make durations).')


def pytest_configure(config):
    # Tests read the real data from the mirror when one is configured; model caches stay in the user's cache.
    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
    # Under `pytest -n N`, each worker (and the kernels and processes it starts) gets its share of the cores for torch's
    # threads: two workers of two threads each on two cores made the model tests several times slower than one thread each.
    if os.environ.get('PYTEST_XDIST_WORKER_COUNT'):
        from cogen_lib.core import thread_share
        os.environ.update(thread_share(int(os.environ['PYTEST_XDIST_WORKER_COUNT'])))
    config.addinivalue_line('markers', 'xdist_group(name): run with the other tests of group `name`, on one worker, in order')


# `make test` runs two workers (`pytest -n 2 --dist loadgroup`). Most tests write only under their `tmp_path`, or into
# caches that are safe to share between processes (data files are fetched to a temporary name and renamed; the
# model-call cache is sqlite in WAL mode; the embedding store takes a file lock; a GGUF model is converted into the
# cache under a file lock; checkpoints and results are written to a per-process temporary name and renamed). Two kinds
# of test share something that is not, and each kind runs as one group, on one worker, one test at a time:
#   'shared'  the project's own runs/ results/ figures/: test_site compares `git status` before and after a smoke run
#             into the project, and grids, summaries and the notebooks that run them write there; SPOR fine-tuning
#             (its adapters in the cache);
#   'cggc'    CGGC's triple cache and graph builds (graphs.cached_build writes into a fixed folder until stats.json
#             exists, with no lock) and its test embedding store.
# And, to save time rather than for safety, the tests of a file that share a module-scoped fixture of their own run as
# one group ('module:<file>'), so that the fixture is built once instead of once per worker.
# The groups need pytest-xdist's `--dist loadgroup` to see the marks: pytest 9.2 stores node ids where xdist 3.8 cannot
# add the group to them (every group then ran spread over both workers), so requirements.txt pins pytest 9.1.1 and
# tests/test_xdist_groups.py checks that a group stays on one worker.
SHARED_FILES = {'test_site.py'}
_SHARED_NB = re.compile(r'finetune|run_grid|cogen run|build_site|figures_dir|results_dir')


def xdist_group_of(path: Path, nb: Path | None = None) -> str | None:
    "The group of a test file, or of the notebook `nb` that tests/test_notebooks.py executes; None: runs anywhere."
    if nb is not None:
        rel = nb.relative_to(ROOT/'nbs').as_posix()
        if rel.startswith('cggc/') or rel.startswith('course/05_cggc'): return 'cggc'
        return 'shared' if _SHARED_NB.search(nb.read_text(encoding='utf-8')) else None
    if path.name.startswith('test_cggc_'): return 'cggc'
    return 'shared' if path.name in SHARED_FILES else None


@functools.lru_cache(maxsize=None)
def module_fixtures(path: Path) -> frozenset:
    """The names of the module-scoped fixtures that the test file `path` defines, read from its source (pytest has no
    public API for a fixture's scope at collection time): functions decorated `@pytest.fixture(scope='module', ...)`,
    under their `name=` when they give one."""
    import ast
    names = set()
    for node in ast.parse(path.read_text(encoding='utf-8')).body:
        if not isinstance(node, ast.FunctionDef): continue
        for dec in node.decorator_list:
            if not (isinstance(dec, ast.Call) and ast.unparse(dec.func) in ('pytest.fixture', 'fixture')): continue
            kw = {k.arg: k.value.value for k in dec.keywords if isinstance(k.value, ast.Constant)}
            if kw.get('scope') == 'module': names.add(kw.get('name') or node.name)
    return frozenset(names)


def own_module_fixture(item, path: Path) -> bool:
    """Whether `item` uses a module-scoped fixture defined in its own file (`item.fixturenames` holds the fixtures it
    uses, autouse ones too). Each worker that runs one of the file's tests builds such a fixture once: two workers built
    test_cocoa_summary's synthetic summary (about 25 s each, quiet) twice."""
    return bool(module_fixtures(path) & set(item.fixturenames))


@pytest.hookimpl(tryfirst=True)      # before xdist's own hook, which reads the marks to schedule --dist loadgroup
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath))
        nb = item.callspec.params.get('nb') if path.name == 'test_notebooks.py' and hasattr(item, 'callspec') else None
        group = xdist_group_of(path, Path(nb) if nb is not None else None)
        if group is None and own_module_fixture(item, path): group = f'module:{path.name}'   # one worker builds it, once
        if group and not item.get_closest_marker('xdist_group'): item.add_marker(pytest.mark.xdist_group(group))
    if config.getoption('fast'): fast_lane(config, items)


# The fast lane (`make test-fast`, `pytest --fast`): every test but the slow ones, in about 1.5 minutes on 2 cores. Slow
# means recorded in tests/durations.csv (the suite's per-test seconds, kept as data: `make durations` rewrites it) above
# COGEN_FAST_SECONDS (3), or in a file whose rows add up to more than COGEN_FAST_FILE_SECONDS (60); a test the file does
# not list runs, unless it is in the 'shared' or 'cggc' group above (what executes grids, fine-tunes, builds the site or
# CGGC's graphs: never fast), so a new test is in the lane until measured.
DURATIONS = Path(os.environ.get('COGEN_DURATIONS') or ROOT/'tests'/'durations.csv')   # another file: tests/test_fast_lane.py
SLOW_GROUPS = ('shared', 'cggc')


def read_durations(path: Path = DURATIONS) -> dict[str, float]:
    "tests/durations.csv as test id -> seconds (lines starting with # are its header)."
    if not path.exists(): return {}
    import csv
    rows = csv.DictReader(l for l in path.read_text(encoding='utf-8').splitlines() if l and not l.startswith('#'))
    return {r['test']: float(r['seconds']) for r in rows}


def fast_lane(config, items):
    "Deselect (as -k does: listed as deselected) what the fast lane leaves out."
    limit = float(os.environ.get('COGEN_FAST_SECONDS', 3))
    file_limit = float(os.environ.get('COGEN_FAST_FILE_SECONDS', 60))
    durations = read_durations()
    # A file's tests share work in the process (lru caches of full-data rewrites, loaded models, built data sets) that
    # whichever of them runs first pays: a file whose rows add up to more than file_limit is slow as a whole. Not
    # test_notebooks.py: each of its tests is one notebook, executed in a shell of its own.
    per_file = {}
    for k, v in durations.items(): per_file[k.split('::')[0]] = per_file.get(k.split('::')[0], 0.0) + v
    slow_files = {f for f, v in per_file.items() if v > file_limit and f != 'tests/test_notebooks.py'}
    group = lambda i: (m.args[0] if (m := i.get_closest_marker('xdist_group')) and m.args else None)
    def slow(item):
        if item.nodeid.split('::')[0] in slow_files: return True
        if item.nodeid in durations: return durations[item.nodeid] > limit
        return group(item) in SLOW_GROUPS
    # the tests sharing their file's module fixture go together: the fixture's cost is recorded in whichever ran first
    slow_groups = {group(i) for i in items if slow(i) and (group(i) or '').startswith('module:')}
    dropped = [i for i in items if slow(i) or group(i) in slow_groups]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        gone = {id(i) for i in dropped}; items[:] = [i for i in items if id(i) not in gone]


_ran: dict[str, float] = {}
_skipped: set[str] = set()

def plain_nodeid(nodeid: str) -> str:
    """`nodeid` without the '@<group>' that pytest-xdist's `--dist loadgroup` appends to a grouped test's id in its
    reports: the fast lane looks tests up by the id they have at collection, before xdist adds it."""
    return re.sub(r'@[^\[\]@]*$', '', nodeid)


def pytest_runtest_logreport(report):
    # under pytest-xdist the controller gets every worker's reports, so this sees the whole run
    k = plain_nodeid(report.nodeid)
    _ran[k] = _ran.get(k, 0.0) + report.duration
    if report.skipped: _skipped.add(k)     # a skip here (no Chromium, say) says nothing of its time elsewhere


def pytest_sessionfinish(session):
    out = session.config.getoption('record_durations')
    if not out or not _ran or hasattr(session.config, 'workerinput'): return      # written once, by the controller
    rows = {**read_durations(Path(out)), **{k: round(v, 2) for k, v in _ran.items() if k not in _skipped}}
    write_durations(Path(out), {k: v for k, v in rows.items() if (ROOT/k.split('::')[0]).exists()})   # deleted files go


def write_durations(path: Path, rows: dict[str, float]):
    "`rows` (test id -> seconds) into `path`, slowest first, under the header that says what the file is."
    import datetime, platform
    head = [f"# Seconds per test (setup + call + teardown; a module fixture counts in the first test that uses it), last written",
            f"# {datetime.date.today()} by `pytest --record-durations {path.name}` (make durations) on {platform.machine()}, {os.cpu_count()} cores.",
            "# tests/conftest.py reads it for the fast lane (make test-fast): a test listed above COGEN_FAST_SECONDS (3), or in a",
            "# file whose rows add up to more than COGEN_FAST_FILE_SECONDS (60), is left out. A rerun rewrites the rows of the",
            "# tests it ran and keeps the others."]
    import csv, io
    buf = io.StringIO(); w = csv.writer(buf, lineterminator='\n')
    w.writerow(['test', 'seconds']); w.writerows(sorted(rows.items(), key=lambda kv: (-kv[1], kv[0])))
    path.write_text('\n'.join(head) + '\n' + buf.getvalue(), encoding='utf-8')
