"""Semantic Exact Match: `cogen_lib.recogs.sem.sem` vs brute-force baselines on the same pairs, COGS gen.

Run from the repository root:  COGEN_MIRROR=../shared/data .venv/bin/python bench/sem.py [--sample 300] [--seed 0]

Pair sets (all from COGS gen, 21,000 rows; every damage and renaming is seeded):
  self       gold vs gold (the string-equality shortcut answers these)
  renamed    gold vs a copy with the x-variables renamed injectively and the conjuncts shuffled (all should match)
  recogs     the same in a ReCOGS-like form (variables are plain indices, proper names become `Name ( i )`,
             `v . role ( e , x )` becomes `v ( e ) AND role ( e , x )`), renamed and shuffled (all should match)
  perturbed  gold vs a copy with one damage (two arguments swapped, a conjunct duplicated, two variables merged or a
             definite flipped), then renamed and shuffled (none should match); recogs-perturbed: the same on the
             ReCOGS-like form
  recogs-dup-event  ReCOGS-like gold vs a copy in which one event is duplicated under a fresh index together with
             fresh copies of its arguments (none should match)
  worst      the 50 longest LFs, renamed and shuffled: the slowest single pair (median of 5 timings each)

Our checker runs on every pair with cold caches (parser and atom caches cleared before each set). The baselines are
too slow for whole sets, so they run on a seeded sample of rows and the ratio compares the two on that same sample:
  brute      all bijections between the variables (itertools.permutations), multiset comparison: exact, and
             run only on rows with <= 7 variables (7! = 5,040 maps)
  authors    the ReCOGS authors' procedure re-implemented here (not their code): variables grouped by the sorted
             names of the predicates they occur in, the product of every candidate map enumerated, maps only
             required to be onto, conjunct *sets* compared after string substitution; run on the recogs and
             perturbed sets, rows whose candidate product exceeds --cap maps are skipped and counted

Whole process (what a user waits for, imports included), last: `cogen recogs score --metric sem` as a subprocess
  - on COGS gen scored against itself (the files a user passes; goal: under 0.6 s wall), and
  - on the recogs set written as TSVs, against a subprocess running the authors' procedure on the same files
    (`python bench/sem.py --authors-file PRED GOLD CAP`, which imports no cogen code); rows whose candidate product
    exceeds --process-cap are skipped by the authors' process only (they are its slowest: the ratio is a lower bound).
  Wall: median of --repeats runs; CPU: the children's user + system time. With PYTHONDONTWRITEBYTECODE set (as in some
  shells here) cogen_lib is compiled from source at every start; --pycache DIR times it byte-compiled, as an installed
  copy runs (the header line says which).
"""
import argparse, itertools, math, os, re, sys, time
from collections import Counter, defaultdict
from pathlib import Path


# --- the authors' procedure, first: `--authors-file` runs it as a process of its own, importing no cogen code --------

_UN = re.compile(r"(\w+)\s*\(\s*(\d+)\s*\)")
_BI = re.compile(r"(\w+)\s*\(\s*(\d+)\s*,\s*(\d+)\s*\)")
_SPLIT = re.compile(r"\s*(?:AND|;)\s*")


def _profiles(phi):
    v2p = defaultdict(list)
    for p, v in _UN.findall(phi): v2p[v].append(p)
    for p, a, b in _BI.findall(phi): v2p[a].append(p); v2p[b].append(p)
    p2v = defaultdict(list)
    for v, ps in v2p.items(): p2v[tuple(sorted(ps))].append(v)
    return p2v


def authors_candidates(gold: str, pred: str) -> int:
    g, p = _profiles(gold.replace(' ', '').replace('AND', ' AND ')), _profiles(pred.replace(' ', '').replace('AND', ' AND '))
    return int(math.prod([float(len(g.get(k, ()))) ** len(vs) for k, vs in p.items()])) if p else 1


