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
