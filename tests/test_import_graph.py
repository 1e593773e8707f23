"""Paper notebooks import no notebook-execution machinery: every `cogen_lib` module that a notebook named by a grid
(paper notebooks and summaries) imports leaves papermill, nbclient and jupyter_client unloaded, and `cogen_lib.results`
(their `Recorder`, `save_figure`, `summary_rows`) loads none of them, nor pandas (its time: bench/imports.py)."""
import ast, json, re, subprocess, sys
from pathlib import Path
from cogen_lib.site import grid_notebooks     # each grid's notebook, those of its profile entries, its summaries

ROOT = Path(__file__).resolve().parents[1]
EXECUTION = ('papermill', 'nbclient', 'jupyter_client')


def cogen_imports(nb: Path) -> set[str]:
    "The `cogen_lib` modules a notebook's code cells import (`import cogen_lib.x`, `from cogen_lib.x import ...`)."
    mods = set()
    for c in json.loads(nb.read_text())['cells']:
        if c['cell_type'] != 'code': continue
        src = ''.join(c['source']) if isinstance(c['source'], list) else c['source']
        try: tree = ast.parse('\n'.join(l for l in src.splitlines() if not l.lstrip().startswith(('%', '!'))))
        except SyntaxError: continue
        for n in ast.walk(tree):
            if isinstance(n, ast.Import): mods |= {a.name for a in n.names if a.name.split('.')[0] == 'cogen_lib'}
            elif isinstance(n, ast.ImportFrom) and n.module and n.level == 0 and n.module.split('.')[0] == 'cogen_lib':
                mods.add(n.module)
    return mods


def loaded_after(mods: list[str]) -> dict:
    "Import `mods` in a fresh interpreter; which of `EXECUTION` (and pandas) it loaded, and the seconds the imports took."
    code = ("import importlib, json, sys, time\nt = time.perf_counter()\n"
            f"for m in {mods!r}: importlib.import_module(m)\n"
            "dt = time.perf_counter() - t\n"
            f"print(json.dumps({{'loaded': sorted(m for m in {EXECUTION + ('pandas',)!r} if m in sys.modules), 'seconds': dt}}))")
    res = subprocess.run([sys.executable, '-c', code], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-2000:]
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_notebooks_found():
    nbs = sorted(grid_notebooks(ROOT))
    assert {'nbs/quickstart/run.ipynb', 'nbs/recogs/summary.ipynb', 'nbs/cocoa/eval.ipynb'} <= {str(p.relative_to(ROOT)) for p in nbs}
    assert all(p.exists() for p in nbs), [p for p in nbs if not p.exists()]
    assert 'cogen_lib.results' in cogen_imports(ROOT/'nbs'/'quickstart'/'run.ipynb')


def test_paper_notebooks_do_not_load_the_executor():
    mods = sorted(set().union(*(cogen_imports(nb) for nb in grid_notebooks(ROOT))))
    assert 'cogen_lib.results' in mods and 'cogen_lib.runner' not in mods, mods
    got = loaded_after(mods)
    assert not set(got['loaded']) & set(EXECUTION), f"importing {mods} loads {got['loaded']}"


def test_the_probe_sees_the_executor():
    # the same probe on the runner, which executes notebooks (papermill itself it imports when it runs one): it must see
    # the kernel machinery loaded, or the test above proves nothing
    assert {'nbclient', 'jupyter_client'} <= set(loaded_after(['cogen_lib.runner'])['loaded'])


def test_results_imports_light():
    # what it loads; how long that takes is measured by bench/imports.py (a timed assertion fails on a loaded machine)
    got = loaded_after(['cogen_lib.results'])
    assert got['loaded'] == [], got['loaded']        # no papermill, nbclient, jupyter_client, nor pandas

