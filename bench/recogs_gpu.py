"""ReCOGS on a lent GPU in one call: the `long` profile's 10-epoch recogs-v2 runs, 3 seeds side by side, stopped cleanly
before a wall limit, leaving what `cogen results import recogs DIR --profile long` takes.

Here, once per session that has a GPU (PyPI and the data mirror work here; nothing can be fetched there):
  COGEN_MIRROR=../shared/data .venv/bin/python bench/recogs_gpu.py --prepare
writes the kit `.gpu/` (ignored through .git/info/exclude, so it travels only when carried): `whl/`, wheels of the
runner's Jupyter stack that the device image lacks (`KIT`, at the versions requirements.txt pins, for its Python 3.12:
31 wheels, 4.5 MiB), and `mirror.tar.gz`, the COGS files (1.6 MiB). The image has torch, pandas, numpy, scipy, PyYAML,
tqdm; `.venv` cannot travel (GBs; the tree is limited to 64 MiB) nor be made there (no network). The kit was checked
here, built for Python 3.11, in a bare venv holding only packages the image has: the dry run below ran from it. It
prints the device command, with the commit of this tree filled in:
  python3 bench/recogs_gpu.py --kit .gpu --commit <sha> --out $OUT          (device tool: carry [".gpu"], timeout_s 600)

There, within `--limit` seconds (540) from its start, it:
  1. installs the kit's wheels into <work>/site (skipped when there: a warm machine keeps <work>, /tmp/cogen_gpu),
     unpacks the mirror, and any `<kit>/checkpoints/*.tar` an earlier call brought back, into the cogen cache;
  2. checks that torch sees the GPU that nvidia-smi lists (the rows' `device` column is nvidia-smi's: a run that fell
     back to the CPU would be labelled a GPU run);
  3. runs the phases, each a `cogen run recogs --profile long --only ... --executor local --workers 3` (the runner's
     `run_grid`, without the summaries, in a process session of its own): the greedy runs of `--variant` at `--epochs`
     (seeds 0-2 side by side: each trains its model), then its distinct-indices runs (the same three models: a
     checkpoint is keyed by the training settings, not the decoding, so they only decode; run after the greedy ones so
     that two runs never train one model at once), then the `long` runs of each `--comparators` variant at the same
     epochs (COGS and ReCOGS_pos: the budget is matched by epochs; committed rows are reused, not executed again). The runs use CUDA when torch has it (the experiment notebook's rule); their `threads: 1` is
     the torch CPU threads of each. A phase starts only with `--min-phase` seconds left;
  4. at `--limit` minus `--reserve` seconds it sends Ctrl-C to the running phase (the runner marks the interrupted runs
     failed, never keeps their rows); training is checkpointed every epoch, so a rerun resumes at the last whole epoch;
  5. writes to `--out`: `recogs_long.tar.gz` (results/recogs/<run>.csv and .items.csv.gz, runs/recogs/<run>.json
     manifests, .ipynb and .kernel.log of every run under <work>), `recogs_gpu.log` (this output), and, when a phase
     was stopped, the newest training checkpoints as `ckpt-<hash>.tar` (weights and AdamW state, about 14.5 MiB for
     this model: at most 3, within the tool's 16 MiB a file and 64 MiB in all).
Exit status 0: every phase finished; 3: stopped at the limit (run it again: on the warm machine fresh runs are skipped
and training resumes from <work>'s cache; on a fresh one, put ckpt-*.tar files into .gpu/checkpoints/: beside the 28 MiB
tree and the 6 MiB kit two just fit the tool's 64 MiB, three do not); 1: a phase failed (its kernel logs are in the
tar).

Then here: `mkdir -p /tmp/gpu && tar xzf <files_at>/recogs_long.tar.gz -C /tmp/gpu && .venv/bin/cogen results import
recogs /tmp/gpu --profile long`, and commit results/recogs/long/ (the rows carry device, commit and wall_seconds).

Timings that size a call: alone on an H200 a recogs-v2 epoch of this model took 33 s (measured/recogs_gpu/README.md);
three side by side are unmeasured (six paper-size runs at once gave 3x the throughput of one). On top: converting the
variant's splits in each run's kernel (recogs-v2 train alone took 37 CPU seconds here), and decoding all 27,000 rows
of dev, test and gen per run (greedy and distinct-indices). So the greedy phase likely meets the limit near its last
epochs, and a second call right after (the machine stays warm 30 s) finishes it and runs the distinct-indices phase.
`--prepare`, `--kit` and the limits are all this script adds: what a run computes is the runner's and the notebook's.

A CPU dry run (tests/test_recogs_gpu.py): `--root` a project with a tiny grid, `--variant cogs --epochs 1 --workers 1`.
"""
import argparse, json, os, shutil, signal, subprocess, sys, tarfile, threading, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAPER = 'recogs'
KIT = ('asttokens', 'comm', 'entrypoints', 'executing', 'fastcore', 'fastjsonschema', 'ipykernel', 'ipython',
       'ipython_pygments_lexers', 'jsonschema', 'jsonschema-specifications', 'jupyter_client', 'jupyter_core',
       'matplotlib-inline', 'nbclient', 'nbformat', 'nest-asyncio2', 'papermill', 'pexpect', 'platformdirs',
       'prompt_toolkit', 'ptyprocess', 'pure_eval', 'pyzmq', 'referencing', 'rpds-py', 'stack-data', 'tenacity',
       'tornado', 'traitlets', 'wcwidth')
