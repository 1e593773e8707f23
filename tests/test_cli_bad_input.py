"""Wrong invocations of every `cogen` command: each ends with a non-zero exit, one line naming the bad path or value,
and no traceback, before any work is done.

The table runs in-process through typer's CliRunner (fast); an exception that escapes a command would print a
traceback in the real process, and here shows up as `result.exception` (anything but SystemExit), which fails the
test. A few cases run as real `cogen` processes, to check that what users see matches.

Placeholders in a case: {bin} a binary file, {text} a UTF-8 file, {dir} an existing folder, {missing} a path that does
not exist, {pred}/{gold} valid ReCOGS TSVs, {sys} a folder nobody can create files in (root included), {ro} a read-only
folder (chmod as a user; chattr +i as root).
"""
import os, subprocess, sys, shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cogen_lib.cli import app

ROOT = Path(__file__).resolve().parents[1]
COGEN = Path(sys.executable).parent/'cogen'

# (id, args, exit code, substring of the error; for exit 2 typer's usage error names the option, forbid: 'module:attr'
#  that must not be called, i.e. the check comes before the work)
CASES = [
    # cogen
    ('run-out-file', ['run', 'quickstart', '--out', '{text}'], 1, '--out {text} is a file; give a folder', 'cogen_lib.runner:run_grid'),
    ('run-out-under-file', ['run', 'quickstart', '--out', '{text}/sub'], 1, '{text} is a file, so nothing can be created under it', 'cogen_lib.runner:run_grid'),
    ('run-out-sys', ['run', 'quickstart', '--out', '{sys}'], 1, '--out {sys}: cannot create files in /sys', 'cogen_lib.runner:run_grid'),
    ('run-workers-0', ['run', 'quickstart', '--workers', '0'], 2, "'--workers'", 'cogen_lib.runner:run_grid'),
    # cogen run --set / --model: checked against the run notebook's parameters cell and the forms of model name, before anything runs
    ('run-set-unknown', ['run', 'quickstart', '--set', 'no_such_key=1'], 1, "--set no_such_key: quickstart's runs have no parameter 'no_such_key'; nbs/quickstart/run.ipynb declares (name: type = default): model: str = 'smollm2-135m', n_examples: int = 4", 'cogen_lib.runner:run_grid'),
    ('run-set-type', ['run', 'quickstart', '--set', 'n_examples=abc'], 1, "--set n_examples=abc: 'abc' is not an int; nbs/quickstart/run.ipynb declares (name: type = default): model: str = 'smollm2-135m', n_examples: int = 4", 'cogen_lib.runner:run_grid'),
    ('run-set-float', ['run', 'quickstart', '--set', 'seed=1.5'], 1, "--set seed=1.5: '1.5' is not an int", 'cogen_lib.runner:run_grid'),
    ('run-set-no-value', ['run', 'quickstart', '--set', 'n_examples'], 1, "--set 'n_examples': expected key=value", 'cogen_lib.runner:run_grid'),
    ('run-only-no-match', ['run', 'quickstart', '--only', 'seed=9'], 1, "--only seed=9: no run of quickstart matches; its runs have seed: 0", 'cogen_lib.runner:run_grid'),
    ('run-only-unknown', ['run', 'quickstart', '--only', 'lr=1'], 1, "--only lr=...: no run of quickstart has a parameter 'lr'", 'cogen_lib.runner:run_grid'),
    ('run-only-all', ['run', 'all', '--only', 'seed=0'], 1, "--only selects runs of one paper's grid", 'cogen_lib.runner:run_grid'),
    ('run-set-model', ['run', 'quickstart', '--set', 'model=x'], 1, 'use --model NAME', 'cogen_lib.runner:run_grid'),
    ('run-set-results-path', ['run', 'quickstart', '--set', 'results_path=x.csv'], 1, '--set results_path: the runner sets it', 'cogen_lib.runner:run_grid'),
    ('run-model-hub-missing', ['run', 'quickstart', '--model', 'no/such-model'], 1, "and the hub is offline (HF_HUB_OFFLINE=1): download it first, or use registered weights (", 'cogen_lib.runner:run_grid'),
    ('run-model-unknown', ['run', 'quickstart', '--model', 'nosuchmodel'], 1, "--model nosuchmodel: unknown model 'nosuchmodel': use registered weights (", 'cogen_lib.runner:run_grid'),
    ('run-model-empty-folder', ['run', 'quickstart', '--model', '{dir}'], 1, 'is a folder without config.json: it holds no model', 'cogen_lib.runner:run_grid'),
    ('run-model-recogs', ['run', 'recogs', '--model', 'gemma3-270m'], 1, 'recogs trains its models from scratch, so its `model` parameter chooses an architecture (lstm, transformer)', 'cogen_lib.runner:run_grid'),
    ('run-all-set-unknown', ['run', 'all', '--set', 'no_such_key=1'], 1, 'run all: the changes apply to no paper', 'cogen_lib.runner:run_grid'),
    # a misspelled paper, a profile the grid lacks: refused before the runner is imported (tests/test_grid_validation.py: wrong grids)
    ('run-paper-typo', ['run', 'recgos'], 1, "no grid for paper 'recgos' (did you mean 'recogs'?)", 'cogen_lib.runner:run_grid'),
    ('run-profile-missing', ['run', 'quickstart', '--profile', 'long'], 1, "no profile 'long'; it has ['cpu', 'paper', 'smoke']", 'cogen_lib.runner:run_grid'),
    # cogen verify
    ('verify-smoke', ['verify', 'quickstart', '--profile', 'smoke'], 1, "profile 'smoke': its rows are not committed", 'cogen_lib.runner:verify_committed'),
    ('verify-nothing-committed', ['verify', 'quickstart', '--profile', 'long'], 1, 'no committed rows in results/quickstart/long/', 'cogen_lib.committed:execute_run'),
    ('verify-paper-typo', ['verify', 'recgos', '--profile', 'cpu'], 1, "no grid for paper 'recgos' (did you mean 'recogs'?)", 'cogen_lib.runner:verify_committed'),
    ('verify-runs-0', ['verify', 'quickstart', '--profile', 'long', '--runs', '0'], 2, "'--runs'", 'cogen_lib.runner:verify_committed'),
    ('verify-out-file', ['verify', 'quickstart', '--profile', 'long', '--out', '{text}'], 1, '--out {text} is a file; give a folder', 'cogen_lib.runner:verify_committed'),
    ('verify-only-all', ['verify', 'all', '--profile', 'long', '--only', 'seed=0'], 1, "--only selects runs of one paper's grid", 'cogen_lib.runner:verify_committed'),
    ('verify-only-no-match', ['verify', 'recogs', '--profile', 'long', '--only', 'seed=9'], 1, "--only seed=9: no run of the committed 'long' rows of recogs matches; its runs have seed: 0, 1, 2", 'cogen_lib.committed:execute_run'),
    ('verify-only-unknown', ['verify', 'recogs', '--profile', 'long', '--only', 'n_test=5'], 1, "--only n_test=...: no run of the committed 'long' rows of recogs has a parameter 'n_test'", 'cogen_lib.committed:execute_run'),
    ('site-out-missing', ['site', '--out', '{missing}'], 1, '--out {missing} is not a folder', 'cogen_lib.site:build_site'),
    ('site-out-file', ['site', '--out', '{text}'], 1, '--out {text} is not a folder', 'cogen_lib.site:build_site'),
    ('data-fetch-unknown', ['data', 'fetch', 'no-such-source'], 1, 'no-such-source', None),
    ('results-import-paper-typo', ['results', 'import', 'recgos', '{dir}'], 1, "no grid for paper 'recgos' (did you mean 'recogs'?)", 'cogen_lib.runner:import_results'),
    ('results-import-missing', ['results', 'import', 'recogs', '{missing}'], 1, 'no result files', None),
    ('unknown-paper', ['nopaper', 'x'], 2, "No such command 'nopaper'", None),
    # recogs
    ('recogs-score-pred-binary', ['recogs', 'score', '{bin}', '--gold', '{gold}'], 1, 'prediction file {bin} line 1: not UTF-8 text', None),
    ('recogs-score-gold-binary', ['recogs', 'score', '{pred}', '--gold', '{bin}'], 1, 'gold file {bin} line 1: not UTF-8 text', None),
    ('recogs-score-pred-folder', ['recogs', 'score', '{dir}', '--gold', '{gold}'], 1, 'prediction file {dir} is a folder', None),
    ('recogs-score-pred-missing', ['recogs', 'score', '{missing}', '--gold', '{gold}'], 1, 'prediction file {missing} does not exist', None),
    ('recogs-score-metric', ['recogs', 'score', '{pred}', '--gold', '{gold}', '--metric', 'bleu'], 1, "unknown --metric 'bleu'", None),
    ('recogs-convert-out-sys', ['recogs', 'convert', '--variant', 'cogs', '--split', 'dev', '--out', '{sys}/x.tsv'], 1, '--out {sys}/x.tsv: cannot create files in /sys', 'cogen_lib.recogs.rewrites:convert'),
    ('recogs-convert-out-folder', ['recogs', 'convert', '--variant', 'cogs', '--split', 'dev', '--out', '{dir}'], 1, '--out {dir} is a folder', 'cogen_lib.recogs.rewrites:convert'),
    ('recogs-convert-out-under-file', ['recogs', 'convert', '--variant', 'cogs', '--split', 'dev', '--out', '{text}/x.tsv'], 1, '{text} is a file, so nothing', 'cogen_lib.recogs.rewrites:convert'),
    ('recogs-convert-split', ['recogs', 'convert', '--variant', 'cogs', '--split', 'valid', '--out', '{missing}'], 1, "unknown --split 'valid'", 'cogen_lib.recogs.rewrites:convert'),
    ('recogs-convert-seed', ['recogs', 'convert', '--variant', 'cogs', '--split', 'dev', '--seed', '-1', '--out', '{missing}'], 2, "'--seed'", 'cogen_lib.recogs.rewrites:convert'),
    # cocoa
    ('cocoa-generate-out-folder', ['cocoa', 'generate', '--out', '{dir}'], 1, '--out {dir} is a folder', 'cogen_lib.cocoa.generate:generate'),
    ('cocoa-generate-out-sys', ['cocoa', 'generate', '--out', '{sys}/a.jsonl'], 1, '--out {sys}/a.jsonl: cannot create files in /sys', 'cogen_lib.cocoa.generate:generate'),
    ('cocoa-generate-per-config', ['cocoa', 'generate', '--per-config', '0', '--out', '{missing}'], 2, "'--per-config'", 'cogen_lib.cocoa.generate:generate'),
    ('cocoa-generate-routes', ['cocoa', 'generate', '--routes', '0', '--out', '{missing}'], 2, "'--routes'", 'cogen_lib.cocoa.generate:generate'),
    ('cocoa-generate-sets', ['cocoa', 'generate', '--sets-per-query', '-1', '--out', '{missing}'], 2, "'--sets-per-query'", 'cogen_lib.cocoa.generate:generate'),
    ('cocoa-stats-binary', ['cocoa', 'stats', '{bin}'], 1, 'bin.dat line 1: not UTF-8 text', None),
    ('cocoa-stats-folder', ['cocoa', 'stats', '{dir}'], 1, '{dir} is a folder', None),
    ('cocoa-score-empty-model', ['cocoa', 'score', '{text}', '--model', '{dir}'], 1, '--model {dir} is a folder without config.json: it holds no model', 'cogen_lib.models:load_model'),
    ('cocoa-score-limit', ['cocoa', 'score', '{text}', '--model', 'x', '--limit', '0'], 2, "'--limit'", None),
    # spor
    ('spor-build-out-file', ['spor', 'build', '--aspect', 'productivity', '--dataset', 'webnlg', '--n', '3', '--out', '{text}'], 1, '--out {text} is a file; give a folder', 'cogen_lib.spor.release:build'),
    ('spor-build-out-sys', ['spor', 'build', '--aspect', 'productivity', '--dataset', 'webnlg', '--n', '3', '--out', '{sys}'], 1, '--out {sys}: cannot create files in /sys', 'cogen_lib.spor.release:build'),
    ('spor-build-workers', ['spor', 'build', '--aspect', 'systematicity', '--dataset', 'webnlg', '--workers', '0', '--out', '{missing}'], 2, "'--workers'", 'cogen_lib.spor.release:build'),
    # --n and --tries are checked by the library (tests/test_spor_construction.py; --tries only after loading the corpus)
    ('spor-build-n', ['spor', 'build', '--aspect', 'productivity', '--dataset', 'webnlg', '--n', '0', '--out', '{missing}'], 1, 'threshold N=0 is outside 1..7', None),
    ('spor-score-pred-binary', ['spor', 'score', '{bin}', '--aspect', 'systematicity', '--split', '{dir}'], 1, 'predictions file {bin} line 1: not UTF-8 text', None),
    ('spor-score-pred-folder', ['spor', 'score', '{dir}', '--aspect', 'systematicity', '--split', '{dir}'], 1, 'predictions file {dir} is a folder', None),
    # cggc
    ('cggc-build-kg-binary', ['cggc', 'build', '--kg', 'conceptnet5', '--kg-path', '{bin}', '--out', '{missing}'], 1, '--kg-path {bin} line 1: not UTF-8 text', 'cogen_lib.cggc.graphs:build_graphs'),
    ('cggc-build-kg-folder', ['cggc', 'build', '--kg', 'conceptnet5', '--kg-path', '{dir}', '--out', '{missing}'], 1, '--kg-path {dir} is a folder', 'cogen_lib.cggc.graphs:build_graphs'),
    ('cggc-build-workers', ['cggc', 'build', '--workers', '-2', '--out', '{missing}'], 2, "'--workers'", 'cogen_lib.cggc.graphs:build_graphs'),
    ('cggc-build-out-file', ['cggc', 'build', '--out', '{text}'], 1, '--out {text} is a file; give a folder', 'cogen_lib.cggc.graphs:build_graphs'),
    ('cggc-stats-graphs-missing', ['cggc', 'stats', '{missing}'], 1, 'GRAPHS {missing} does not exist; pass the --out folder of `cogen cggc build`', None),
    ('cggc-stats-graphs-empty-folder', ['cggc', 'stats', '{dir}'], 1, 'GRAPHS {dir} holds no graphs.jsonl', None),
    ('cggc-stats-graphs-binary', ['cggc', 'stats', '{bin}'], 1, 'GRAPHS {bin} line 1: not UTF-8 text', None),
    ('cggc-stats-min-samples', ['cggc', 'stats', '{dir}', '--min-samples', '-1'], 2, "'--min-samples'", None),
    ('cggc-prompts-shots', ['cggc', 'prompts', '{dir}', '--setting', 'id', '--shots', '0', '--out', '{missing}'], 2, "'--shots'", None),
    ('cggc-prompts-out-sys', ['cggc', 'prompts', '{dir}', '--setting', 'id', '--out', '{sys}/p.jsonl'], 1, '--out {sys}/p.jsonl: cannot create files in /sys', 'cogen_lib.cggc.prompts:make_prompts'),
    ('cggc-prompts-out-folder', ['cggc', 'prompts', '{dir}', '--setting', 'id', '--out', '{dir}'], 1, '--out {dir} is a folder', 'cogen_lib.cggc.prompts:make_prompts'),
    ('cggc-score-pred-binary', ['cggc', 'score', '{bin}'], 1, 'predictions file {bin} line 1: not UTF-8 text', None),
    ('cggc-score-pred-folder', ['cggc', 'score', '{dir}'], 1, 'predictions file {dir} is a folder', None),
]


