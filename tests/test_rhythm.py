"Every library notebook reads as a lesson: exported definitions followed by their test or example (tests/rhythm.py)."
from rhythm import library_notebooks, notebook_rhythm

OVERALL, PER_NOTEBOOK = 0.75, 0.60


def test_rhythm():
    rows = {p.relative_to(p.parents[1]).as_posix() if p.parent.name != 'nbs' else p.name: notebook_rhythm(p)
            for p in library_notebooks()}
    rows = {k: v for k, v in rows.items() if v[1]}
    low = {k: f'{f}/{t}: {", ".join(m[:5])}' for k, (f, t, m) in rows.items() if f / t < PER_NOTEBOOK}
    assert not low, f'notebooks below {PER_NOTEBOOK:.0%} (followed/definitions: unfollowed): {low}'
    F, T = sum(v[0] for v in rows.values()), sum(v[1] for v in rows.values())
    assert F / T >= OVERALL, f'{F}/{T} = {F / T:.0%} of exported definitions are followed by a test or example (goal {OVERALL:.0%})'


def test_rhythm_measure_can_fail(tmp_path):
    "A notebook whose definition is never exercised scores 0; one with a test after it scores 1."
    import json
    def nb(*cells): return {'cells': [{'cell_type': 'code', 'source': s, 'metadata': {}} for s in cells]}
    bare = tmp_path/'bare.ipynb'; bare.write_text(json.dumps(nb('#| export\ndef f(x): return x', '#| export\ndef g(): pass')))
    tested = tmp_path/'tested.ipynb'; tested.write_text(json.dumps(nb('#| export\ndef f(x): return x', 'f(1)', '#| export\ndef g(): pass', 'assert True')))
    assert notebook_rhythm(bare)[:2] == (0, 2)
    assert notebook_rhythm(tested)[:2] == (2, 2)
