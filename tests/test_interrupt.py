"Ctrl-C during `cogen run`: one line saying how to resume, exit status 130, no traceback; the rerun finishes the grid."
import os, shutil, signal, subprocess, sys, time
from pathlib import Path

FIX = Path(__file__).resolve().parent/'fixtures'/'toy'
COGEN = Path(sys.executable).parent/'cogen'

def test_ctrl_c_during_run_says_how_to_resume(tmp_path):
    proj = tmp_path/'proj'
    shutil.copytree(FIX, proj); (proj/'settings.ini').write_text('[DEFAULT]\n')   # a project of its own: grids/toy.yaml
    cmd = [str(COGEN), 'run', 'toy', '--profile', 'smoke']
    # a new session: Ctrl-C in a terminal signals the whole foreground process group (cogen and the notebook kernel)
    # with SIGINT at its default, as in a terminal: an ignored SIGINT is inherited, and an earlier in-process test of
    # `cogen` (CliRunner) leaves this pytest process ignoring it
    p = subprocess.Popen(cmd, cwd=proj, start_new_session=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    t0 = time.monotonic()
    while not list((proj/'runs'/'toy').glob('*.ipynb')) and time.monotonic() - t0 < 120: time.sleep(0.1)
    time.sleep(0.5)                                         # inside the first run's execution
    assert p.poll() is None, "the grid finished before it could be interrupted"
    os.killpg(p.pid, signal.SIGINT)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 130, (p.returncode, out, err)
    assert 'interrupted; run again to resume' in err, err
    assert 'Traceback' not in out + err and 'zmq' not in out + err, out + err
    res = subprocess.run(cmd, cwd=proj, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert len(list((proj/'results'/'toy').glob('*.csv'))) == 6
