"""The pages a reader gets, in a real browser: every paper's summaries from the committed rows (`cogen run <paper>
--profile cpu --committed`, what `make site` does, into a temporary folder), the site built from them without library
notebooks, then headless Chromium at 1280 px on each summary page (`tests/site_audit.py`): no table cell broken inside
a word, number or interval, no raw TeX, no console error, no network request, every page under 25,000 px and the
verdict table's top within 1,500 px. `tests/test_site.py` audits the pages of smoke runs, whose tables are small and
whose prose is the same; this test audits the tables a reader sees (it found SPOR's verdicts pushed to 1,528 px).
Minutes: the summaries of all five papers and one Sphinx build."""
import shutil, sys, tempfile
from pathlib import Path
import pytest
from cogen_lib.grid import list_papers
from cogen_lib.runner import run_grid
from cogen_lib.site import build_site
sys.path.insert(0, str(Path(__file__).parent))
import site_audit

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope='module')
def committed_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp('committed-out')
    for paper in list_papers(ROOT):
        rep = run_grid(paper, 'cpu', out=out, committed=True, log=lambda s: None)
        assert not rep.failed, (paper, rep)
    return build_site(out, library='none', log=lambda s: None)


def test_committed_summaries_in_browser(committed_site):
    tmp = Path(tempfile.mkdtemp(prefix='cogen-chromium-'))
    d = site_audit.driver(tmp)
    if d is None:
        pytest.skip("headless Chromium is not installed: the browser test needs Debian's chromium and chromium-driver "
                    "(`make browser`, as root, installs them; .ci/run does)")
    site = committed_site.parent
    try:
        pages = sorted(p for p in site.glob('*/summary-*.html') if p.stem.count('-') == 1)
        papers = {p.parent.name for p in pages}
        assert papers >= {'recogs', 'spor', 'cggc', 'cocoa', 'quickstart'}, pages
        problems = []
        for page in pages:
            site_audit.load(d, page)
            name = str(page.relative_to(site))
            a = site_audit.audit_page(d)
            problems += [(name, 'cell broken', b) for b in a['broken'][:3]]
            problems += [(name, 'raw TeX', r) for r in a['raw_math'][:3]]
            problems += [(name, 'request', r) for r in a['requests'][:3]]
            problems += [(name, 'console error', e) for e in site_audit.browser_errors(d)[:3]]
            if a['height'] > site_audit.MAX_HEIGHT: problems.append((name, 'height px', a['height']))
            if a['verdict_top'] is None: problems.append((name, 'no verdict table', None))
            elif a['verdict_top'] > site_audit.MAX_VERDICT_TOP: problems.append((name, 'verdict top px', a['verdict_top']))
        assert not problems, problems
    finally:
        d.quit(); shutil.rmtree(tmp, ignore_errors=True)
