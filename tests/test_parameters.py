"Every paper notebook's `parameters` cell: one typed assignment per line, each with a comment, all parsed by papermill."
import json
from pathlib import Path
import pytest
from papermill.translators import PythonTranslator

ROOT = Path(__file__).resolve().parents[1]

def _param_cells():
    for nb in sorted((ROOT/'nbs').rglob('*.ipynb')) + sorted((ROOT/'tests'/'fixtures').rglob('*.ipynb')):
        cells = [c for c in json.loads(nb.read_text())['cells'] if 'parameters' in c.get('metadata', {}).get('tags', [])]
        if cells: yield pytest.param(nb, cells, id=str(nb.relative_to(ROOT)))

@pytest.mark.parametrize('nb,cells', list(_param_cells()))
def test_parameters_cell(nb, cells):
    assert len(cells) == 1, f"{nb}: {len(cells)} cells tagged 'parameters'; papermill needs exactly one"
    src = ''.join(cells[0]['source'])
    lines = [l for l in src.splitlines() if l.strip()]
    params = PythonTranslator.inspect({'source': src})
    assert len(params) == len(lines), f"{nb}: papermill parsed {[p.name for p in params]} from {len(lines)} lines"
    for p in params:
        assert p.inferred_type_name != 'None', f"{nb}: parameter {p.name!r} has no type annotation"
        assert p.help, f"{nb}: parameter {p.name!r} has no comment saying what it is"
