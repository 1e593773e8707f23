"""bf16 against float32 at the level of whole SPOR runs: the same configuration and seeds trained and decoded in both.

Run from the repository root, once both dtypes' rows are committed (or name an out dir holding the bf16 rows):
  .venv/bin/python bench/bf16_runs.py [--dirs results/spor/long ...] [--aspect productivity] [--dataset webnlg] [--n 3]
      [--metric parent_f]

For each training set and seed with a run in both dtypes it prints PARENT F (x100) of each, their paired difference
over the same test items (mean and 95% t interval) and the share of identical predictions; then per training set the
float32 seeds' spread (range over seeds), which the difference should stay within for bf16 to count as the same model;
then each dtype's mean over seeds of the contrast (second set - first), the claim's effect. `bench/bf16.py` times the
steps; this script asks whether a run's metric holds. Each run's device is printed: a contrast over two CPUs says so.
"""
import argparse, glob, sys
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cogen_lib.spor.report import PAIRS


def sets_of(aspect: str) -> tuple[str, ...]:
    "The training sets of `aspect`: the two its claims contrast, or rules' one ('original')."
    return PAIRS.get(aspect, ('original',))


def runs(dirs, aspect: str, dataset: str, n: int, metric: str) -> pd.DataFrame:
    "One row per run of the configuration: train_set, seed, dtype, value, device, and its items file."
    out = []
    for d in dirs:
        for f in sorted(glob.glob(f'{d}/aspect={aspect}_dataset={dataset}*.csv')):
            if f.endswith('.items.csv.gz') or f.endswith('.items.csv'): continue
            r = pd.read_csv(f)
            r = r[r.metric == metric]
            if r.empty or (aspect == 'productivity' and int(r.threshold.iloc[0]) != n): continue
            x = r.iloc[0]
            items = Path(f[:-4] + '.items.csv.gz')
            out.append(dict(train_set=x.train_set, seed=int(x.seed),
                            dtype=x['dtype'] if isinstance(x.get('dtype'), str) else 'float32', value=100 * x.value,
                            n=int(x.n), device=x.device, items=items if items.exists() else None, file=f))
    return pd.DataFrame(out).drop_duplicates(['train_set', 'seed', 'dtype'], keep='last')


def paired(a: Path, b: Path, metric: str) -> tuple[float, float, float, float, int]:
    "Mean, 95% t interval of b - a over their shared items (x100), share of identical predictions, items."
    A = pd.read_csv(a).set_index('item'); B = pd.read_csv(b).set_index('item')
    A = A[A.set == 'test'] if 'set' in A else A; B = B[B.set == 'test'] if 'set' in B else B
    ids = A.index.intersection(B.index)
    d = 100 * (B.loc[ids, metric].astype(float) - A.loc[ids, metric].astype(float)).to_numpy()
    m, se = d.mean(), d.std(ddof=1) / np.sqrt(len(d))
    h = stats.t.ppf(0.975, len(d) - 1) * se
    same = float((A.loc[ids, 'prediction'].astype(str) == B.loc[ids, 'prediction'].astype(str)).mean())
    return m, m - h, m + h, same, len(ids)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--dirs', nargs='+', default=['results/spor/long'])
    ap.add_argument('--aspect', default='productivity')
    ap.add_argument('--dataset', default='webnlg')
    ap.add_argument('--n', type=int, default=3)
    ap.add_argument('--metric', default='parent_f')
    a = ap.parse_args(argv)
    R = runs(a.dirs, a.aspect, a.dataset, a.n, a.metric)
    if R.empty or set(R.dtype) != {'float32', 'bfloat16'}:
        sys.exit(f"no runs of {a.aspect} {a.dataset} in both dtypes under {', '.join(a.dirs)}")
    print(f"{a.aspect} {a.dataset}{f' N = {a.n}' if a.aspect == 'productivity' else ''}, {a.metric} x100")
    for dev in sorted(set(R.device)): print(f"  device: {dev} ({', '.join(sorted(set(R[R.device == dev].dtype)))})")
    for ts in sets_of(a.aspect):
        S = R[R.train_set == ts]
        for seed in sorted(set(S.seed)):
            f, b = (S[(S.seed == seed) & (S.dtype == k)] for k in ('float32', 'bfloat16'))
            if f.empty or b.empty: continue
            f, b = f.iloc[0], b.iloc[0]
            line = f"  {ts} seed {seed}: float32 {f.value:.2f}, bf16 {b.value:.2f}"
            if f['items'] is not None and b['items'] is not None:
                m, lo, hi, same, k = paired(f['items'], b['items'], a.metric)
                line += f"; bf16 - float32 {m:+.2f} [{lo:+.2f}, {hi:+.2f}] over {k} items, {same:.0%} identical texts"
            print(line)
        for k in ('float32', 'bfloat16'):
            v = S[S.dtype == k].sort_values('seed')
            if len(v) >= 2:
                print(f"  {ts} {k}: seeds {', '.join(map(str, v.seed))}: mean {v.value.mean():.2f}, "
                      f"range {v.value.max() - v.value.min():.2f}, sd {v.value.std(ddof=1):.2f}")
    if a.aspect in PAIRS:
        lo, hi = PAIRS[a.aspect]
        for k in ('float32', 'bfloat16'):
            v = R[R.dtype == k].pivot(index='seed', columns='train_set', values='value').dropna()
            if len(v) and {lo, hi} <= set(v.columns):
                d = v[hi] - v[lo]
                print(f"  {hi} - {lo}, {k}: {', '.join(f'{x:+.2f}' for x in d)} (seeds {', '.join(map(str, d.index))});"
                      f" mean {d.mean():+.2f}")


if __name__ == '__main__':
    main()
