"""Ctrl-C during `cogen run`: one line saying how to resume, exit status 130, no traceback; the rerun finishes the grid.
The `cogen` executable runs the console entry point named in settings.ini (`cogen_lib.cli:main`), which alone ignores
further Ctrl-C on its way out; a command invoked in-process leaves the caller's SIGINT handling untouched."""
import configparser, os, shutil, signal, subprocess, sys, time
from pathlib import Path
from typer.testing import CliRunner

ROOT = Path(__file__).resolve().parents[1]
FIX = Path(__file__).resolve().parent/'fixtures'/'toy'

def entry_point() -> tuple[str, str]:
    "The (module, function) of the `cogen` console script in settings.ini."
    cfg = configparser.ConfigParser(); cfg.read(ROOT/'settings.ini')
    name, target = cfg['DEFAULT']['console_scripts'].split('=', 1)
    assert name.strip() == 'cogen', name
    mod, fn = target.strip().split(':')
    return mod, fn

def test_entry_point_is_main():
    # `app` itself would leave the interrupted process without the guard against a second Ctrl-C while it exits
    assert entry_point() == ('cogen_lib.cli', 'main')

def test_in_process_ctrl_c_leaves_sigint_alone(monkeypatch):
    import cogen_lib.runner
    from cogen_lib.cli import app
    def ctrl_c(*args, **kw): raise KeyboardInterrupt
    monkeypatch.setattr(cogen_lib.runner, 'run_grid', ctrl_c)
    before = signal.getsignal(signal.SIGINT)
    res = CliRunner().invoke(app, ['run', 'quickstart'])             # a paper with a grid: its name and grid are checked first
    assert res.exit_code == 130, res.output
    assert 'interrupted; run again to resume' in res.output
    assert signal.getsignal(signal.SIGINT) is before, "an in-process command changed this process's SIGINT handler"

def test_ctrl_c_during_run_says_how_to_resume(tmp_path):
    proj = tmp_path/'proj'
    shutil.copytree(FIX, proj); (proj/'settings.ini').write_text('[DEFAULT]\n')   # a project of its own: grids/toy.yaml
    mod, fn = entry_point()
    # what the installed `cogen` script does, without depending on how (or from which tree) it was installed
    cmd = [sys.executable, '-c', f'import sys; from {mod} import {fn}; sys.argv[0] = "cogen"; sys.exit({fn}())',
           'run', 'toy', '--profile', 'smoke']
    env = {**os.environ, 'PYTHONPATH': os.pathsep.join([str(ROOT)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p])}
    # a new session: Ctrl-C in a terminal signals the whole foreground process group (cogen and the notebook kernel),
    # with SIGINT at its default as in a terminal (an ignored SIGINT would be inherited from this process)
    p = subprocess.Popen(cmd, cwd=proj, env=env, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.monotonic()
    while not list((proj/'runs'/'toy').glob('*.ipynb')) and time.monotonic() - t0 < 120: time.sleep(0.1)
    time.sleep(0.5)                                         # inside the first run's execution
    assert p.poll() is None, "the grid finished before it could be interrupted"
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, out, err)
    assert 'interrupted; run again to resume' in err, err
    assert 'Traceback' not in out + err and 'zmq' not in out + err, out + err
    res = subprocess.run(cmd, cwd=proj, env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert len(list((proj/'results'/'toy').glob('*.csv'))) == 6
