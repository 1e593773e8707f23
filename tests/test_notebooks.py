"Run every notebook under nbs/ with nbdev's runner (as `nbdev_test` does), one pytest test per notebook."
from pathlib import Path
import pytest
from nbdev.test import test_nb as run_nb  # renamed so pytest does not collect it

ROOT = Path(__file__).resolve().parents[1]
NBS = sorted(p for p in (ROOT/'nbs').rglob('*.ipynb') if '.ipynb_checkpoints' not in p.parts and not p.name.startswith('_'))

@pytest.mark.parametrize('nb', NBS, ids=[str(p.relative_to(ROOT/'nbs')) for p in NBS])
def test_notebook(nb, monkeypatch):
    monkeypatch.chdir(ROOT)
    ok, secs = run_nb(nb, skip_flags=['slow'], basepath=ROOT, do_print=False, showerr=True)
    assert ok, f"{nb.relative_to(ROOT)} failed (see the traceback above)"

@pytest.mark.parametrize('nb', NBS, ids=[str(p.relative_to(ROOT/'nbs')) for p in NBS])
def test_frontmatter(nb):
    "nbdev reads a notebook's first Markdown cell as its front matter: a list there (`- key: value`) must be YAML, or the docs lose it with only a warning."
    import warnings
    from execnb.nbio import read_nb
    from nbdev.frontmatter import FrontmatterProc
    from nbdev.process import NBProcessor
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        NBProcessor(nb=read_nb(nb), procs=FrontmatterProc).process()
