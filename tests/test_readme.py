"The README is for users: short, no history, and its verdict counts are those of the committed verdict tables."
import re
from pathlib import Path
from cogen_lib.claims import counts_markdown

PAPERS = {'quickstart': 'quickstart', 'recogs': 'ReCOGS', 'cocoa': 'GroundCocoa', 'spor': 'SPOR', 'cggc': 'CGGC'}

def _block(text: str) -> str:
    m = re.search(r'<!-- verdict counts:[^\n]*-->\n(.*?)<!-- end of verdict counts -->', text, re.S)
    assert m, 'README.md: the verdict counts block (between its two markers) is missing'
    return m.group(1)

def test_readme_counts_match_the_committed_verdicts(root):
    "Regenerate the block with `python -c 'from cogen_lib.claims import counts_markdown; ...'` when a summary changes a verdict."
    want = counts_markdown(PAPERS, root)
    assert _block((root/'README.md').read_text()) == want, f"README.md's verdict counts are stale; replace the block with:\n{want}"

def test_readme_is_short_and_has_no_history(root):
    text = (root/'README.md').read_text()
    assert len(text.splitlines()) <= 160
    assert not re.search(r'\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b', text), 'a commit hash in README.md'
    assert not re.search(r'(issue|#)\s*\d+', text, re.I), 'an issue number in README.md'

def test_readme_links_exist(root):
    text = (root/'README.md').read_text()
    for link in re.findall(r'\]\(([^)#]+)(?:#[^)]*)?\)', text):
        if '://' in link: continue
        if link.startswith('figures/') and link.endswith('verdicts.md'): continue     # written by the summaries
        assert (root/link).exists(), f"README.md links to {link}, which does not exist"

def test_grid_comments_are_short(root):
    "A grid holds parameters and a line or two of why; the reasoning behind a budget lives in docs/budgets.md."
    words = {f.name: sum(len(l.split('#', 1)[1].split()) for l in f.read_text().splitlines() if '#' in l) for f in sorted((root/'grids').glob('*.yaml'))}
    assert sum(words.values()) < 600, words

def test_readme_times_are_the_measured_ones(root):
    "Every time in the README comes from measured/measurements.csv or the committed rows' wall_seconds (bench/readme_times.py)."
    import importlib.util
    spec = importlib.util.spec_from_file_location('readme_times', root/'bench'/'readme_times.py')
    rt = importlib.util.module_from_spec(spec); spec.loader.exec_module(rt)
    text = (root/'README.md').read_text()
    m = re.search(re.escape(rt.BEGIN) + r'\n(.*?)' + re.escape(rt.END), text, re.S)
    assert m, "README.md: the times block (between its two markers) is missing"
    assert m.group(1) == rt.render(root), f"README.md's times are stale; run `.venv/bin/python bench/readme_times.py --write`:\n{rt.render(root)}"
