"""Statistics live in one place: `cogen_lib/metrics.py` and `cogen_lib/metrics_intervals.py`, whose names `metrics`
re-exports (issue 50, item 7). Every interval, test, resampling, rank correlation and density is computed there; the
engine (`claims.py`), the paper packages and their summaries call it.

The scan reads every `cogen_lib/**/*.py` but those two (`STATS_MODULES`) and the generated `_modidx.py` with `ast` (so
comments and strings never count) and reports, file and line, each of:

- **scipy.stats**: `import scipy.stats`, `from scipy import stats`, `from scipy.stats import ...` or an attribute
  `scipy.stats`. (Other scipy modules, e.g. `scipy.sparse`, are fine.)
- **a hand-written test or density**: a name or attribute among `HAND_WRITTEN` (`erf`, `erfc`, `binomtest`, the
  `ttest_*` family, `gaussian_kde`, `kendalltau`, `NormalDist`, ...), used or defined, or a function defined under a
  name that says it computes one (`HAND_WRITTEN_DEF`: `kendall`, `wilson`, `kde`, `norm_cdf`, ...).
- **a resampling draw**: a call of a generator's `multinomial` or `bootstrap` (a vectorized bootstrap needs no
  loop), or of any generator draw (`choice`, `integers`, `permutation`, `random`, `normal`, ...) inside a loop over
  `range(...)` / `np.arange(...)` whose bounds name a resampling count (`RESAMPLE_COUNT`: `n_boot`, `n_perm`, `B`,
  `n_resamples`, ... or a name holding `boot`, `perm`, `resampl`, `flip`). A loop that draws data items (a question
  per configuration, a word per slot) is not a resampling and does not match: its bound is a count of items, not of
  resamples; nor does a single vectorized draw of a permutation (a data shuffle).

`scan` is run on the real tree and, in `test_scan_catches_planted_violations`, on planted files, so that the test
can fail.
"""
from __future__ import annotations
import ast, re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT/'cogen_lib'
STATS_MODULES = ('metrics.py', 'metrics_intervals.py')
EXEMPT = {*STATS_MODULES, '_modidx.py'}
HAND_WRITTEN = {'erf', 'erfc', 'erfinv', 'ndtr', 'ndtri', 'binomtest', 'binom_test', 'ttest_1samp', 'ttest_rel',
                'ttest_ind', 'gaussian_kde', 'kendalltau', 'spearmanr', 'pearsonr', 'mannwhitneyu', 'wilcoxon',
                'permutation_test', 'NormalDist', '_norm_cdf', '_norm_ppf', '_t_cdf', '_kde'}
DRAWS = {'choice', 'integers', 'permutation', 'permuted', 'shuffle', 'random', 'normal', 'standard_normal',
         'uniform', 'binomial', 'multinomial', 'poisson', 'randint', 'rand', 'randn', 'bootstrap'}
ALWAYS_RESAMPLING = {'multinomial', 'bootstrap'}
HAND_WRITTEN_DEF = re.compile(r'kendall|spearman|wilson|ttest|binomtest|kde|norm_cdf|norm_ppf', re.IGNORECASE)
RESAMPLE_COUNT = re.compile(r'^(B|R|n_?boots?|n_?perms?|n_?resamples?|n_?draws?|n_?sims?)$|boot|perm|resampl|flip',
                            re.IGNORECASE)


def _dotted(node: ast.AST) -> str:
    "'a.b.c' of a Name/Attribute chain, '' for anything else."
    parts = []
    while isinstance(node, ast.Attribute): parts.append(node.attr); node = node.value
    if isinstance(node, ast.Name): parts.append(node.id); return '.'.join(reversed(parts))
    return ''


def _range_bound_names(it: ast.AST) -> list[str]:
    "The names in the arguments of `it` when it is a call of `range` or `np.arange`, else []."
    if not (isinstance(it, ast.Call) and _dotted(it.func).split('.')[-1] in ('range', 'arange')): return []
    return [n.id if isinstance(n, ast.Name) else n.attr for a in it.args for n in ast.walk(a)
            if isinstance(n, (ast.Name, ast.Attribute))]


def _draws(body) -> list[ast.Call]:
    "Calls of a generator draw method (`<anything>.<draw>(...)`) anywhere in `body` (a node or a list of nodes)."
    nodes = body if isinstance(body, list) else [body]
    return [n for b in nodes for n in ast.walk(b)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in DRAWS]


