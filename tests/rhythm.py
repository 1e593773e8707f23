"""How a library notebook reads: is each exported definition followed by its test or example?

An exported cell (`#| export`/`#| exports`) that defines functions or classes is *followed* when, before the next
exported cell, a code cell that is not exported either runs a test (`test_*`, `assert`) or calls one of the names the
exported cell defines. fastcore's `01_basics` and our `recogs/01_rewrites` read this way. Used by
`tests/test_rhythm.py`; run it as a script to print the table: `python tests/rhythm.py`.
"""
from __future__ import annotations
import ast, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_EXPORT = re.compile(r'^\s*#\|\s*(export|exports)\b', re.M)
_TEST = re.compile(r'\b(test_\w+|assert)\b')


def _src(cell) -> str:
    s = cell.get('source', '')
    return ''.join(s) if isinstance(s, list) else s


def _defined(src: str) -> set[str]:
    "Names of the top-level functions and classes in `src` (empty when it does not parse)."
    try: tree = ast.parse('\n'.join(l for l in src.splitlines() if not l.lstrip().startswith('%')))
    except SyntaxError: return set()
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}


def notebook_rhythm(path: Path) -> tuple[int, int, list[str]]:
    "(followed, exported definition cells, names of the unfollowed cells' definitions) for one notebook."
    cells = [c for c in json.loads(Path(path).read_text())['cells'] if c['cell_type'] == 'code']
    total = followed = 0; missing = []
    for i, c in enumerate(cells):
        src = _src(c)
        if not _EXPORT.search(src): continue
        names = _defined(src)
        if not names: continue
        total += 1
        ok = False
        for d in cells[i + 1:]:
            ds = _src(d)
            if _EXPORT.search(ds): break
            if _TEST.search(ds) or any(re.search(rf'\b{re.escape(n)}\b', ds) for n in names): ok = True; break
        if ok: followed += 1
        else: missing.append('/'.join(sorted(names)))
    return followed, total, missing


def library_notebooks() -> list[Path]:
    "Every notebook in `nbs/` that exports code (the library), sorted."
    def exports(p):
        return any(c['cell_type'] == 'code' and _EXPORT.search(_src(c)) for c in json.loads(p.read_text())['cells'])
    return sorted(p for p in (ROOT / 'nbs').rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts and exports(p))


if __name__ == '__main__':
    F = T = 0
    for p in library_notebooks():
        f, t, miss = notebook_rhythm(p)
        if not t: continue
        F += f; T += t
        print(f'{f / t:6.0%} {f:3d}/{t:<3d} {p.relative_to(ROOT / "nbs")}' + (f'   missing: {", ".join(miss[:6])}' if '-v' in sys.argv and miss else ''))
    print(f'{F / T:6.0%} {F:3d}/{T:<3d} all')
