"""Faults of the model behind a run never become answers.

A small OpenAI-compatible server (tests/fixtures/flaky_server.py, standard library only) fails 20% of its requests,
seeded, in five ways: 500, 429 with Retry-After, a dropped connection, a reply past the client's timeout and a reply
with no `choices`. The quickstart and GroundCocoa `smoke` grids run against it as `openai:flaky`. Each invocation ends
either complete, with rows identical to a fault-free run against the same server, or incomplete (exit status 1, the
failed items named, no rows kept); reruns retry only the failed calls until the grid completes; the call cache then
holds exactly the fault-free run's calls (no failed call cached, none lost). The same holds for a grid killed with
SIGKILL in the middle of a run. Bounded: a few hundred requests, about a minute and a half on a quiet 2-core machine.
"""
import json, os, signal, sqlite3, subprocess, sys, time
from pathlib import Path
import pytest

pytest.importorskip('openai')
sys.path.insert(0, str(Path(__file__).resolve().parent/'fixtures'))
from flaky_server import FAULTS, FlakyServer
from cogen_lib.core import cache_dir
from cogen_lib.results import collect_results, compare_rows

ROOT = Path(__file__).resolve().parents[1]
MODEL = 'openai:flaky'
COGEN = str(Path(sys.executable).parent/'cogen')
SETS = {'quickstart': ['n_examples=16'],                                                      # 16 prompts
        'cocoa': ['prompt_style=direct', 'max_new_tokens=8', 'rotations=2', 'limit=6']}       # the two smoke runs become one: 12 prompts
DRIVER = ("import json, sys; from cogen_lib.runner import run_grid\n"
          "reps = [run_grid(p, 'smoke', out=sys.argv[1], summary=False, models=[sys.argv[2]], sets=s) for p, s in json.loads(sys.argv[3]).items()]\n"
          "sys.exit(1 if any(r.failed for r in reps) else 0)")
MAX_PASSES = 6


def _cache(folder: Path) -> Path:
    "A cogen cache of its own (an empty call cache), sharing this machine's fetched data."
    folder.mkdir(parents=True)
    (folder/'data').symlink_to(cache_dir('data'), target_is_directory=True)
    return folder


def _env(server, cache: Path) -> dict:
    return dict(os.environ, COGEN_CACHE=str(cache), OPENAI_API_KEY='x', OPENAI_BASE_URL=server.base,
                COGEN_OPENAI_RETRIES='2', COGEN_OPENAI_TIMEOUT='1', COGEN_OPENAI_CONCURRENCY='4')


def _grid(server, out: Path, cache: Path, **kw):
    args = [sys.executable, '-c', DRIVER, str(out), MODEL, json.dumps(SETS)]
    return subprocess.Popen(args, cwd=ROOT, env=_env(server, cache), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)


def _until_complete(server, out: Path, cache: Path) -> list[dict]:
    "Invoke the grids until they complete; each incomplete pass must name its failed items and keep no rows of them."
    passes = []
    for _ in range(MAX_PASSES):
        p = _grid(server, out, cache); log = p.communicate(timeout=300)[0]
        incomplete = [l[l.index('INCOMPLETE '):] for l in log.splitlines() if 'INCOMPLETE ' in l]   # after any progress bar
        passes.append(dict(rc=p.returncode, incomplete=incomplete))
        if p.returncode == 0: return passes
        assert incomplete and 'FAILED ' not in log, log[-3000:]
        for line in incomplete:
            assert 'model calls failed: rerun to retry them' in line and 'Failed items: ' in line, line
            slug = line.split()[1].split('/', 1)[1].rstrip(':')
            paper = line.split()[1].split('/')[0]
            assert not (out/'results'/paper/f'{slug}.csv').exists(), f"an incomplete run kept its rows: {slug}"
            assert json.loads((out/'runs'/paper/f'{slug}.json').read_text())['status'] == 'incomplete'
    pytest.fail(f"the grids did not complete in {MAX_PASSES} passes: {passes}")


def _calls(cache: Path) -> dict:
    with sqlite3.connect(cache/'calls'/'calls.sqlite') as con: return dict(con.execute('SELECT key, value FROM calls'))


