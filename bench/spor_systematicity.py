"""SPOR systematicity tries: `cogen_lib.spor.systematicity` fast path vs the readable baseline, same seeds, same splits.

Run from the repository root:
    COGEN_MIRROR=/path/to/shared/data .venv/bin/python bench/spor_systematicity.py [--dataset webnlg|e2e|both] [--tries 5]
        [--base-tries B] [--seed 0]

For each dataset, tries 0..T-1 of seed S (each try its own `SeedSequence(S, spawn_key=(t,))` stream) run with the fast
implementation (`run_try(impl='fast')`: the numba-compiled kernel, a driver over named steps of both algorithms, over an
atom -> samples inverted index, an atom-pair matrix, incrementally updated V, a heap over groups of Atom samples with
equal kept atoms and a running divergence),
and the first B of them (default: all) also with `baseline_cluster` (a direct transcription of Algorithms 1 and 2 with
full scans), one process, in alternation. Every cluster's test, Atom, Combination (same order) and atom counts must be
identical, else the script exits 1. It prints, per try and as medians, wall and process-CPU seconds of each, the ratio
(baseline / fast, on the tries both ran), the cost of `fast_score` (what `search` runs per try: no split objects), and
what 20,000 tries (the authors' count) would take on 2 workers at that rate. The authors' own code takes 1.1-2.7 s per
try on WebNLG and 18-27 s on E2E (their report). The index is built and the kernel compiled (or loaded from numba's
cache) before timing; that time is printed separately.
"""
import argparse, os, statistics, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cogen_lib.spor.data import load_corpus
from cogen_lib.spor import systematicity as S


def key(splits):
    return [(cs.test, cs.atom, cs.comb, cs.atom_counts, cs.comb_counts) for cs in splits]


def timed(f, *a, **k):
    w, c = time.perf_counter(), time.process_time()
    r = f(*a, **k)
    return r, time.perf_counter() - w, time.process_time() - c


def bench(dataset: str, tries: int, base_tries: int, seed: int) -> bool:
    P = S.make_problem(load_corpus(dataset))
    _, setup, _ = timed(S.run_try, P, seed, 0, tries)          # builds the flat index, compiles/loads the kernel
    fast, fcpu, score, base, bcpu, ok = [], [], [], [], [], True
    for t in range(tries):
        sf, w, c = timed(S.run_try, P, seed, t, tries, impl='fast'); fast.append(w); fcpu.append(c)
        _, w, c = timed(S.fast_score, P, S.try_ranks(len(P.samples), seed, t, tries)); score.append(c)
        line = f"  {dataset} try {t}: fast {1000 * fast[-1]:.0f} ms (cpu {1000 * fcpu[-1]:.0f})"
        if t < base_tries:
            sb, w, c = timed(S.run_try, P, seed, t, tries, impl='baseline'); base.append(w); bcpu.append(c)
            same = key(sf) == key(sb)
            ok &= same
            line += f", baseline {base[-1]:.2f} s (cpu {bcpu[-1]:.2f}), identical: {same}"
        print(line + f", test units {S.try_score(P, sf)}", flush=True)
    med = statistics.median
    nb = len(base)
    print(f"{dataset}: {len(P.samples):,} samples in {len(P.clusters):,} clusters; index + kernel ready in {setup:.2f} s; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{dataset}: median per try  fast {1000 * med(fast):.1f} ms wall / {1000 * med(fcpu):.1f} ms cpu "
          f"(fast_score {1000 * med(score):.1f} ms cpu)", end='')
    if nb:
        print(f"  baseline {1000 * med(base):.0f} ms wall / {1000 * med(bcpu):.0f} ms cpu  "
              f"ratio {med(base) / med(fast[:nb]):.1f}x wall, {med(bcpu) / med(fcpu[:nb]):.1f}x cpu "
              f"(identical splits on all {nb} baseline tries: {ok})", end='')
    print(f"; 20,000 tries on 2 idle workers ~ {20000 * med(score) / 2 / 60:.1f} min of cpu")
    return ok


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--dataset', default='both', choices=['webnlg', 'e2e', 'both'])
    ap.add_argument('--tries', type=int, default=5)
    ap.add_argument('--base-tries', type=int, default=None, help='tries also run with the baseline (default: all)')
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    print(f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} (a shared machine: compare the ratio, not seconds)")
    bt = a.tries if a.base_tries is None else a.base_tries
    ok = all([bench(d, a.tries, bt, a.seed) for d in (['webnlg', 'e2e'] if a.dataset == 'both' else [a.dataset])])
    sys.exit(0 if ok else 1)
