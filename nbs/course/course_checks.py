"""Checks for the course exercises (not part of cogen_lib). `check(name, answer)` passes silently when the answer is right,
fails with a hint when it is wrong, and only prints a reminder while the answer is still `None`, so an exercise
notebook runs from top to bottom before it is solved. The expected answers are stored as hashes, so reading this file
does not give them away."""
import hashlib, json

def _canon(kind: str, x) -> str:
    if kind == 'int': return str(int(x))
    if kind == 'float2': return f"{float(x):.2f}"
    if kind == 'str': return str(x).strip().lower()
    if kind == 'bools': return json.dumps([bool(v) for v in x])
    if kind == 'ints': return json.dumps([int(v) for v in x])
    if kind == 'letters': return ''.join(sorted(str(v).strip().upper() for v in x))
    raise ValueError(kind)

def _digest(kind: str, x) -> str:
    return hashlib.sha256(f"cogen-course:{kind}:{_canon(kind, x)}".encode()).hexdigest()[:16]

# name: (kind, digest of the right answer, hint shown when the answer is wrong)
EXPECTED = {}

def expect(name: str, kind: str, digest: str, hint: str):
    EXPECTED[name] = (kind, digest, hint)

def check(name: str, answer):
    "True when `answer` is right; AssertionError with a hint when it is wrong; a printed reminder (and None) while it is None."
    kind, digest, hint = EXPECTED[name]
    if answer is None:
        print(f"exercise {name}: not answered yet (replace None with your answer and run this cell again)")
        return None
    try: got = _digest(kind, answer)
    except (TypeError, ValueError) as e:
        raise AssertionError(f"exercise {name}: expected {kind_help[kind]}, got {answer!r} ({e})") from None
    assert got == digest, f"exercise {name}: {answer!r} is not right. Hint: {hint}"
    print(f"exercise {name}: right!")
    return True

kind_help = {'int': 'an integer', 'float2': 'a number (checked to 2 decimals)', 'str': 'a string', 'bools': 'a list of True/False',
             'ints': 'a list of integers', 'letters': 'a collection of option letters'}

# 01 COGS
expect('1.1', 'int', '680101a0680cd849', "look at which gen categories change the *structure* a word or phrase appears in, not only the word")
expect('1.2', 'ints', '2394af25b58b3d56', "count 'ccomp' in each LF: the train maximum, then the minimum over gen's cp_recursion")
expect('1.3', 'str', 'f898b26f0b25eb1b', "find the train LF that mentions hedgehog and read the role its variable fills")
expect('1.4', 'float2', '1177c2c3ad0e2ee6', "a subject PP is an nmod conjunct whose head variable is x _ 1; take the mean of subject_pp(train)")

# 02 ReCOGS
expect('2.1', 'bools', '5791623aae8e0012', 'exact match compares strings; SEM looks for a renaming of variables that makes the conjuncts equal')
expect('2.2', 'bools', 'df523f2d8689b203', 'a renaming of variables cannot turn an agent into a theme')
expect('2.3', 'ints', '5990b70f7ee524be', "score(preds, golds, 'em').accuracy and score(preds, golds, 'sem').accuracy, times 100")
expect('2.4', 'letters', 'a7e79f5ab87a80c1', 'which of the three changes who does what to whom?')

# 03 SPOR
expect('3.1', 'ints', '9099321ad70fac43', "a sample becomes a test sample when samples sharing exactly one of its units cover them all; run baseline_cluster on toy + [(D, E)]")
expect('3.2', 'int', '971fc8ac294d43c0', "len(build_productivity(corpus, 4).test)")
expect('3.3', 'ints', 'd1566ef196df9adc', "search(make_problem(load_corpus('e2e')), tries=4, seed=0, workers=1) gives the winning try; split_stats(P, run_try(P, 0, best, 4))['test_samples']")
expect('3.4', 'bools', 'd025d99255ce3ff8', "look at st['pairs_atom'], st['atoms'] vs st['atoms_comb'], the sizes in p3.visible, and the units of p3.test vs those of p3.invisible")

# 04 GroundCocoa
expect('4.1', 'ints', 'cb801775d91966bd', "clauses(parse_pos(q['pos'])) is a list of the sum terms; q['primitives'] lists the primitives")
expect('4.2', 'float2', 'd5042ba02591db1f', 'binary_entropy(k, n), or -(p log2 p + (1-p) log2 (1-p)) with p = k/n')
expect('4.3', 'float2', '3e790165209849cd', "apply most_satisfied to every question and compare with its 'answer'")
expect('4.4', 'letters', '8c6847e4e2b9892b', "eval_tree(parse_pos(q['pos']), q['option_truth'][L]) for each letter L")

# 05 CGGC
expect('5.1', 'str', 'e7adef940404d4c0', "a label is the distinct relation types of the edges, sorted and joined by '&'")
expect('5.2', 'str', '795b099ea6eef85c', 'A: a chain x -> y -> z; B: both edges leave the same node; C: both edges enter the same node (structure_type(edges, 3))')
expect('5.3', 'bools', '8a99cbf940604325', 'build a test item and demonstrations by hand and read what check_prompt(test, demos, setting, shots=2) says')
expect('5.4', 'int', '0aef3f0302970c75', "sum(len(relations_of(r['label'])) >= 2 for r in recs), with relations_of from cogen_lib.cggc.labels")