@pytest.fixture
def paths(tmp_path) -> dict:
    (tmp_path/'bin.dat').write_bytes(b'\x89PNG\r\n\x1a\n\x00\xff')
    (tmp_path/'text.txt').write_text('some text\n', encoding='utf-8')
    (tmp_path/'folder').mkdir()
    (tmp_path/'gold.tsv').write_text('A cat ran .\tcat ( x _ 1 )\tin_distribution\n', encoding='utf-8')
    (tmp_path/'pred.tsv').write_text('A cat ran .\tcat ( x _ 1 )\n', encoding='utf-8')
    return dict(bin=tmp_path/'bin.dat', text=tmp_path/'text.txt', dir=tmp_path/'folder', missing=tmp_path/'missing'/'x.out',
                gold=tmp_path/'gold.tsv', pred=tmp_path/'pred.tsv', sys='/sys/cogen-test-no-such-dir')


@pytest.fixture
def readonly(tmp_path):
    "A folder this process cannot create files in: mode 0555 for a user, the immutable attribute for root."
    d = tmp_path/'ro'; d.mkdir()
    if os.geteuid() != 0:
        d.chmod(0o555); yield d; d.chmod(0o755); return
    if not shutil.which('chattr') or subprocess.run(['chattr', '+i', str(d)], capture_output=True).returncode:
        pytest.skip('running as root without chattr +i (e.g. on tmpfs): no way to make a folder read-only for root')
    try: yield d
    finally: subprocess.run(['chattr', '-i', str(d)], check=True)