def _rows(out: Path) -> dict:
    return {p: collect_results(p, out).sort_values(['slug', 'metric'], kind='stable').reset_index(drop=True) for p in SETS}


def _same_rows(got: dict, want: dict):
    for p in SETS:
        assert sorted(got[p].slug.unique()) == sorted(want[p].slug.unique())
        assert not got[p].drop(columns=['wall_seconds'], errors='ignore').duplicated().any(), f"{p}: duplicated rows"
        for slug in want[p].slug.unique():
            d = compare_rows(want[p][want[p].slug == slug], got[p][got[p].slug == slug], slug)
            assert d == [], d[:5]


@pytest.fixture(scope='module')
def server():
    with FlakyServer(rate=0.0, seed=7, slow_seconds=1.6) as s: yield s


@pytest.fixture(scope='module')
def clean(server, tmp_path_factory):
    "The rows and the call cache of the grids run against the server with no faults."
    d = tmp_path_factory.mktemp('clean'); cache = _cache(d/'cache')
    server.rate = 0.0
    p = _grid(server, d/'out', cache); log = p.communicate(timeout=300)[0]
    assert p.returncode == 0, log[-3000:]
    calls = _calls(cache)
    assert len(calls) == len(server.served) > 0                           # one cached call per prompt
    return _rows(d/'out'), calls


def test_faults_never_become_answers(server, clean, tmp_path):
    rows, calls = clean
    server.rate, before = 0.2, server.faults.copy()
    cache = _cache(tmp_path/'cache')
    passes = _until_complete(server, tmp_path/'out', cache)
    faults = {k: server.faults[k] - before[k] for k in FAULTS}
    print(f"faults injected: {faults}; passes: {[(p['rc'], len(p['incomplete'])) for p in passes]}")
    assert sum(faults.values()) > 0 and faults['empty'] > 0, faults      # the seed makes some calls fail for good
    assert len(passes) > 1, "no pass was incomplete: the test proved nothing"
    _same_rows(_rows(tmp_path/'out'), rows)
    assert _calls(cache) == calls                                         # no failed call cached, no answer lost


def test_sigkill_in_a_flaky_run_then_resume(server, clean, tmp_path):
    rows, calls = clean
    server.rate = 0.2
    cache = _cache(tmp_path/'cache')
    start = server.requests
    p = _grid(server, tmp_path/'out', cache, start_new_session=True)
    t0 = time.monotonic()
    while server.requests < start + 8 and p.poll() is None and time.monotonic() - t0 < 120: time.sleep(0.05)
    assert p.poll() is None, "the grid ended before it could be killed"
    os.killpg(p.pid, signal.SIGKILL); p.communicate()
    print(f"SIGKILL after {server.requests - start} requests")
    _until_complete(server, tmp_path/'out', cache)
    _same_rows(_rows(tmp_path/'out'), rows)
    assert _calls(cache) == calls
    assert not list((tmp_path/'out'/'results').rglob('.*.csv')), "a partial result file was left behind"


def test_cli_says_how_many_calls_failed(server, tmp_path):
    "`cogen cocoa score` against the server with every request failing: exit 1, the count and the first error."
    server.rate, cache = 1.0, _cache(tmp_path/'cache')
    q = tmp_path/'q.jsonl'
    g = subprocess.run([COGEN, 'cocoa', 'generate', '--per-config', '1', '--out', str(q)],
                       cwd=ROOT, env=_env(server, cache), capture_output=True, text=True)
    assert g.returncode == 0, g.stderr
    r = subprocess.run([COGEN, 'cocoa', 'score', str(q), '--model', MODEL, '--prompt', 'direct',
                        '--limit', '2'], cwd=ROOT, env=_env(server, cache), capture_output=True, text=True, timeout=300)
    server.rate = 0.0
    assert r.returncode == 1, r.stdout + r.stderr
    err = [l for l in r.stderr.splitlines() if l.startswith('error:')]
    assert len(err) == 1 and err[0].startswith('error: 2 of 2 model calls failed: rerun to retry them') and 'First error: ' in err[0], r.stderr
    assert 'Traceback' not in r.stderr and 'accuracy' not in r.stdout
    assert _calls(cache) == {}                                            # nothing cached
