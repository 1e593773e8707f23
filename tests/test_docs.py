"""The docs are for users: what to run and what it costs, not a lab log. No issue number, no machine load, no date of a
session and no paragraph over 150 words in `docs/*.md`; the dated measurements are rows of `measured/measurements.csv`
(the site's *Costs and measurements* page)."""
import re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = sorted((ROOT/'docs').glob('*.md'))
MAX_WORDS = 150
ISSUE = re.compile(r'#\d+|\bissues?\s+#?\d+', re.I)
LOAD = re.compile(r'\bload(?:\s+average)?\s+(?:of\s+|about\s+|~)?\d', re.I)
DATE = re.compile(r'\b20\d\d-\d\d-\d\d\b')
ITEM = re.compile(r'\s*(?:[-*+]|\d+\.)\s')


def paragraphs(text: str) -> list[str]:
    """The prose of a Markdown text: blocks separated by blank lines, each list item a paragraph of its own; fenced code
    blocks, tables (lines starting with `|`) and headings left out."""
    text = re.sub(r'^(```|~~~).*?^\1[^\n]*$', '', text, flags=re.S | re.M)
    out = []
    for block in re.split(r'\n\s*\n', text):
        lines = [l for l in block.splitlines() if l.strip() and not l.lstrip().startswith(('|', '#'))]
        cur = []
        for l in lines:
            if ITEM.match(l) and cur: out.append(' '.join(cur)); cur = []
            cur.append(ITEM.sub('', l, count=1).strip() if ITEM.match(l) else l.strip())
        if cur: out.append(' '.join(cur))
    return out


def test_paragraphs():
    text = "# T\n\none two\nthree\n\n```bash\nfour five six\n```\n\n| a | b |\n| - | - |\n\n- x y\n- z\n1. w\n"
    assert [len(p.split()) for p in paragraphs(text)] == [3, 2, 1, 1]


def test_patterns():
    assert ISSUE.search('over issue #9') and ISSUE.search('issue 12') and ISSUE.search('(#8)')
    assert not ISSUE.search('[guide](docs/guide.md#the-site) and Table 4')
    assert LOAD.search('at load 3-4') and LOAD.search('load average 11-12') and LOAD.search('load about 2')
    assert not LOAD.search('`load_lm` and load the model') and DATE.search('on 2026-11-27') and not DATE.search('2024')


@pytest.mark.parametrize('doc', DOCS, ids=[d.name for d in DOCS])
def test_doc_is_for_users(doc):
    text = doc.read_text()
    assert not ISSUE.findall(text), f"{doc.name}: an issue number ({ISSUE.findall(text)}); say what changed instead"
    assert not LOAD.findall(text), f"{doc.name}: a machine load; measurements go into measured/measurements.csv"
    dates = DATE.findall(text)
    assert not dates, f"{doc.name}: dates {dates}; measurements go into measured/measurements.csv"
    long = [(len(p.split()), p[:80]) for p in paragraphs(text) if len(p.split()) > MAX_WORDS]
    assert not long, f"{doc.name}: paragraphs over {MAX_WORDS} words: {long}"


def test_there_are_docs():
    assert {'guide.md', 'budgets.md'} <= {d.name for d in DOCS}
