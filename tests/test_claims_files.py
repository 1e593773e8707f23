"""Claim files (`claims/<paper>.yaml`, read by `cogen_lib.claims.load_claims`): every committed one is valid against its
paper's grid, and a bad one (an unknown arm, a missing paper number, a typo in a field, ...) gives one error naming
the file, the line and the field, before anything is computed."""
from pathlib import Path
import pytest
from cogen_lib.core import CogenError
from cogen_lib.claims import load_claims, FORMS

ROOT = Path(__file__).resolve().parents[1]
SPOR = (ROOT/'claims'/'spor.yaml').read_text()


def test_committed_claim_files_are_valid():
    files = sorted((ROOT/'claims').glob('*.yaml'))
    assert files, 'no claim files'
    for f in files:
        cf = load_claims(f.stem, ROOT)
        assert len(cf) and all(c.untestable or c.form in FORMS for c in cf), f


def test_spor_claims_cover_the_papers_central_claims():
    ids = {c.id for c in load_claims('spor', ROOT)}
    for ds in ('webnlg', 'e2e'):
        assert {f'systematicity-{ds}', f'productivity-shrinks-{ds}', f'order-cwio-{ds}', f'order-ordering-{ds}', f'order-fidelity-{ds}',
                f'order-perf-{ds}', f'order-variance-fidelity-{ds}', f'order-variance-ordering-{ds}', f'rules-{ds}'} <= ids
        assert {f'productivity-{ds}-n{n}' for n in (3, 4, 5)} <= ids
    assert 'systematicity-e2e-larger' in ids
    cf = load_claims('spor', ROOT)
    assert all(c.preconditions for c in cf if not c.untestable)          # every testable claim states its floor
    assert cf['rules-webnlg'].form == 'level' and cf['rules-webnlg'].level == 90     # a level, not "below copy-the-table"


def _replace(old: str, new: str, count: int = 1):
    def edit(text: str) -> str:
        assert old in text, old
        return text.replace(old, new, count)
    return edit


# (what is wrong, the edit to claims/spor.yaml, the text whose line the error names, what the error says)
BAD = [
    ('unknown arm value', _replace('train_set: combination}', 'train_set: combo}'), 'train_set: combo}',
     "claims[0].arms.a.train_set: unknown arm: no run of the grid has train_set='combo' (did you mean 'combination'?)"),
    ('a threshold no run has', _replace('n: 3, train_set: visible}', 'n: 6, train_set: visible}'), 'n: 6, train_set',
     "arms.a.n: unknown arm: no run of the grid has n=6"),
    ('unknown arm parameter', _replace('{aspect: systematicity, dataset: webnlg, train_set: atom}', '{aspect: systematicity, datset: webnlg, train_set: atom}'),
     'datset: webnlg', "claims[0].arms.b.datset: not a parameter of the paper's runs (did you mean 'dataset'?)"),
    ('a precondition names an unknown arm', _replace('preconditions: [{kind: above_baseline, arms: [a, b], measure: parent}]',
                                                     'preconditions: [{kind: above_baseline, arms: [a, x], measure: parent}]'),
     'arms: [a, x]', "claims[0].preconditions[0].arms: unknown arm 'x': this claim's arms are a, b"),
    ('an arm the effect does not use', _replace("      b: {aspect: systematicity, dataset: webnlg, train_set: atom}",
                                                "      c: {aspect: systematicity, dataset: webnlg, train_set: atom}"),
     'c: {aspect: systematicity, dataset: webnlg', "claims[0].arms.c: unknown arm 'c': the effect 'a - b' uses the arms a, b"),
    ('missing paper number', _replace('paper: {effect: 0.40, n: 2360, ', 'paper: {n: 2360, '), 'paper: {n: 2360, ',
     "claims[0].paper: the paper's effect is missing"),
    ('paper number as text', _replace('effect: 0.40,', 'effect: "0.40",'), 'effect: "0.40"',
     "claims[0].paper.effect: the paper's effect must be a number, got '0.40' (YAML read it as text: unquote it)"),
    ('typo in a claim field', _replace('    quote: "all models, including LLMs, show performance gaps on Atom and Combination"\n',
                                       '    qoute: "all models, including LLMs, show performance gaps on Atom and Combination"\n'),
     'qoute:', "claims[0].qoute: unknown field (did you mean 'quote'?)"),
    ('typo in a paper field', _replace('uncertainty: "none printed (mean of 6 models x 3 seeds; Table 2',
                                       'uncertainity: "none printed (mean of 6 models x 3 seeds; Table 2'),
     'uncertainity:', "claims[0].paper.uncertainity: unknown field (did you mean 'uncertainty'?)"),
    ('typo in a measure field', _replace('parent: {column: parent_f, set: test,', 'parent: {colum: parent_f, set: test,'), 'colum: parent_f',
     "measures.parent.colum: unknown field (did you mean 'column'?)"),
    ('unknown measure', _replace('    measure: parent\n    effect: a - b\n', '    measure: parents\n    effect: a - b\n'), 'measure: parents',
     "claims[0].measure: 'parents' is not a measure of this file (did you mean 'parent'?)"),
    ('unknown form', _replace('    form: level\n', '    form: levels\n'), 'form: levels', "'levels' is not a form (did you mean 'level'?)"),
    ('level claim without its floor', _replace("from: \"Table 5 (trained on Original): mean fidelity POH over the 6 models\"}\n    preconditions:\n      - {kind: above_baseline, arms: [a], measure: parent}\n      - {kind: competence, arms: [a], measure: parent, level: 66.96, models: \"BART-large, the weakest of the paper's six on PERF (Table 5)\"}\n",
                                               "from: \"Table 5 (trained on Original): mean fidelity POH over the 6 models\"}\n"),
     '- id: order-variance-fidelity-webnlg', "a level claim needs its competence floor"),
    ('no difference without a margin', _replace('  - id: order-perf-e2e\n    claim: "Order (E2E): Match training lowers performance (PERF)"\n',
                                                '  - id: order-perf-e2e\n    claim: "Order (E2E): Match training lowers performance (PERF)"\n    form: equivalence\n'),
     '- id: order-perf-e2e', "a claim of no difference needs 'margin'"),
    ('a difference of 0', _replace('effect: 0.40,', 'effect: 0,'), 'effect: 0,', "a difference claim's effect is not 0"),
    ('two claims with one id', _replace('  - id: systematicity-e2e\n', '  - id: systematicity-webnlg\n'), '- id: systematicity-webnlg\n    claim: "Systematicity (E2E)',
     "'systematicity-webnlg' is also the id of claims[0]"),
    ('comparison at odds with the effect', _replace('comparison: {items: independent,', 'comparison: {items: paired,'), 'comparison: {items: paired, seeds: units}\n    paper: {effect: 1.44',
     "'paired': the effect '(a - b) - (c - d)' compares 'independent' items"),
    ('untestable claim that names runs', _replace('    untestable: "ranks the paper\'s six models; we run none of them"\n',
                                                  '    untestable: "ranks the paper\'s six models; we run none of them"\n    measure: parent\n'),
     'measure: parent\n\n  - id: llm-rules', "a claim marked untestable runs nothing: drop 'measure'"),
    ('a key given twice', _replace('    where: "Sec. 3.1.4, Table 2"\n', '    where: "Sec. 3.1.4, Table 2"\n    where: "Table 2"\n'), '    where: "Table 2"\n',
     "claims[0].where: given twice in one mapping"),
    ('not YAML', _replace('columns: {n: threshold}', 'columns: {n: threshold'), 'measures:', "not valid YAML"),
    ('a control that names no paper claim', _replace('  - id: llm-rules\n', '  - id: llm-rules\n    origin: control\n'), '- id: llm-rules',
     "a control or protocol names the paper claim it qualifies"),
    ('a control of an unknown claim', _replace('  - id: llm-rules\n', '  - id: llm-rules\n    origin: control\n    qualifies: rules-webnlgg\n'),
     'qualifies: rules-webnlgg', "'rules-webnlgg' is not a paper claim of this file (did you mean 'rules-webnlg'?)"),
    ('an unknown unit of analysis', _replace('unit_of_analysis: training runs', 'unit_of_analysis: trained runs'), 'unit_of_analysis: trained runs',
     "'trained runs' (did you mean 'training runs'?)"),
    ('a competence floor without its models', _replace(", models: \"BART-large, the weakest of the paper's six on PERF (Table 5)\"}", "}"),
     '      - {kind: competence', "a competence precondition names the paper's models"),
    ('a range without its models', _replace('paper: {effect: 0.40, ', 'paper: {effect: 0.40, low: 0.1, high: 0.9, '), 'paper: {effect: 0.40,',
     "a range over the paper's models says how many (models: N)"),
]