def scan_source(src: str, name: str) -> list[str]:
    "Every violation in the source `src` of file `name`, as 'name:line: what'."
    tree, out = ast.parse(src, filename=name), []
    add = lambda node, what: out.append(f"{name}:{node.lineno}: {what}")
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.name == 'scipy.stats' or a.name.startswith('scipy.stats.'): add(node, f"import {a.name}")
        elif isinstance(node, ast.ImportFrom):
            mod = node.module or ''
            if mod == 'scipy.stats' or mod.startswith('scipy.stats.'): add(node, f"from {mod} import ...")
            elif mod == 'scipy' and any(a.name == 'stats' for a in node.names): add(node, "from scipy import stats")
            for a in node.names:
                if a.name in HAND_WRITTEN: add(node, f"imports {a.name} (a hand-written test)")
        elif isinstance(node, ast.Attribute):
            if _dotted(node) == 'scipy.stats': add(node, "scipy.stats")
            elif node.attr in HAND_WRITTEN: add(node, f"{_dotted(node) or node.attr} (a hand-written test)")
        elif isinstance(node, ast.Name) and node.id in HAND_WRITTEN:
            add(node, f"{node.id} (a hand-written test)")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (node.name in HAND_WRITTEN or HAND_WRITTEN_DEF.search(node.name)):
            add(node, f"def {node.name} (a hand-written test)")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ALWAYS_RESAMPLING:
            add(node, f".{node.func.attr}(...) draws resamples")
        loops = []
        if isinstance(node, (ast.For, ast.AsyncFor)): loops = [(node.iter, node.body)]
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            elt = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            loops = [(g.iter, elt + list(g.ifs)) for g in node.generators]
        for it, body in loops:
            counts = [n for n in _range_bound_names(it) if RESAMPLE_COUNT.search(n)]
            if counts:
                for d in _draws(body):
                    if d.func.attr not in ALWAYS_RESAMPLING:
                        add(d, f"a resampling loop: .{d.func.attr}(...) in a loop over range({', '.join(counts)})")
    return sorted(set(out), key=lambda s: (s.split(':')[0], int(s.split(':')[1]), s))


def scan(root: Path = LIB) -> list[str]:
    "Every violation under `root` (its `*.py`, recursively, but `EXEMPT`), paths relative to the project."
    out = []
    for p in sorted(root.rglob('*.py')):
        if p.name in EXEMPT and p.parent == root or '.ipynb_checkpoints' in p.parts: continue
        rel = p.relative_to(ROOT) if p.is_relative_to(ROOT) else p
        out += scan_source(p.read_text(encoding='utf-8'), str(rel))
    return out


def test_statistics_only_in_metrics():
    bad = scan()
    assert not bad, ("statistics outside cogen_lib/metrics.py and metrics_intervals.py (move them into "
                     "nbs/03_metrics.ipynb or nbs/03a_metrics_intervals.ipynb and call them):\n"
                     + '\n'.join(bad))


PLANTED = '''
import math
import numpy as np
from scipy import stats
import scipy.stats as ss
from scipy.stats import binomtest

def _norm_cdf(z): return 0.5 * math.erfc(-z / math.sqrt(2))

def p_value(x, y):
    return stats.ttest_ind(x, y).pvalue

def boot(values, n_boot=100, rng=None):
    g = np.random.default_rng(rng)
    out = []
    for _ in range(n_boot):
        out.append(values[g.integers(0, len(values), len(values))].mean())
    return out

def kendall(o1, o2):
    return sum(1 for i in range(len(o1)) for j in range(i + 1, len(o1)) if o1[i] < o1[j])

def perm(a, n_perm, g):
    return [g.permutation(a)[:3].sum() for i in range(0, n_perm, 100)]

def weights(keys, B, seed):
    return np.random.default_rng(seed).multinomial(len(keys), np.full(len(keys), 1 / len(keys)), size=B)

def density(x):
    from scipy.stats import gaussian_kde
    return gaussian_kde(x)
'''

ALLOWED = '''
import numpy as np
from scipy.sparse import csr_matrix
import scipy.sparse as sp
from ..metrics import bootstrap_ci, order_tau

def questions(rng, configs, per_config):
    return [[rng.choice(10, 3, replace=False) for _ in range(per_config)] for c in configs]

def words(rng, n):
    out = []
    for i in range(n): out.append(int(rng.integers(5)))
    return out

def shuffle(rng, xs): return [xs[i] for i in rng.permutation(len(xs))]
# scipy.stats in a comment, and "from scipy import stats" in a string, do not count
'''


def test_scan_catches_planted_violations(tmp_path):
    hits = scan_source(PLANTED, 'planted.py')
    lines = {int(h.split(':')[1]) for h in hits}
    src = PLANTED.splitlines()
    want = {i + 1 for i, l in enumerate(src) if any(k in l for k in (
        'from scipy import stats', 'import scipy.stats', 'from scipy.stats import binomtest', 'def _norm_cdf',
        'stats.ttest_ind', 'def kendall', 'g.integers', 'g.permutation', '.multinomial(', 'import gaussian_kde', 'return gaussian_kde'))}
    assert lines == want, (sorted(lines), sorted(want), hits)
    assert scan_source(ALLOWED, 'allowed.py') == []
    # the whole-tree scan reports a planted file by path and line, beside the others
    pkg = tmp_path/'cogen_lib'; (pkg/'paper').mkdir(parents=True)
    for name in STATS_MODULES: (pkg/name).write_text(PLANTED)            # the statistics modules may compute them
    (pkg/'paper'/'stats.py').write_text(PLANTED); (pkg/'ok.py').write_text(ALLOWED)
    got = scan(pkg)
    assert got and all(g.split(':')[0].endswith('paper/stats.py') for g in got), got
    assert len(got) == len(hits)