def test_core_names_no_paper(root):
    """The plug-in rule: a core module names no paper (a grid declares what the core needs: `model_kind`,
    `verify_caches`), except in docstrings and in strings that give an example ('e.g. recogs'); no paper's CLI imports
    `cogen_lib.cli` (it imports the shared helpers of `cogen_lib.cliutil`)."""
    import ast
    pkg = root/'cogen_lib'
    papers = sorted(p.name for p in pkg.iterdir() if p.is_dir() and (p/'__init__.py').exists()
                    and (root/'grids'/f'{p.name}.yaml').exists())     # a paper has a grid; cogen_lib.models is core
    bad = []
    for f in sorted([*pkg.glob('*.py'), *(pkg/'models').glob('*.py')]):
        if f.name == '_modidx.py': continue
        tree = ast.parse(f.read_text())
        docs = {id(n.body[0].value) for n in ast.walk(tree) if isinstance(n, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef))
                and n.body and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for n in ast.walk(tree):
            text = n.value if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs else n.id if isinstance(n, ast.Name) else None
            if text is None or 'e.g.' in text: continue
            bad += [(f.name, n.lineno, p) for p in papers if re.search(rf'\b{p}\b', text, re.I)]
    assert not bad, bad
    for p in papers:
        cli = pkg/p/'cli.py'
        if cli.exists(): assert not re.search(r'from \.\.cli import|cogen_lib\.cli\b', cli.read_text()), f"{cli} imports cogen_lib.cli"


def paper_packages(root: Path) -> list[str]:
    "The paper packages: each grid's paper (`grids/<paper>.yaml`) that has a package `cogen_lib/<paper>/`."
    return sorted(g.stem for g in (root/'grids').glob('*.yaml') if (root/'cogen_lib'/g.stem/'__init__.py').exists())


def imported_papers(source: str, module: str, papers: list[str]) -> set[str]:
    """The paper packages that `source`, the text of the module `module` (e.g. `cogen_lib.spor.data`), imports: absolute
    (`import cogen_lib.x`, `from cogen_lib.x import y`, `from cogen_lib import x`), relative (`from ..x import y`,
    `from .. import x`) and by name (`importlib.import_module('cogen_lib.x')`)."""
    package, found = module.split('.')[:-1], set()
    def add(name: str):
        parts = name.split('.')
        if len(parts) > 1 and parts[0] == 'cogen_lib' and parts[1] in papers: found.add(parts[1])
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Import):
            for a in n.names: add(a.name)
        elif isinstance(n, ast.ImportFrom):
            base = '.'.join(package[:len(package) - n.level + 1] if n.level else [])
            mod = '.'.join(p for p in (base, n.module or '') if p)
            add(mod)
            for a in n.names: add(f"{mod}.{a.name}")
        elif isinstance(n, ast.Call) and ast.unparse(n.func).split('.')[-1] == 'import_module' and n.args \
                and isinstance(n.args[0], ast.Constant) and isinstance(n.args[0].value, str):
            add(n.args[0].value)
    return found


def test_the_paper_import_checker_sees_a_violation():
    papers = ['cocoa', 'spor']
    seen = lambda src: imported_papers(src, 'cogen_lib.spor.data', papers) - {'spor'}
    assert seen("from ..core import CogenError\nfrom .metrics import parent\nimport cogen_lib.spor.order") == set()
    for src in ("import cogen_lib.cocoa.generate", "from cogen_lib.cocoa.generate import x",
                "from cogen_lib import cocoa", "from ..cocoa import generate", "from .. import cocoa, core",
                "from ..cocoa.generate import x", "def f():\n    from cogen_lib.cocoa import flights",
                "importlib.import_module('cogen_lib.cocoa.flights')"):
        assert seen(src) == {'cocoa'}, src


def test_no_paper_imports_another(root):
    "A paper is a plug-in: it imports the core and itself, never another paper (CONTRIBUTING: Adding a paper)."
    papers = paper_packages(root)
    assert {'recogs', 'cocoa', 'spor', 'cggc'} <= set(papers), papers
    bad = []
    for p in papers:
        for f in sorted((root/'cogen_lib'/p).rglob('*.py')):
            mod = '.'.join(f.relative_to(root).with_suffix('').parts)
            if f.name == '__init__.py': mod += '.__init__'
            bad += [(str(f.relative_to(root)), q) for q in sorted(imported_papers(f.read_text(), mod, papers) - {p})]
    assert not bad, f"a paper package imports another paper: {bad}"