def authors(gold: str, pred: str, flag='000000') -> bool:
    "The authors' procedure, re-implemented: product of candidate maps, onto only, conjunct sets."
    gold, pred = gold.replace(' ', '').replace('AND', ' AND '), pred.replace(' ', '').replace('AND', ' AND ')
    gset = set(_SPLIT.split(gold))
    gm, pm = _profiles(gold), _profiles(pred)
    p2g = {v: gm.get(k, []) for k, vs in pm.items() for v in vs}
    gvars, pvars = set(re.findall(r'(\d+)', gold)), set(re.findall(r'(\d+)', pred))
    for vals in itertools.product(*p2g.values()):
        d = dict(zip(p2g, vals))
        if set(d) != pvars or set(d.values()) != gvars: continue
        phi = pred
        for s, t in d.items(): phi = re.sub(rf"\b{s}\b", f"{flag}{t}", phi)
        if set(_SPLIT.split(phi.replace(flag, ''))) == gset: return True
    return False


def authors_file(pred: str, gold: str, cap: float) -> None:
    "The authors' check as a whole process: read two TSVs (sentence, lf[, type]), score every row under `cap` maps."
    rows = lambda f: [l.split('\t') for l in Path(f).read_text(encoding='utf-8').splitlines()]
    P, G = rows(pred), rows(gold)
    n = skipped = 0
    for p, g in zip(P, G):
        if authors_candidates(g[1], p[1]) > cap: skipped += 1; continue
        n += authors(g[1], p[1])
    print(f"authors sem: {n} / {len(G) - skipped} rows match ({skipped} rows above {cap:.0g} maps skipped)")


if __name__ == '__main__' and sys.argv[1:2] == ['--authors-file']:
    authors_file(sys.argv[2], sys.argv[3], float(sys.argv[4])); sys.exit(0)

import numpy as np
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cogen_lib.core import make_rng
from cogen_lib.data import load_cogs
from cogen_lib.recogs import lf as L, sem as S
from cogen_lib.recogs.lf import parse_lf, render, build_lf, Arg, Conjunct


def clear_caches():
    L._CACHE.clear(); S._BY_TEXT.clear(); S._SLOTS.clear()


def rename(s: str, rng, pat=r'x _ (\d+)', fmt='x _ {}') -> str:
    "Rename variables matched by `pat` injectively onto a random subset of a small pool; shuffle the conjuncts."
    lf = parse_lf(s)
    if lf.is_primitive: return s
    vs = list(dict.fromkeys(re.findall(pat, s)))
    pool = rng.permutation(max([int(v) for v in vs] + [0]) + 20)[:len(vs)]
    m = dict(zip(vs, map(str, pool)))
    cs = [str(c) for c in lf.conjuncts]
    cs = [cs[i] for i in rng.permutation(len(cs))]
    out = ' AND '.join(cs)
    return re.sub(pat, lambda mo: fmt.format(m[mo.group(1)]), out)


def perturb(s: str, rng) -> str:
    lf = parse_lf(s)
    if lf.is_primitive: return s + ' AND cat ( x _ 1 )' if lf.name is None else 'Zelda'
    cs = list(lf.conjuncts)
    op = int(rng.integers(4))
    two = [i for i, c in enumerate(cs) if len(c.args) == 2]
    if op == 0 and two:
        i = two[int(rng.integers(len(two)))]; cs[i] = cs[i]._replace(args=cs[i].args[::-1])
    elif op == 1: cs.append(cs[int(rng.integers(len(cs)))])
    elif op == 2 and len(lf.variables) > 1:
        a, b = lf.variables[:2]
        cs = [c._replace(args=tuple(a if x == b else x for x in c.args)) for c in cs]
    else:
        i = int(rng.integers(len(cs))); cs[i] = cs[i]._replace(definite=not cs[i].definite)
    return render(build_lf([], cs))