"""What the device image lacks of what the runner (papermill, nbclient, ipykernel) and cogen_lib import, found by
`pip download` of papermill, nbclient, ipykernel and fastcore with their dependencies, less the packages the image
holds (/work/.library/device/KINDS.md). Left out: debugpy and jedi (5 MB each), which ipykernel and IPython use only
when present (a debugger, completions)."""
PLATFORMS = ('manylinux_2_28_x86_64', 'manylinux_2_27_x86_64', 'manylinux_2_26_x86_64', 'manylinux_2_17_x86_64',
             'manylinux2014_x86_64', 'manylinux1_x86_64')
MAX_FILE = 16 * 2**20      # the device tool brings back at most 8 files of at most 16 MiB each,
MAX_TOTAL = 60 * 2**20     # 64 MiB together (over it, nothing may come back): this script keeps 4 MiB spare
MAX_CHECKPOINTS = 3        # the seeds trained side by side


def pins(root: Path = ROOT) -> dict:
    "The versions requirements.txt pins, by normalised name."
    norm = lambda s: s.strip().lower().replace('_', '-')
    out = {}
    for line in (root/'requirements.txt').read_text().splitlines():
        name, eq, ver = line.split('#')[0].partition('==')
        if eq: out[norm(name)] = ver.strip()
    return {k: out.get(norm(k)) for k in KIT}


def prepare_wheels(kit: Path, root: Path = ROOT) -> list[Path]:
    "Download the `KIT` wheels at their pinned versions for the device's Python 3.12 into `kit/whl`."
    missing = [k for k, v in pins(root).items() if not v]
    if missing: sys.exit(f"prepare: requirements.txt pins no version of {', '.join(missing)}; pin them or edit KIT")
    whl = kit/'whl'; whl.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, '-m', 'pip', 'download', '-q', '--no-deps', '--only-binary=:all:',
           '--python-version', '3.12', '--implementation', 'cp', *[a for p in PLATFORMS for a in ('--platform', p)],
           '-d', str(whl),
           *[f'{k}=={v}' for k, v in pins(root).items()]]
    subprocess.run(cmd, check=True)
    return sorted(whl.glob('*.whl'))


def prepare_mirror(kit: Path) -> Path:
    """The COGS files as `kit/mirror.tar.gz`, laid out <source>/<file> as a mirror is: the verified copies of the cogen
    cache (fetched from $COGEN_MIRROR or upstream if needed)."""
    sys.path.insert(0, str(ROOT))
    from cogen_lib.data import fetch, source_files
    kit.mkdir(parents=True, exist_ok=True)
    out = kit/'mirror.tar.gz'
    with tarfile.open(out, 'w:gz') as t:
        for sf in source_files('cogs'): t.add(fetch(sf), arcname=sf.path)
    return out


def exclude(root: Path, pattern: str) -> None:
    "Add `pattern` to the checkout's .git/info/exclude (where there is a .git folder), once."
    info = root/'.git'/'info'
    if not (root/'.git').is_dir(): return
    info.mkdir(exist_ok=True); f = info/'exclude'
    lines = f.read_text().splitlines() if f.exists() else []
    if pattern not in lines: f.write_text('\n'.join(lines + [pattern]) + '\n')


