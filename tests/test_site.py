"""The site in a real browser. Smoke runs of two papers (quickstart, GroundCocoa) into a temporary folder, the site built
from them with one library notebook, then headless Chromium loads every page at 1280 px (`tests/site_audit.py`): every image loads, every internal link
resolves, no table cell breaks inside a word, a number or an interval, no raw TeX, no console error, no network request,
every page under 25,000 px, a verdict table's top within 1,500 px; screenshots of the index and of one summary go under
_site/. On the same build,
structurally: every figure a notebook saved is shown on its page and no output prints as a tuple (`check_site`: the
three summaries, quickstart's and GroundCocoa's summary and walkthrough, and the runs), analysis code is folded on summary
and run pages and in view on library pages, and the front page has a verdicts section per paper. A smoke run into the
project leaves the tracked files under figures/ and results/ unchanged (smoke figures go to a scratch folder). The
quickstart's smoke run that the site shows is also checked end to end (`test_quickstart_smoke`, last: it reruns it).
`COGEN_SITE_ALL_PAPERS=1` adds the same check over the smoke build of every paper (minutes of model runs; not in `make test`)."""
import os, re, shutil, subprocess, sys, tempfile, time
from pathlib import Path
import pandas as pd
from urllib.parse import urlparse, unquote
import nbformat, pytest
from cogen_lib.grid import list_papers
from cogen_lib.runner import run_grid
from cogen_lib.site import build_site, check_site, saved_figures
sys.path.insert(0, str(Path(__file__).parent))
import site_audit

ROOT = Path(__file__).resolve().parents[1]
def _git_status() -> str:
    "The changed tracked files where a run writes (figures/, results/): other edits to the checkout while the test runs are not the run's."
    return subprocess.run(['git', '-C', str(ROOT), 'status', '--porcelain', '--untracked-files=no', '--', 'figures', 'results'],
                          capture_output=True, text=True, check=True).stdout

def test_smoke_run_leaves_tree_clean():
    if shutil.which('git') is None or not (ROOT/'.git').exists(): pytest.skip('not a git checkout')
    before = _git_status()
    rep = run_grid('quickstart', 'smoke', log=lambda s: None)      # into the project itself, as `cogen run quickstart` does
    assert not rep.failed
    assert _git_status() == before, "a smoke run changed tracked files (it must write figures under runs/, not figures/)"
    assert (ROOT/'runs'/'quickstart'/'figures-smoke'/'exact_match.png').exists()

@pytest.fixture(scope='module')
def smoke(tmp_path_factory) -> tuple[Path, str]:
    """Smoke runs of the quickstart and GroundCocoa into one folder, and what the quickstart's said: the site below and
    `test_quickstart_smoke` read the same runs (each executed once in the suite)."""
    out = tmp_path_factory.mktemp('site-out')
    said = {}
    for paper in ('quickstart', 'cocoa'):
        msgs = []
        rep = run_grid(paper, 'smoke', out=out, log=msgs.append)
        assert not rep.failed, rep
        said[paper] = '\n'.join(msgs)
    return out, said['quickstart']

@pytest.fixture(scope='module')
def site(smoke) -> Path:
    return build_site(smoke[0], library=['nbs/00_core.ipynb'])

def test_site_structure(site):
    html = site.read_text()
    for s in ('GroundCocoa', 'Kohli', 'smollm2-135m, direct, seed 0', 'smollm2-135m, seed 0', 'cogen_lib.core'):
        assert s in html, s
    import re
    texts = [re.sub(r'<[^>]+>', '', t) for t in re.findall(r'<a [^>]*>(.*?)</a>', html, re.S)]
    assert any('smollm2-135m, seed 0' in t for t in texts)
    assert not [t for t in texts if 'model=' in t or '_seed=' in t], "a run is named by its slug"   # readable names, not slugs
    summary = (site.parent/'quickstart'/'summary-smoke.html').read_text()
    assert '<img' in summary and 'Provenance:' in summary and 'skip_exec' not in summary and 'IProgress' not in summary
    assert 'hide above-input' in summary and 'Show code' in summary            # analysis code folded on summaries and runs
    assert 'hide above-input' in (site.parent/'cocoa'/'summary-smoke-walkthrough.html').read_text()
    lib = (site.parent/'library'/'00_core.html').read_text()
    assert 'cell_input' in lib and 'hide above-input' not in lib               # a library notebook's code in view
    body = re.sub(r'<[^>]+>', '', html.split('id="verdicts"')[1])
    for paper in list_papers():                                                # the front page: each paper's verdicts or their absence
        assert f'figures/{paper}/verdicts.md' in body, paper
    assert 'not testable' in body and 'inconclusive' in body                    # each kind of verdict defined on the front page
    meas = (site.parent/'measurements.html').read_text()                        # the measurements page, from measured/measurements.csv
    assert 'Costs and measurements' in html and 'make install' in meas
    assert (site.parent/'docs'/'guide.html').exists() and (site.parent/'docs'/'verification.html').exists()

