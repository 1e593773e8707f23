"`nbdev_export` must leave cogen_lib/ unchanged: the generated modules are in sync with the notebooks."
import filecmp, shutil, subprocess, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

def _tree(d: Path) -> dict:
    return {p.relative_to(d): p.read_bytes() for p in sorted(d.rglob('*.py')) if '__pycache__' not in p.parts}

def test_export_in_sync(tmp_path):
    for name in ('settings.ini', 'setup.py', 'pyproject.toml'):
        if (ROOT/name).exists(): shutil.copy(ROOT/name, tmp_path/name)
    shutil.copytree(ROOT/'nbs', tmp_path/'nbs')
    shutil.copytree(ROOT/'cogen_lib', tmp_path/'cogen_lib', ignore=shutil.ignore_patterns('__pycache__'))
    exe = Path(sys.executable).parent/'nbdev_export'
    subprocess.run([str(exe)], cwd=tmp_path, check=True, capture_output=True, text=True)
    before, after = _tree(ROOT/'cogen_lib'), _tree(tmp_path/'cogen_lib')
    changed = sorted(str(p) for p in set(before) | set(after) if before.get(p) != after.get(p))
    assert not changed, f"nbdev_export changes {changed}: run `nbdev_export` and commit the result"

def test_notebooks_clean(tmp_path):
    "Notebooks are committed clean: `nbdev_clean` (outputs, execution counts, metadata) changes nothing."
    shutil.copy(ROOT/'settings.ini', tmp_path/'settings.ini')
    shutil.copytree(ROOT/'nbs', tmp_path/'nbs')
    exe = Path(sys.executable).parent/'nbdev_clean'
    subprocess.run([str(exe)], cwd=tmp_path, check=True, capture_output=True, text=True)
    dirty = sorted(str(p.relative_to(tmp_path)) for p in (tmp_path/'nbs').rglob('*.ipynb')
                   if p.read_bytes() != (ROOT/p.relative_to(tmp_path)).read_bytes())
    assert not dirty, f"notebooks not clean: {dirty}; run `nbdev_clean` and commit"