def install_kit(kit: Path, work: Path, log) -> dict:
    """Install `kit/whl/*.whl` into `work/site` (once per set of wheels), unpack `kit/mirror.tar.gz` into `work/mirror`
    and `kit/checkpoints/*.tar` into `work/cache`. Returns the environment variables they need."""
    env = {}
    wheels = sorted((kit/'whl').glob('*.whl'))
    if wheels:
        site, stamp = work/'site', work/'site.json'
        names = [w.name for w in wheels]
        if not (stamp.exists() and json.loads(stamp.read_text()) == names):
            t0 = time.monotonic()
            shutil.rmtree(site, ignore_errors=True)
            subprocess.run([sys.executable, '-m', 'pip', 'install', '-q', '--no-index', '--no-deps', '--no-compile',
                            '--no-cache-dir', '--target', str(site), *map(str, wheels)], check=True)
            stamp.write_text(json.dumps(names))
            log(f"kit: installed {len(wheels)} wheels into {site} in {time.monotonic() - t0:.0f} s")
        env['PYTHONPATH'] = str(site)
    if (kit/'mirror.tar.gz').exists():
        with tarfile.open(kit/'mirror.tar.gz') as t: t.extractall(work/'mirror', filter='data')
        env['COGEN_MIRROR'] = str(work/'mirror')
    for ck in sorted((kit/'checkpoints').glob('*.tar')):
        with tarfile.open(ck) as t: t.extractall(work/'cache', filter='data')
        log(f"kit: checkpoint {ck.name} unpacked into {work/'cache'}")
    return env


def gpu_names() -> list[str]:
    "The GPUs nvidia-smi lists (none without it)."
    try: r = subprocess.run(['nvidia-smi', '--query-gpu=name,memory.total,driver_version', '--format=csv,noheader'],
                            capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError): return []
    return [l.strip() for l in r.stdout.splitlines() if l.strip()] if r.returncode == 0 else []


