"""SPOR systematicity tries: `cogen_lib.spor.systematicity` fast path vs the readable baseline, same seeds, same splits.

Run from the repository root:
    COGEN_MIRROR=/path/to/shared/data .venv/bin/python bench/spor_systematicity.py [--dataset webnlg|e2e|both] [--tries 5] [--seed 0]

For each dataset, tries 0..T-1 of seed S (each try its own `SeedSequence(S, spawn_key=(t,))` stream) run once with the
fast implementation (`run_try(impl='fast')`: inverted index, pair-code set, incremental V with lazy heaps, running
divergence; the dense path for E2E's single 8,375-sample cluster) and once with `baseline_cluster` (a direct
transcription of Algorithms 1 and 2 with full scans), one process, in alternation. Every cluster's test, Atom,
Combination and atom counts must be identical, else the script exits 1. It prints the median seconds per try of each,
the ratio, and what 20,000 tries (the authors' count) would take on 2 workers at the fast rate. The authors' own code
takes 1.1-2.7 s per try on WebNLG and 18-27 s on E2E (their report). The per-cluster problem index is built before
timing (once per pool, shared by all tries); its build time is printed separately.
"""
import argparse, os, statistics, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cogen_lib.spor.data import load_corpus
from cogen_lib.spor import systematicity as S


def key(splits):
    return [(cs.test, cs.atom, sorted(cs.comb), cs.atom_counts, cs.comb_counts) for cs in splits]


def bench(dataset: str, tries: int, seed: int) -> bool:
    P = S.make_problem(load_corpus(dataset))
    t0 = time.perf_counter()
    for ci in range(len(P.clusters)): S._cluster_index(P, ci)
    S.run_try(P, seed, 0, tries)                       # builds the dense matrix of large clusters
    setup = time.perf_counter() - t0
    fast, base, ok = [], [], True
    for t in range(tries):
        a = time.perf_counter(); sf = S.run_try(P, seed, t, tries, impl='fast'); fast.append(time.perf_counter() - a)
        a = time.perf_counter(); sb = S.run_try(P, seed, t, tries, impl='baseline'); base.append(time.perf_counter() - a)
        same = key(sf) == key(sb)
        ok &= same
        print(f"  {dataset} try {t}: fast {fast[-1]:.3f} s, baseline {base[-1]:.3f} s, test units {S.try_score(P, sf)}, "
              f"identical: {same}", flush=True)
    mf, mb = statistics.median(fast), statistics.median(base)
    print(f"{dataset}: {len(P.samples):,} samples in {len(P.clusters):,} clusters; index built in {setup:.2f} s")
    print(f"{dataset}: median per try  fast {1000 * mf:.0f} ms  baseline {1000 * mb:.0f} ms  ratio {mb / mf:.1f}x  "
          f"(identical splits on all {tries} tries: {ok}); 20,000 tries on 2 workers ~ {20000 * mf / 2 / 60:.1f} min")
    return ok


if __name__ == '__main__':
    ap = argparse.ArgumentParser()
    ap.add_argument('--dataset', default='both', choices=['webnlg', 'e2e', 'both'])
    ap.add_argument('--tries', type=int, default=5)
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args()
    print(f"cpu count {os.cpu_count()}, load average {os.getloadavg()[0]:.1f} (a shared machine: compare the ratio, not seconds)")
    ok = all([bench(d, a.tries, a.seed) for d in (['webnlg', 'e2e'] if a.dataset == 'both' else [a.dataset])])
    sys.exit(0 if ok else 1)