def fill(s: str, p: dict) -> str:
    return s.format(**{k: str(v) for k, v in p.items()})


def invoke(args: list[str]):
    return CliRunner().invoke(app, args)


def check(res, code: int, msg: str):
    "Exit status `code`; the error names `msg`; no exception escaped (a traceback in the real process)."
    escaped = res.exception if res.exception is not None and not isinstance(res.exception, SystemExit) else None
    assert escaped is None, f'{type(escaped).__name__} escaped the command: {escaped!r}'
    assert res.exit_code == code, (res.exit_code, res.output)
    assert 'Traceback' not in res.output
    if code == 1:                    # ours: exactly one `error:` line, on stderr, naming what is wrong
        lines = [l for l in res.stderr.splitlines() if l.strip()]
        assert len(lines) == 1 and lines[0].startswith('error: '), res.stderr
        assert msg in lines[0], (msg, lines[0])
    else:                            # typer's usage error: names the option or command
        assert msg in res.stderr and ('Invalid value' in res.stderr or 'No such command' in res.stderr), res.stderr


def forbid(monkeypatch, target):
    "Make `module:attr` fail the test if called: the check must come before the work."
    if target is None: return
    mod, attr = target.split(':')
    def called(*a, **k): raise AssertionError(f'{target} was called: the bad input was not caught before the work')
    monkeypatch.setattr(__import__(mod, fromlist=[attr]), attr, called)


