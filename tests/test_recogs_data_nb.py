"The ReCOGS data notebook (executed by the runner, skipped by nbdev_test): its shape, without executing it."
import json
from pathlib import Path
from papermill.translators import PythonTranslator

NB = Path(__file__).resolve().parents[1]/'nbs'/'recogs'/'data.ipynb'

def _cells(): return json.loads(NB.read_text())['cells']
def _src(c): return ''.join(c['source'])

def test_front_matter():
    first = _cells()[0]
    assert first['cell_type'] == 'markdown' and _src(first).startswith('# ')
    lines = _src(first).splitlines()
    assert '- skip_exec: true' in lines, 'nbdev_test must skip it (it converts every variant)'
    assert any(l.startswith('> ') for l in lines)
    assert not any('default_exp' in _src(c) for c in _cells() if c['cell_type'] == 'code'), 'a summary notebook exports nothing'

def test_parameters():
    cells = [c for c in _cells() if 'parameters' in c.get('metadata', {}).get('tags', [])]
    assert len(cells) == 1
    params = {p.name: p.inferred_type_name for p in PythonTranslator.inspect({'source': _src(cells[0])})}
    assert params == {'results_dir': 'str', 'runs_file': 'str', 'figures_dir': 'str', 'profile': 'str', 'seed': 'int'}

def test_outputs_named():
    code = '\n'.join(_src(c) for c in _cells() if c['cell_type'] == 'code')
    for name in ('table8_split_sizes', 'fig2_bigrams_after_comma', 'fig3_lengths', 'rewrite_examples'):
        assert f"'{name}'" in code, name