def dup_event(r: str, rng) -> str:
    "Duplicate one event of a ReCOGS-like LF with fresh copies of its arguments' unary conjuncts (a wrong LF)."
    lf = parse_lf(r)
    if lf.is_primitive: return r
    cs = list(lf.conjuncts)
    events = [c.args[0] for c in cs if len(c.args) == 2 and c.pred[0] != 'nmod']
    if not events: return render(build_lf([], cs + [cs[0]]))
    e = events[int(rng.integers(len(events)))]
    fresh = itertools.count(max(int(a.text) for a in lf.variables) + 1)
    new = {e: Arg('index', str(next(fresh)))}
    for c in cs:
        if len(c.args) == 2 and c.args[0] == e and c.args[1].is_var: new.setdefault(c.args[1], Arg('index', str(next(fresh))))
    extra = [c._replace(args=tuple(new.get(a, a) for a in c.args)) for c in cs
             if (len(c.args) == 1 and c.args[0] in new) or (len(c.args) == 2 and c.args[0] == e)]
    return render(build_lf([], cs + extra))


def recogs_like(s: str) -> str:
    "A ReCOGS-like form of a COGS LF (for the benchmark only): indices, names as predicates, neo-Davidsonian roles."
    lf = parse_lf(s)
    if lf.is_primitive: return s
    used = {int(a.text) for a in lf.variables}
    nxt = iter(i for i in itertools.count(100) if i not in used)
    names, nouns, rest, seen = {}, [], [], set()
    idx = lambda a: Arg('index', a.text) if a.kind == 'x' else Arg('index', names[a.text])
    for c in lf.conjuncts:
        for a in c.args:
            if a.kind == 'name' and a.text not in names:
                names[a.text] = str(next(nxt)); nouns.append(Conjunct(False, (a.text,), (Arg('index', names[a.text]),)))
    for c in lf.conjuncts:
        args = tuple(idx(a) for a in c.args)
        if len(c.args) == 1: nouns.append(c._replace(args=args))
        elif c.pred[-2] == 'nmod': rest.append(Conjunct(False, ('nmod', c.pred[-1]), args))
        else:
            if args[0] not in seen: seen.add(args[0]); rest.append(Conjunct(False, (c.pred[0],), (args[0],)))
            rest.append(Conjunct(False, (c.pred[1],), args))
    return render(build_lf(nouns, rest))


# --- baselines ---------------------------------------------------------------------------------------------------

def brute(pred: str, gold: str) -> bool:
    "Exact SEM by trying every bijection between the variables."
    p, g = parse_lf(pred), parse_lf(gold)
    if (p.name, p.lambdas) != (g.name, g.lambdas) or len(p.conjuncts) != len(g.conjuncts): return False
    key = lambda c, m: (c.definite, c.pred, tuple(m.get(a, a) for a in c.args))
    gc = Counter(key(c, {}) for c in g.conjuncts)
    pv, gv = p.variables, g.variables
    if len(pv) != len(gv): return False
    for perm in itertools.permutations(gv):
        MAPS[0] += 1
        if Counter(key(c, dict(zip(pv, perm))) for c in p.conjuncts) == gc: return True
    return False

MAPS = [0]   # maps tried by `brute`


# --- timing ------------------------------------------------------------------------------------------------------

def time_ours(pairs):
    "(wall s, CPU s, verdicts) of our checker on `pairs`, caches cleared first."
    clear_caches()
    t, c = time.perf_counter(), time.process_time()
    res = [S.sem(p, g) for p, g in pairs]
    return time.perf_counter() - t, time.process_time() - c, res


def run_process(cmd: list[str], env=None) -> tuple[float, float, str]:
    "(wall s, CPU s of the child, stdout) of one subprocess."
    import resource, subprocess
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), r.stdout.strip()