def test_every_saved_figure_on_its_page(site):
    """Every PNG a notebook of the build wrote (named by `figure saved: ...png` in its outputs, or written into its figures
    folder while it ran) is an image on its page, compared by content; no output on a page is a tuple of saved tables."""
    out = site.parent.parent
    summaries = sorted((out/'runs').glob('*/summary-*.ipynb'))
    saved = {f'{p.parent.name}/{p.stem}': [f.name for f in saved_figures(nbformat.read(p, as_version=4))] for p in summaries}
    assert len(summaries) >= 3 and all(saved.values()), saved                 # quickstart's summary, GroundCocoa's summary and walkthrough: each saves a figure
    assert check_site(site, out) == []

@pytest.mark.skipif(not os.environ.get('COGEN_SITE_ALL_PAPERS'), reason='set COGEN_SITE_ALL_PAPERS=1: smoke runs of every paper (minutes)')
def test_every_paper_figures_on_pages(tmp_path):
    for paper in list_papers():
        rep = run_grid(paper, 'smoke', out=tmp_path, log=lambda s: None)
        assert not rep.failed, (paper, rep)
    idx = build_site(tmp_path, library='none')
    assert len(list(tmp_path.glob('runs/*/summary-*.ipynb'))) >= 8
    assert check_site(idx, tmp_path) == []

def test_site_in_browser(site):
    """Every page in headless Chromium at 1280 px (`site_audit`): every image loads, every internal link resolves (a
    front-page link to a claim's row finds the row), no table cell breaks inside a word, a number or an interval or
    overflows, no raw TeX is left (MathJax typesets offline), no console error, no request leaves the machine, no
    scroll container is wider than the column, every page is under 25,000 px and a verdict table starts within 1,500 px."""
    tmp = Path(tempfile.mkdtemp(prefix='cogen-chromium-'))
    d = site_audit.driver(tmp)
    if d is None:
        pytest.skip("headless Chromium is not installed: the browser test needs Debian's chromium and chromium-driver "
                    "(`make browser`, as root, installs them; .ci/run does)")
    try:
        pages = sorted(p for p in site.parent.rglob('*.html') if not p.relative_to(site.parent).parts[0].startswith('_'))
        assert len(pages) >= 8, pages
        bad_img, bad_link, wide, requests, broken, raw, errors, tall, late, verdict_pages = [], [], [], [], [], [], [], [], [], []
        for page in pages:
            site_audit.load(d, page)
            name = str(page.relative_to(site.parent))
            imgs = d.execute_script("return Array.from(document.images).map(i => [i.src, i.complete && i.naturalWidth > 0])")
            bad_img += [(name, src) for src, ok in imgs if not ok]
            for href in d.execute_script("return Array.from(document.querySelectorAll('a[href]')).map(a => a.href)"):
                u = urlparse(href)
                if u.scheme == 'file' and not Path(unquote(u.path)).exists(): bad_link.append((name, href))
            wide += [(name, w) for w in d.execute_script(
                "return Array.from(document.querySelectorAll('.bd-article .cogen-scroll, .bd-article table:not(.cogen-scroll table)'))"
                ".filter(t => t.offsetParent !== null)"
                ".filter(t => t.getBoundingClientRect().width > t.closest('.bd-article').getBoundingClientRect().width + 2)"
                ".map(t => Math.round(t.getBoundingClientRect().width))")]
            a = site_audit.audit_page(d)
            requests += a['requests']
            broken += [(name, *b) for b in a['broken']]
            raw += [(name, r) for r in a['raw_math']]
            errors += [(name, e) for e in site_audit.browser_errors(d)]
            if a['height'] > site_audit.MAX_HEIGHT: tall.append((name, a['height']))
            if a['verdict_top'] is not None:
                verdict_pages.append(name)
                if a['verdict_top'] > site_audit.MAX_VERDICT_TOP: late.append((name, a['verdict_top']))
        assert not bad_img, bad_img
        assert not bad_link, bad_link
        assert not wide, f"tables (or their scroll containers) wider than the page's column at 1280 px: {wide}"
        assert not requests, f"requests to the network: {sorted(set(requests))[:10]}"
        assert not broken, f"{len(broken)} table cells broken inside a word, number or interval, e.g. {broken[:5]}"
        assert not raw, f"raw TeX on the page (MathJax did not typeset it): {raw[:5]}"
        assert not errors, f"console errors: {errors[:5]}"
        assert not tall, f"pages over {site_audit.MAX_HEIGHT} px at 1280 px: {tall}"
        assert not late, f"verdict tables starting below {site_audit.MAX_VERDICT_TOP} px: {late}"
        assert {'quickstart/summary-smoke.html', 'cocoa/summary-smoke.html'} <= set(verdict_pages), verdict_pages
        site_audit.load(d, site)                                # the front page: each claim's line links to its row
        claims = d.execute_script("return Array.from(document.querySelectorAll('ul.cogen-claims a')).map(a => a.href)")
        assert claims, "the front page lists no claim"
        for href in (h for h in claims if Path(unquote(urlparse(h).path)).exists()):
            site_audit.load(d, Path(unquote(urlparse(href).path)))
            assert d.execute_script("return document.getElementById(arguments[0]) !== null", urlparse(href).fragment), href
        d.get(site.as_uri()); d.save_screenshot(str(site.parent/'screenshot-index.png'))
        summary = site.parent/'cocoa'/'summary-smoke.html'         # a summary's figures, on its page or its sections' pages
        n, first = 0, None
        for p in [summary, *sorted(summary.with_suffix('').glob('*.html'))]:
            site_audit.load(d, p)
            k = d.execute_script("return Array.from(document.images).filter(i => i.naturalWidth > 100).length")
            n += k; first = first or (p if k else None)
        assert n >= 2, f"{summary}: {n} figures shown inline"
        # the summary's first figure (and the provenance line under it) in view, not the page's top
        site_audit.load(d, first)
        d.execute_script("Array.from(document.images).find(i => i.naturalWidth > 100).scrollIntoView({block: 'center'})")
        d.save_screenshot(str(site.parent/'screenshot-summary.png'))
    finally:
        d.quit(); shutil.rmtree(tmp, ignore_errors=True)
    for s in ('screenshot-index.png', 'screenshot-summary.png'):
        assert (site.parent/s).stat().st_size > 10_000


