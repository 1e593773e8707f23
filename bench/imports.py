"""Start-up cost of what paper notebooks import: `import cogen_lib.results` (their `Recorder`, `save_figure`,
`summary_rows`) against `import cogen_lib.runner` (the executor, which loads nbclient and jupyter_client), each in a
fresh interpreter, alternating, median of --repeats. Goal: cogen_lib.results under 0.5 s on a quiet machine.

Run from the repository root:  .venv/bin/python bench/imports.py [--repeats 7]
(tests/test_import_graph.py checks *what* cogen_lib.results loads; this measures how long it takes.)"""
import argparse, os, statistics, subprocess, sys

def fresh_import(mod: str) -> float:
    "Seconds `import mod` takes in a new interpreter (the interpreter's own start-up excluded)."
    code = f"import time; t = time.perf_counter(); import {mod}; print(time.perf_counter() - t)"
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True)
    return float(r.stdout.strip().splitlines()[-1])

if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--repeats', type=int, default=7)
    args = ap.parse_args()
    times = {'cogen_lib.results': [], 'cogen_lib.runner': []}
    for _ in range(args.repeats):
        for m in times: times[m].append(fresh_import(m))
    load = ', '.join(f'{x:.2f}' for x in os.getloadavg())
    med = {m: statistics.median(v) for m, v in times.items()}
    for m, v in times.items(): print(f"import {m}: median {med[m]:.3f} s (min {min(v):.3f}, max {max(v):.3f}; {args.repeats} fresh interpreters)")
    print(f"cogen_lib.runner / cogen_lib.results: {med['cogen_lib.runner'] / med['cogen_lib.results']:.1f}x; load average {load}")
