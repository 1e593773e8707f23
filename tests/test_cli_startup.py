"""`cogen recogs score` as a user runs it (a process of its own) imports no pydantic: the plain-parameter classes of
`cogen_lib.cli` (PlainGroup, PlainCommand) convert every parameter it parses, `cogen`'s own group included."""
import subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROBE = ("import atexit, sys\n"
         "atexit.register(lambda: print('pydantic imported:', 'pydantic' in sys.modules, file=sys.stderr))\n"
         "from cogen_lib.cli import main\n"
         "main(sys.argv[1:])\n")


def _score(tmp_path, *extra):
    gold = tmp_path / 'gold.tsv'
    gold.write_text('A cat ran .\tcat ( x _ 1 ) AND run . agent ( x _ 2 , x _ 1 )\tin_distribution\n')
    pred = tmp_path / 'pred.tsv'
    pred.write_text('A cat ran .\tcat ( x _ 4 ) AND run . agent ( x _ 3 , x _ 4 )\tin_distribution\n')
    args = ['recogs', 'score', str(pred), '--gold', str(gold), *extra]
    return subprocess.run([sys.executable, '-c', PROBE, *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def test_score_imports_no_pydantic(tmp_path):
    r = _score(tmp_path, '--metric', 'sem', '--by-category')
    assert r.returncode == 0, r.stderr
    assert 'sem accuracy: 1.0000 (1 / 1 rows' in r.stdout, r.stdout     # the renamed prediction is a SEM match
    assert 'pydantic imported: False' in r.stderr, r.stderr


def test_bad_value_still_gets_typer_message(tmp_path):
    r = _score(tmp_path, '--metric', 'sem', '--gold', str(tmp_path / 'nope.tsv'))
    assert r.returncode != 0 and ('nope.tsv' in r.stdout + r.stderr), r.stdout + r.stderr