@pytest.mark.parametrize('what,edit,at,msg', BAD, ids=[b[0] for b in BAD])
def test_bad_claim_file_gives_one_clear_error(tmp_path, what, edit, at, msg):
    text = edit(SPOR)
    f = tmp_path/'spor.yaml'; f.write_text(text)
    with pytest.raises(CogenError) as e:
        load_claims('spor', ROOT, path=f)
    err = str(e.value)
    line = text[:text.index(at)].count('\n') + 1 + (1 if at.startswith('\n') else 0)
    assert err.startswith(f"claims {f} line {line}: "), (err, line)
    assert msg in err, err
    assert '\n' not in err and 'Traceback' not in err


def test_claim_file_of_another_paper(tmp_path):
    f = tmp_path/'spor.yaml'; f.write_text(SPOR.replace('paper: spor\n', 'paper: recogs\n', 1))
    with pytest.raises(CogenError, match=r"line \d+: paper: says 'recogs' but the file is the claims of 'spor'"):
        load_claims('spor', ROOT, path=f)


def test_cogen_run_checks_the_claim_file_before_any_run(tmp_path):
    "`cogen run <paper>` reads the paper's claim file right after its grid: a typo stops it with one line, before any run or summary."
    import shutil, subprocess, sys
    proj = tmp_path/'proj'
    for d in ('grids', 'claims', 'data'): shutil.copytree(ROOT/d, proj/d)
    shutil.copytree(ROOT/'nbs'/'spor', proj/'nbs'/'spor')
    for f in ('settings.ini',): shutil.copy(ROOT/f, proj/f)
    (proj/'claims'/'spor.yaml').write_text(SPOR.replace('uncertainty:', 'uncertanty:', 1))
    r = subprocess.run([str(Path(sys.executable).parent/'cogen'), 'run', 'spor', '--profile', 'cpu', '--committed'], cwd=proj,
                       capture_output=True, text=True, timeout=120)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and 'Traceback' not in out, out
    assert 'spor.yaml line' in out and "unknown field (did you mean 'uncertainty'?)" in out, out
    assert not (proj/'runs').exists() and not (proj/'figures').exists()      # nothing ran
