"""What a reader sees of one page of the built site in headless Chromium: the browser test's checks, and a measuring
tool (`python tests/site_audit.py _site [GLOB...]` prints one line per page, or per page matching a GLOB).
`audit_page(driver)` on a loaded page returns its height, the top of its verdict table, the table cells whose text is
broken inside a word, a number or an interval (or overflows the cell), the raw TeX delimiters left unrendered, and the
requests that left the machine; `browser_errors(driver)` the console's errors since the last call (the driver needs
`goog:loggingPrefs`, as `driver()` sets)."""
import shutil, sys, time
from pathlib import Path

FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
         '--disable-sync', '--no-first-run', '--window-size=1280,1600']
MAX_HEIGHT = 25_000      # px at 1280 px: every page is shorter
MAX_VERDICT_TOP = 1_500  # px at 1280 px: a paper page's verdict table starts within about one screen

# A token is a word, a number or an interval with its estimate ("+9.2 [+0.9, +17.4]"); a line may end only at a space, a
# hyphen or a slash outside an interval.
# For each visible table cell: its text overflowing the cell, or a token whose characters lie on more than one line.
_CELLS = r"""
const out = [];
const NUM = '[+\\-\\u2212]?\\d[\\d,]*(?:\\.\\d+)?\\s?%?';
const TOKEN = new RegExp(`(?:${NUM}\\s*)?\\[${NUM},\\s*${NUM}\\]|[^\\s\\-\\/\\u2013\\u2014\\u2192]{2,}`, 'g');
for (const c of document.querySelectorAll('.bd-article td, .bd-article th')) {
  if (c.offsetParent === null || !c.getClientRects().length) continue;            // in a closed <details>: not shown
  const text = c.innerText.trim().replace(/\s+/g, ' ').slice(0, 80);
  if (c.scrollWidth > c.clientWidth + 1) { out.push(['overflows its cell', text, '']); continue; }
  const walk = document.createTreeWalker(c, NodeFilter.SHOW_TEXT);
  let node, bad = null;
  while (!bad && (node = walk.nextNode())) {
    if (node.parentElement.closest('.MathJax, .MathJax_Preview, script')) continue;
    for (const m of node.data.matchAll(TOKEN)) {
      const r = document.createRange(); r.setStart(node, m.index); r.setEnd(node, m.index + m[0].length);
      const tops = new Set(Array.from(r.getClientRects()).filter(x => x.width > 0).map(x => Math.round(x.bottom)));
      if (tops.size > 1) { bad = m[0]; break; }
    }
  }
  if (bad) out.push(['broken inside', text, bad]);
}
return out;
"""

# Raw TeX left in the page's text (outside code): MathJax did not run, or did not find the math.
_RAW_MATH = r"""
const out = [], walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
let n;
while ((n = walk.nextNode())) {
  const p = n.parentElement;
  if (!p || !p.getClientRects().length) continue;
  if (p.closest('pre, code, script, style, .MathJax_Preview, [type^="math/"]')) continue;
  const i = n.data.search(/\\\(|\\\[|\$\$/);
  if (i >= 0) out.push(n.data.slice(Math.max(0, i - 20), i + 40));
}
return out;
"""

_VERDICT_TOP = r"""
const t = document.querySelector('.bd-article table.cogen-verdicts') ||
  Array.from(document.querySelectorAll('.bd-article table')).find(t => {
    const h = Array.from(t.querySelectorAll('th')).map(x => x.innerText.trim().toLowerCase());
    return h.includes('claim') && h.includes('verdict'); });
return t ? Math.round(t.getBoundingClientRect().top + window.scrollY) : null;
"""

def driver(tmp: Path):
    "A headless Chromium (Debian's chromium, chromedriver) at 1280 px keeping the console's messages; None without it."
    chromium = shutil.which('chromium') or shutil.which('chromium-browser')
    drv = shutil.which('chromedriver')
    if not (chromium and drv): return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions(); opts.binary_location = chromium
    for a in FLAGS + [f'--user-data-dir={tmp}']: opts.add_argument(a)
    opts.set_capability('goog:loggingPrefs', {'browser': 'ALL'})
    return webdriver.Chrome(service=Service(drv), options=opts)

def load(d, page: Path, settle: float = 20.0):
    "Open `page` and wait until it is loaded and MathJax (when the page has it) has typeset."
    d.get(page.as_uri())
    t0 = time.monotonic()
    while time.monotonic() - t0 < settle:
        if d.execute_script("return document.readyState === 'complete' && (!window.MathJax || !MathJax.Hub || "
                            "(MathJax.isReady && !MathJax.Hub.queue.pending && !MathJax.Hub.queue.running))"): break
        time.sleep(0.05)

def browser_errors(d) -> list[str]:
    "The console's errors (level SEVERE: script errors, failed loads) since the last call."
    return [e['message'] for e in d.get_log('browser') if e.get('level') == 'SEVERE']

def audit_page(d) -> dict:
    "What the loaded page shows: height, verdict_top (None: no verdict table), broken cells, raw_math, requests."
    return dict(height=d.execute_script('return document.documentElement.scrollHeight'),
                verdict_top=d.execute_script(_VERDICT_TOP),
                broken=d.execute_script(_CELLS),
                cells=d.execute_script("return document.querySelectorAll('.bd-article td, .bd-article th').length"),
                raw_math=d.execute_script(_RAW_MATH),
                requests=[r for r in d.execute_script("return performance.getEntriesByType('resource').map(x=>x.name)")
                          if not r.startswith(('file:', 'data:', 'blob:'))])

if __name__ == '__main__':
    import tempfile
    site = Path(sys.argv[1] if len(sys.argv) > 1 else '_site')
    tmp = Path(tempfile.mkdtemp(prefix='cogen-chromium-'))
    d = driver(tmp)
    if d is None: sys.exit('headless Chromium is not installed (`make browser`)')
    try:
        for page in sorted(site.rglob('*.html')):
            rel = page.relative_to(site)
            if rel.parts[0].startswith('_') or (sys.argv[2:] and not any(rel.match(g) for g in sys.argv[2:])): continue
            load(d, page); a = audit_page(d); err = browser_errors(d)
            print(f"{str(page.relative_to(site)):60s} height {a['height']:>7} verdict_top {a['verdict_top']} "
                  f"cells {a['cells']} broken {len(a['broken'])} raw_math {len(a['raw_math'])} errors {len(err)} "
                  f"requests {len(a['requests'])}"
                  + (f"  e.g. {a['broken'][0]}" if a['broken'] else '') + (f"  {err[0][:150]}" if err else ''))
    finally:
        d.quit(); shutil.rmtree(tmp, ignore_errors=True)