@pytest.mark.parametrize('args,code,msg,target', [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input(paths, monkeypatch, args, code, msg, target):
    forbid(monkeypatch, target)
    check(invoke([fill(a, paths) for a in args]), code, fill(msg, paths))


RO_CASES = [
    ('recogs', ['recogs', 'convert', '--variant', 'cogs', '--split', 'dev', '--out', '{ro}/x.tsv'], 'cogen_lib.recogs.rewrites:convert'),
    ('cggc', ['cggc', 'prompts', '{dir}', '--setting', 'id', '--out', '{ro}/p.jsonl'], 'cogen_lib.cggc.prompts:make_prompts'),
    ('cocoa', ['cocoa', 'generate', '--out', '{ro}/a.jsonl'], 'cogen_lib.cocoa.generate:generate'),
    ('spor', ['spor', 'build', '--aspect', 'productivity', '--dataset', 'webnlg', '--n', '3', '--out', '{ro}/split'], 'cogen_lib.spor.release:build'),
    ('run', ['run', 'quickstart', '--out', '{ro}/out'], 'cogen_lib.runner:run_grid'),
]


@pytest.mark.parametrize('args,target', [c[1:] for c in RO_CASES], ids=[c[0] for c in RO_CASES])
def test_readonly_out(paths, readonly, monkeypatch, args, target):
    "--out in a read-only folder: refused before the work, as a user and as root."
    forbid(monkeypatch, target)
    p = dict(paths, ro=readonly)
    check(invoke([fill(a, p) for a in args]), 1, f'the folder {readonly} is not writable')


def test_write_failure_is_one_line(paths, monkeypatch):
    "What the checks cannot foresee (a disk that fills up while writing) is still one line, through cli_command."
    import cogen_lib.core as core
    def full(*a, **k): raise OSError(28, 'No space left on device', str(paths['missing']))
    monkeypatch.setattr(core, 'atomic_write_text', full)
    monkeypatch.setattr('cogen_lib.recogs.cli.atomic_write_text', full)
    monkeypatch.setattr('cogen_lib.recogs.rewrites.convert', lambda v, s, seed: dict(sentence=['a'], lf=['b'], type=['c']))
    res = invoke(['recogs', 'convert', '--variant', 'cogs', '--split', 'dev', '--out', str(paths['missing'])])
    check(res, 1, f"{paths['missing']}: No space left on device")


@pytest.mark.parametrize('args,msg', [
    (['spor', 'build', '--aspect', 'productivity', '--dataset', 'webnlg', '--n', '3', '--out', '{text}'], '--out {text} is a file'),
    (['cggc', 'score', '{bin}'], 'predictions file {bin} line 1: not UTF-8 text'),
    (['recogs', 'convert', '--variant', 'cogs', '--split', 'dev', '--out', '{sys}/x.tsv'], 'cannot create files in /sys'),
    (['cocoa', 'score', '{text}', '--model', '{dir}'], 'holds no model'),
    (['run', 'quickstart', '--model', 'no/such-model'], 'use registered weights'),
], ids=['spor-build', 'cggc-score', 'recogs-convert', 'cocoa-score', 'run-model'])
def test_real_process(paths, args, msg):
    "The installed `cogen` executable prints the same single line and no traceback."
    r = subprocess.run([str(COGEN), *[fill(a, paths) for a in args]], capture_output=True, text=True, timeout=120,
                       env={**os.environ, 'COLUMNS': '200'})
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert 'Traceback' not in r.stderr and r.stdout == ''
    lines = [l for l in r.stderr.splitlines() if l.strip()]
    assert len(lines) == 1 and lines[0].startswith('error: ') and fill(msg, paths) in lines[0], r.stderr