def run_until(cmd: list[str], env: dict, deadline: float, log, grace: float = 30.0, cwd: Path | None = None) -> str:
    """Run `cmd` in a process session of its own, its output line by line to `log`, until it exits or the
    `time.monotonic()` `deadline` passes; then Ctrl-C to its whole process group, as a terminal sends it (the runner
    marks the interrupted runs failed and shuts their kernels down), and SIGKILL after `grace` more seconds.
    Returns 'done' (exit status 0), 'failed' (another) or 'stopped' (the deadline)."""
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                         start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    reader = threading.Thread(target=lambda: [log(l.rstrip('\n')) for l in p.stdout], daemon=True); reader.start()
    try: rc = p.wait(timeout=max(0.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        log(f"limit: Ctrl-C to the phase (pid {p.pid}); its finished runs stay, a rerun redoes the interrupted ones")
        try: os.killpg(p.pid, signal.SIGINT)
        except ProcessLookupError: pass
        try: p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            log(f"limit: the phase did not stop within {grace:.0f} s of Ctrl-C; killed")
            try: os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError: pass
            p.wait()
        reader.join(5)
        return 'stopped'
    reader.join(5)
    return 'done' if rc == 0 else 'failed'


def phases(variant: str, epochs: int, comparators: list[str]) -> list[tuple[str, list[str]]]:
    "The phases (name, `--only` items): `variant` at `epochs` greedy, then distinct-indices, then each comparator."
    main = [f'variant={variant}', f'epochs={epochs}']
    return ([(f'{variant} {epochs} epochs greedy', main + ['decoding=greedy']),
             (f'{variant} {epochs} epochs distinct-indices', main + ['decoding=distinct-indices'])]
            + [(f'{c} {epochs} epochs', [f'variant={c}', f'epochs={epochs}']) for c in comparators])


def pack(work_out: Path, dest: Path, profile: str) -> Path:
    """`dest/<paper>_<profile>.tar.gz`: the result files, per-item files, manifests, executed notebooks and kernel logs
    of every run under `work_out`, laid out as `cogen results import` reads an --out folder (results/, runs/)."""
    tar = dest/f'{PAPER}_{profile}.tar.gz'
    with tarfile.open(tar, 'w:gz') as t:
        for sub, pats in (('results', ('*.csv', '*.items.csv.gz')), ('runs', ('*.json', '*.ipynb', '*.kernel.log'))):
            for pat in pats:
                for f in sorted((work_out/sub/PAPER).glob(pat)): t.add(f, arcname=f'{sub}/{PAPER}/{f.name}')
    return tar


def bring_back_checkpoints(cache: Path, dest: Path, log) -> list[Path]:
    """The newest `MAX_CHECKPOINTS` training checkpoints under `cache` as `dest/ckpt-<hash>.tar`, each under `MAX_FILE`,
    all of `dest` under `MAX_TOTAL`."""
    cks = sorted((cache/PAPER/'checkpoints').glob('*/last.pt'), key=lambda p: p.stat().st_mtime, reverse=True)
    out, used = [], sum(f.stat().st_size for f in dest.iterdir() if f.is_file())
    for ck in cks[:MAX_CHECKPOINTS]:
        tar = dest/f'ckpt-{ck.parent.name[:16]}.tar'
        with tarfile.open(tar, 'w') as t:
            for f in sorted(ck.parent.iterdir()):
                if not f.name.startswith('.'): t.add(f, arcname=str(f.relative_to(cache)))
        size = tar.stat().st_size
        if size > MAX_FILE or used + size > MAX_TOTAL:
            log(f"checkpoint {ck.parent.name}: {size / 2**20:.1f} MiB, more than the device tool brings back; left out")
            tar.unlink(); continue
        out.append(tar); used += size
    return out


def child(spec: dict) -> int:
    "One phase: `run_grid` of the runner (what `cogen run` executes, without the summaries). Exit status 130 on Ctrl-C."
    from cogen_lib.core import CogenError
    from cogen_lib.runner import run_grid
    try: rep = run_grid(PAPER, spec['profile'], root=spec['root'], out=spec['out'], summary=False, executor='local',
                        workers=spec['workers'], only=spec['only'])
    except KeyboardInterrupt:
        print('interrupted', flush=True); return 130
    except CogenError as e:
        print(f"error: {e}", flush=True); return 2
    return 1 if rep.failed else 0


def parse(argv=None) -> argparse.Namespace:
    "The command line (`python3 bench/recogs_gpu.py --help`)."
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    arg = ap.add_argument
    arg('--prepare', action='store_true', help='here: write the kit into --kit (.gpu) and print the device command')
    arg('--kit', type=Path, default=None, help='the kit folder: wheels to install, mirror, checkpoints to resume from')
    arg('--out', type=Path, default=Path(os.environ['OUT']) if os.environ.get('OUT') else None,
        help="where the tar, the log and checkpoints go (default: $OUT)")
    arg('--work', type=Path, default=Path('/tmp/cogen_gpu'), help='runs, cache, wheels: a warm machine keeps it')
    arg('--cache', type=Path, default=None, help='COGEN_CACHE of the runs (default: <work>/cache)')
    arg('--root', type=Path, default=ROOT, help='the project whose grids/recogs.yaml and notebook run')
    arg('--commit', default=os.environ.get('COGEN_COMMIT', ''), help='the commit the rows record ($COGEN_COMMIT, git)')
    arg('--profile', default='long')
    arg('--variant', default='recogs-v2')
    arg('--epochs', type=int, default=10)
    arg('--comparators', nargs='*', default=['cogs', 'recogs-pos'], help='variants whose profile runs come last')
    arg('--workers', type=int, default=3, help='runs at once')
    arg('--limit', type=float, default=540.0, help='seconds from the start to the end of this script')
    arg('--reserve', type=float, default=30.0, help='seconds kept for stopping the last phase and packing')
    arg('--min-phase', type=float, default=90.0, help='start a phase only with this many seconds left')
    arg('--child', default=None, help=argparse.SUPPRESS)
    return ap.parse_args(argv)


def prepare(kit: Path) -> int:
    "`--prepare`: the kit, ignored by git, and the device command with this tree's commit."
    if kit.resolve().is_relative_to(ROOT): exclude(ROOT, f"/{kit.resolve().relative_to(ROOT)}/")
    wheels = prepare_wheels(kit); mirror = prepare_mirror(kit)      # (prepare_mirror puts ROOT on sys.path)
    size = sum(f.stat().st_size for f in [*wheels, mirror]) / 2**20
    from cogen_lib.grid import git_commit
    print(f"kit {kit}: {len(wheels)} wheels and {mirror.name}, {size:.1f} MiB. On the device (carry [\"{kit.name}\"], "
          f"timeout_s 600):\n  python3 bench/recogs_gpu.py --kit {kit.name} --commit {git_commit(ROOT)} --out $OUT")
    return 0


def check_device(env: dict, log) -> bool:
    """Log the GPUs and what torch computes on; False when nvidia-smi lists a GPU that torch cannot use (the rows'
    `device` would name the GPU while the runs trained on the CPU)."""
    code = ('import json, torch; c = torch.cuda.is_available(); '
            'print(json.dumps([torch.__version__, c, torch.cuda.get_device_name(0) if c else "cpu"]))')
    probe = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True)
    try: version, cuda, where = json.loads(probe.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        log(f"error: torch cannot be imported: {probe.stderr.strip()[-500:]}"); return False
    gpus = gpu_names()
    log(f"device: {'; '.join(gpus) or 'no GPU (nvidia-smi lists none)'}; torch {version} computes on {where}; "
        f"{os.cpu_count()} cores; commit {env['COGEN_COMMIT']}")
    if gpus and not cuda: log("error: nvidia-smi lists a GPU that torch cannot use; fix torch/CUDA first")
    return not (gpus and not cuda)


def main(argv=None) -> int:
    a = parse(argv)
    if a.child is not None: return child(json.loads(a.child))
    if a.prepare: return prepare(a.kit or ROOT/'.gpu')
    t_start = time.monotonic(); deadline = t_start + a.limit
    if a.out is None: sys.exit('error: --out (or $OUT) is required')
    a.out.mkdir(parents=True, exist_ok=True); a.work.mkdir(parents=True, exist_ok=True)
    logf, lock = open(a.out/f'{PAPER}_gpu.log', 'a', encoding='utf-8'), threading.Lock()
    def log(s: str):
        line = f"[{time.monotonic() - t_start:6.1f} s] {s}"
        with lock: print(line, flush=True); logf.write(line + '\n'); logf.flush()
    env = {**os.environ, 'PYTHONUNBUFFERED': '1', 'HF_HUB_OFFLINE': '1', 'TRANSFORMERS_OFFLINE': '1'}
    env.setdefault('COGEN_HEARTBEAT', '30')
    kit_env = install_kit(a.kit, a.work, log) if a.kit is not None else {}
    env.update(kit_env)     # the kit's packages first, then this checkout's cogen_lib, then what the caller had
    paths = (kit_env.get('PYTHONPATH'), str(ROOT), os.environ.get('PYTHONPATH'))
    env['PYTHONPATH'] = os.pathsep.join(p for p in paths if p)
    cache = a.cache or a.work/'cache'; env['COGEN_CACHE'] = str(cache)
    if not a.commit:
        code = 'from cogen_lib.grid import git_commit; import sys; print(git_commit(sys.argv[1]))'
        r = subprocess.run([sys.executable, '-c', code, str(a.root)], env=env, capture_output=True, text=True)
        a.commit = r.stdout.strip()
    if a.commit in ('', 'unknown'):
        log(f"error: {a.root} is no git checkout, so the rows would record no commit; pass --commit <sha of the tree>")
        return 1
    env['COGEN_COMMIT'] = a.commit
    if not check_device(env, log): return 1
    out_dir, status = a.work/'out', {}
    for name, only in phases(a.variant, a.epochs, a.comparators):
        left = deadline - a.reserve - time.monotonic()
        if left < a.min_phase:
            log(f"phase {name}: not started, {max(left, 0):.0f} s left (--min-phase {a.min_phase:.0f})")
            status[name] = 'stopped'; continue
        spec = dict(profile=a.profile, root=str(a.root), out=str(out_dir), workers=a.workers, only=only)
        log(f"phase {name}: cogen run {PAPER} --profile {a.profile} " + ' '.join(f'--only {o}' for o in only)
            + f" --executor local --workers {a.workers} --out {out_dir} ({left:.0f} s left)")
        t0, cmd = time.monotonic(), [sys.executable, '-u', str(Path(__file__).resolve()), '--child', json.dumps(spec)]
        grace = min(30.0, a.reserve * 2 / 3)
        status[name] = run_until(cmd, env, deadline - a.reserve, lambda s: log(f"  {s}"), grace=grace, cwd=a.root)
        log(f"phase {name}: {status[name]} after {time.monotonic() - t0:.0f} s")
    tar = pack(out_dir, a.out, a.profile)
    states = [json.loads(f.read_text()).get('status') for f in sorted((out_dir/'runs'/PAPER).glob('*.json'))]
    counts = ', '.join(f"{states.count(s)} {s}" for s in sorted(set(map(str, states))))
    log(f"runs under {out_dir}: {counts or 'none'}; {tar.name} {tar.stat().st_size / 2**20:.1f} MiB")
    stopped = 'stopped' in status.values()
    if stopped:
        cks = bring_back_checkpoints(cache, a.out, log)
        log(f"stopped at the limit: run again to resume; {len(cks)} checkpoint(s) in --out (for a fresh machine: "
            f"{a.kit or '.gpu'}/checkpoints/)")
    log(f"here: mkdir -p /tmp/gpu && tar xzf {tar.name} -C /tmp/gpu && .venv/bin/cogen results import {PAPER} /tmp/gpu "
        f"--profile {a.profile}")
    logf.close()
    return 1 if 'failed' in status.values() else 3 if stopped else 0


if __name__ == '__main__':
    sys.exit(main())
