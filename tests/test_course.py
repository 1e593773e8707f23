"""The course is complete and wired: five numbered notebooks, each with a solutions notebook; every exercise has a hashed
answer in course_checks.py and is solved through `assert check(...)` in its solutions notebook; the site lists the course
first. (tests/test_notebooks.py executes every course notebook, exercises unanswered and solutions.)"""
import re, sys
from pathlib import Path
import nbformat
from cogen_lib.site import library_notebooks

ROOT = Path(__file__).resolve().parents[1]
COURSE = ROOT/'nbs'/'course'

def _checks(nb: Path, solved: bool) -> list[str]:
    src = '\n'.join(c.source for c in nbformat.read(nb, as_version=4).cells if c.cell_type == 'code')
    return re.findall(r"assert check\('([\d.]+)'" if solved else r"^check\('([\d.]+)', answer_", src, re.M)

def test_five_notebooks_with_solutions_and_checks():
    sys.path.insert(0, str(COURSE))
    try: from course_checks import EXPECTED
    finally: sys.path.remove(str(COURSE))
    lessons = sorted(p for p in COURSE.glob('[0-9][0-9]_*.ipynb') if not p.stem.endswith('_solutions'))
    assert [p.name[:2] for p in lessons] == ['01', '02', '03', '04', '05'], lessons
    for nb in lessons:
        sol = nb.with_name(f'{nb.stem}_solutions.ipynb')
        assert sol.exists(), sol
        asked = _checks(nb, solved=False)
        n = str(int(nb.name[:2]))
        assert asked and all(a.startswith(n + '.') for a in asked), (nb.name, asked)
        assert set(asked) <= set(EXPECTED), f"{nb.name}: exercises without an expected answer: {set(asked) - set(EXPECTED)}"
        assert sorted(_checks(sol, solved=True)) == sorted(asked), f"{sol.name} does not solve every exercise of {nb.name}"
        assert nb.stem in (COURSE/'README.md').read_text(), f"{nb.name} is missing from nbs/course/README.md"

def test_site_lists_the_course_first():
    libs = library_notebooks(ROOT)
    course = [p for p in libs if p.parent.name == 'course']
    assert len(course) == 10 and libs[:10] == course
    assert [p.name for p in course][:2] == ['01_cogs.ipynb', '01_cogs_solutions.ipynb']