def whole_process(df, rec, recogs_pairs, cap: float, repeats: int, pycache: str | None = None) -> None:
    "`cogen recogs score` as a subprocess on COGS gen, and against the authors' procedure as a subprocess."
    import tempfile
    cogen = str(Path(sys.executable).parent/'cogen')
    env = None
    if pycache:   # byte-compile cogen_lib once into `pycache` (outside the tree) and read it back, as an installed copy does
        env = {k: v for k, v in os.environ.items() if k != 'PYTHONDONTWRITEBYTECODE'} | {'PYTHONPYCACHEPREFIX': str(Path(pycache).resolve())}
    bytecode = ('cached in ' + pycache) if pycache else ('not written (PYTHONDONTWRITEBYTECODE is set: cogen_lib is compiled '
                                                          'at every start)' if sys.flags.dont_write_bytecode else 'written as Python does')
    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        write = lambda f, lfs: (d/f).write_text(''.join(f'{s}\t{l}\t{t}\n' for s, l, t in zip(df.sentence, lfs, df.category)), encoding='utf-8')
        write('gen.tsv', df.lf); write('gold.tsv', rec); write('pred.tsv', [p for p, _ in recogs_pairs])
        print(f"\nwhole process, {len(df):,} rows (load average {os.getloadavg()[0]:.1f}; median of {repeats} runs; "
              f"bytecode {bytecode})")
        ours, ours_cpu = {}, {}
        for name, pred, gold in (('COGS gen vs itself', 'gen.tsv', 'gen.tsv'), ('recogs renamed', 'pred.tsv', 'gold.tsv')):
            cmd = [cogen, 'recogs', 'score', '--pred', str(d/pred), '--gold', str(d/gold), '--metric', 'sem']
            if pycache: run_process(cmd, env)   # the first run writes the bytecode
            runs = [run_process(cmd, env) for _ in range(repeats)]
            w, c = float(np.median([r[0] for r in runs])), float(np.median([r[1] for r in runs]))
            ours[name], ours_cpu[name] = w, c
            print(f"  cogen recogs score  {name:<20} {w:6.2f} s wall {c:6.2f} s CPU   {runs[0][2]}")
        w, c, out = run_process([sys.executable, __file__, '--authors-file', str(d/'pred.tsv'), str(d/'gold.tsv'), str(cap)])
        print(f"  authors' procedure  {'recogs renamed':<20} {w:6.2f} s wall {c:6.2f} s CPU   {out}")
        print(f"  ratio (authors' wall / ours, recogs renamed): {w / ours['recogs renamed']:.1f}x (CPU: "
              f"{c / ours_cpu['recogs renamed']:.1f}x); COGS gen vs itself: {ours['COGS gen vs itself']:.2f} s wall (goal < 0.6 s), "
              f"load average now {os.getloadavg()[0]:.1f}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--sample', type=int, default=300, help='rows per set for the baselines')
    ap.add_argument('--cap', type=float, default=2e5, help="skip rows whose authors'-style candidate product is larger")
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--process-cap', type=float, default=None, help="the authors' whole process skips rows with more candidate maps (default: --cap)")
    ap.add_argument('--repeats', type=int, default=3, help='runs of each whole-process timing (median)')
    ap.add_argument('--only-process', action='store_true', help='only the whole-process timings')
    ap.add_argument('--pycache', default=None, help="time `cogen` with its bytecode cached in this folder (PYTHONPYCACHEPREFIX), "
                    "as an installed copy runs; default: the environment's own setting")
    a = ap.parse_args(argv)
    if a.process_cap is None: a.process_cap = a.cap
    rng = make_rng(a.seed)
    df = load_cogs('gen')
    gold = df.lf.tolist()
    rec = [recogs_like(s) for s in gold]
    sets = {
        'self': [(g, g) for g in gold],
        'renamed': [(rename(g, rng), g) for g in gold],
        'recogs': [(rename(r, rng, r'\b(\d+)\b', '{}'), r) for r in rec],
        'perturbed': [(rename(perturb(g, rng), rng), g) for g in gold],
    }
    if a.only_process: return whole_process(df, rec, sets['recogs'], a.process_cap, a.repeats, a.pycache)
    sets['recogs-perturbed'] = [(rename(perturb(r, rng), rng, r'\b(\d+)\b', '{}'), r) for r in rec]
    sets['recogs-dup-event'] = [(rename(dup_event(r, rng), rng, r'\b(\d+)\b', '{}'), r) for r in rec]
    print(f"COGS gen: {len(gold):,} rows; baselines on a seeded sample of {a.sample} rows per set\n")
    print(f"{'set':<17} {'pairs':>6} {'match':>6} {'wall s':>7} {'CPU s':>7} {'CPU us/pair':>11}")
    walls, cpus = [], []
    for name, pairs in sets.items():
        w, c, res = time_ours(pairs)
        walls.append(w); cpus.append(c)
        print(f"{name:<17} {len(pairs):>6} {sum(map(bool, res)):>6} {w:>7.3f} {c:>7.3f} {1e6 * c / len(pairs):>11.1f}")
    print(f"\nwhole gen set (cold caches): mean {np.mean(cpus):.3f} s CPU, max {max(cpus):.3f} s CPU "
          f"({np.mean(walls):.3f} s wall; goal <= 2 s; load average now {os.getloadavg()[0]:.1f})")

    # the slowest pairs: the 50 longest LFs
    order = sorted(range(len(gold)), key=lambda i: (-len(gold[i].split(' ')), i))[:50]
    worst = []
    for i in order:
        for name in ('renamed', 'recogs'):
            p, g = sets[name][i]
            ts = []
            for _ in range(5):
                clear_caches(); t = time.process_time(); S.sem(p, g); ts.append(time.process_time() - t)
            worst.append((float(np.median(ts)), name, i, len(g.split(' '))))
    worst.sort(reverse=True)
    t, name, i, n = worst[0]
    print(f"worst pair (50 longest rows x renamed/recogs, median of 5, cold caches): {1e3 * t:.2f} ms CPU "
          f"(row {i}, {name}, {n} tokens; goal <= 5 ms)")

    # baselines on a sample
    print(f"\n{'baseline':<9} {'set':<17} {'rows':>5} {'skipped':>7} {'base CPU s':>10} {'ours CPU s':>10} {'ratio':>8} {'disagree':>8}")
    for base, names in (('brute', ['renamed', 'perturbed']), ('authors', ['recogs', 'recogs-perturbed', 'recogs-dup-event'])):
        for name in names:
            pairs = sets[name]
            idx = sorted(make_rng(a.seed + 1).choice(len(pairs), a.sample, replace=False))
            if base == 'brute':
                keep = [i for i in idx if len(parse_lf(pairs[i][1]).variables) <= 7 and len(parse_lf(pairs[i][0]).variables) <= 7]
            else:
                keep = [i for i in idx if authors_candidates(pairs[i][1], pairs[i][0]) <= a.cap]
            sub = [pairs[i] for i in keep]
            MAPS[0] = 0
            t = time.process_time()
            ref = [brute(p, g) if base == 'brute' else authors(g, p) for p, g in sub]
            tb = time.process_time() - t
            _, to, res = time_ours(sub)
            dis = sum(bool(r) != b for r, b in zip(res, ref))
            print(f"{base:<9} {name:<17} {len(sub):>5} {len(idx) - len(sub):>7} {tb:>10.3f} {to:>10.4f} {tb / to:>7.0f}x {dis:>8}")
            if base == 'brute' and name == 'renamed':
                per_map = tb / max(MAPS[0], 1)
                total = per_map * sum(math.factorial(len(parse_lf(g).variables)) for g in gold)
                print(f"{'':<9} ({MAPS[0]:,} maps tried, {1e6 * per_map:.1f} us each; trying all n! maps of every gen row "
                      f"would take ~{total:.2g} s CPU)")
    sizes = [authors_candidates(r, p) for p, r in sets['recogs']]
    big = int(np.argmax(sizes))
    print(f"\nauthors'-style candidate maps on the whole recogs set: max {max(sizes):.3g} (row {big}), "
          f"{sum(x > a.cap for x in sizes)} rows above --cap {a.cap:.0g}, total {sum(sizes):.3g}")
    print("\nbrute agrees exactly by construction (disagree must be 0); 'authors' disagreements are the pairs its onto-only"
          "\nmaps and conjunct sets accept (e.g. a duplicated conjunct) or its regexes cannot read.")
    whole_process(df, rec, sets['recogs'], a.process_cap, a.repeats, a.pycache)


if __name__ == '__main__':
    main()