def _cogen(*args, cwd=ROOT):
    r = subprocess.run([str(Path(sys.executable).parent/'cogen'), *args], cwd=cwd, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout + r.stderr

def test_quickstart_smoke(smoke):
    """`cogen run quickstart --profile smoke` end to end (the run the site above shows): figures written to scratch, per-item
    outcomes with the baselines and the budget flag beside the rows; `cogen run` again skips everything, and a forced
    rerun calls no model. Last in this file: the reruns execute the run and its summary again in the site's folder."""
    out, said = smoke
    figs = out/'runs'/'quickstart'/'figures-smoke'            # a smoke run never writes the committed figures/
    for ext in ('png', 'pdf', 'md', 'csv', 'tex'): assert (figs/f'exact_match.{ext}').exists(), ext
    assert not (out/'figures').exists()
    for name in ('verdicts', 'baseline_tests', 'budget', 'per_run'): assert (figs/f'{name}.md').exists(), name
    assert 'baseline (input-blind)' in (figs/'exact_match.md').read_text()
    items = pd.read_csv(next((out/'results'/'quickstart').glob('*.items.csv.gz')))
    assert len(items) == 4 and items.item.is_unique and items.item.str.startswith('gen:').all()
    assert {'gold', 'prediction', 'em', 'token_f1', 'hit_budget', 'random_lf_f1', 'constant_lf_f1'} <= set(items.columns)
    budget = int(pd.read_csv(next((out/'results'/'quickstart').glob('*.csv'))).max_new_tokens.iloc[0])   # the rows' budget
    assert (items.gold_tokens > 0).all() and (items.truncated == (items.gold_tokens > budget)).all()
    assert not items.em[items.truncated].any()                                                     # a gold longer than the budget is never matched
    assert 'quickstart/smoke: ran 1, skipped 0' in said, said
    out2 = _cogen('run', 'quickstart', '--profile', 'smoke', '--out', str(out))
    assert 'ran 0, skipped 1 (fresh), failed 0; model calls in this invocation: 0' in out2
    out3 = _cogen('run', 'quickstart', '--profile', 'smoke', '--out', str(out), '--force')
    assert 'ran 1, skipped 0 (fresh), failed 0; model calls in this invocation: 0' in out3, out3
