"""CGGC relation verifier (appendix D): the library's logistic regression against a small MLP on the same features.

Run from the repository root, after a CGGC run on the full graph built its graphs (the `cpu` or `long` profile):
  COGEN_MIRROR=../shared/data .venv/bin/python bench/cggc_verifier.py [--min-samples 5] [--split-seed 0]
      [--hidden 512] [--alpha 1e-4] [--threads 1] [--json measured/cggc_verifier.json]

Both classifiers are `cogen_lib.cggc.verify.RelationVerifier` (`hidden=0` and `hidden=N`) and read its features (MiniLM-L6 embeddings of the sentence,
head and tail, and their pairwise products, from the CGGC embedding store) on the build's verification train group
and are scored on its verification val group (disjoint concept sets), which is what `figures/cggc/verifier.md` reports
for the library's verifier. Printed and written to `--json`: each classifier's train and val accuracy with its Wilson
95% interval over val edges, the majority-relation baseline, the paired difference (McNemar's exact test on the val
edges both classify), and the share of val *graphs* each would filter (a graph passes when every edge's relation is
predicted: the rule `verify_outputs` applies to a model's output, here applied to the reference sentences, so a lower
bound on what it filters of generated text). The paper: 90.21% val accuracy (Llama2 + a feed-forward layer), about
44.6% of the outputs filtered.
"""
import argparse, json, sys, time
from pathlib import Path
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cogen_lib.metrics import wilson_ci
from cogen_lib.cggc.graphs import cached_build, read_graphs
from cogen_lib.cggc.labels import compositional, split_groups
from cogen_lib.cggc.verify import RelationVerifier, verification_examples, store_embed


def graphs_passed(pred, examples, owner):
    "Per graph: every one of its edges' relation predicted."
    ok = {}
    for p, e, g in zip(pred, examples, owner): ok[g] = ok.get(g, True) and p == e[3]
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--kg', default='conceptnet4')
    ap.add_argument('--min-samples', type=int, default=5)
    ap.add_argument('--split-seed', type=int, default=0)
    ap.add_argument('--hidden', type=int, default=512, help='MLP hidden units (one ReLU layer)')
    ap.add_argument('--alpha', type=float, default=1e-4, help='MLP L2 penalty')
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--json', default='')
    a = ap.parse_args()
    import threadpoolctl
    threadpoolctl.threadpool_limits(a.threads)
    from scipy.stats import binomtest

    build = cached_build(a.kg, None, None, 0)
    g = split_groups(compositional(read_graphs(build), min_samples=a.min_samples), seed=a.split_seed)
    tr, va = verification_examples(g['verification_train']), verification_examples(g['verification_val'])
    owner = [i for i, r in enumerate(g['verification_val']) for _ in r['edges']]
    print(f"{build.name}: {len(tr):,} train edges ({len(g['verification_train']):,} graphs), {len(va):,} val edges "
          f"({len(g['verification_val']):,} graphs)", flush=True)
    embed = store_embed()
    t0 = time.perf_counter(); embed(list(dict.fromkeys(x for e in tr + va for x in e[:3]))); t_feat = time.perf_counter() - t0   # into the store once
    ytr, yva = np.array([e[3] for e in tr]), np.array([e[3] for e in va])
    out = dict(build=build.name, min_samples=a.min_samples, split_seed=a.split_seed, train_edges=len(tr), val_edges=len(va),
               val_graphs=len(g['verification_val']), val_sets=len({r['set_id'] for r in g['verification_val']}),
               train_sets=len({r['set_id'] for r in g['verification_train']}), feature_seconds=t_feat, threads=a.threads,
               majority_val_accuracy=float(np.mean(yva == max(set(ytr), key=list(ytr).count))), classifiers={})
    preds = {}
    for name, hidden in (('logistic regression (the library)', 0), (f'MLP ({a.hidden} ReLU units, alpha {a.alpha:g})', a.hidden)):
        v = RelationVerifier(embed, seed=a.split_seed, hidden=hidden, alpha=a.alpha)   # the library's verifier, either layer
        t0 = time.perf_counter(); v.fit(tr); secs = time.perf_counter() - t0
        preds[name] = (np.array(v.predict(va)), v.accuracy(tr), secs)
    for name, (p, acc_tr, secs) in preds.items():
        k = int(np.sum(p == yva)); _, lo, hi = wilson_ci(k, len(yva))
        passed = graphs_passed(p, va, owner)
        out['classifiers'][name] = dict(val_accuracy=k / len(yva), ci_low=lo, ci_high=hi, train_accuracy=acc_tr, fit_seconds=secs,
                                        val_graphs_filtered=1 - float(np.mean(list(passed.values()))))
        print(f"{name}: val accuracy {100 * k / len(yva):.1f} [{100 * lo:.1f}, {100 * hi:.1f}] (train {100 * acc_tr:.1f}), "
              f"filters {100 * out['classifiers'][name]['val_graphs_filtered']:.1f}% of the val graphs' reference sentences; "
              f"fit {secs:.0f} s", flush=True)
    (pa, *_), (pb, *_) = preds.values()
    b, c = int(np.sum((pa == yva) & (pb != yva))), int(np.sum((pa != yva) & (pb == yva)))
    out['mcnemar'] = dict(only_first_right=b, only_second_right=c, p_value=binomtest(b, b + c, 0.5).pvalue if b + c else 1.0)
    print(f"paired (McNemar, exact): only LR right {b}, only MLP right {c}, p = {out['mcnemar']['p_value']:.2g}; "
          f"majority relation {100 * out['majority_val_accuracy']:.1f}%; the paper 90.21% (about 44.6% of outputs filtered)")
    if a.json: Path(a.json).write_text(json.dumps(out, indent=1, allow_nan=False) + '\n')


if __name__ == '__main__':
    main()
