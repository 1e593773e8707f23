"""Full-data checks of `cogen_lib.recogs.rewrites` against COGS (from the mirror) and against the authors' released files.

The authors' files (github.com/frankaging/ReCOGS) are not in this repository; what the tests hold of them is their
sizes in bytes and, for `recogs_positional_index/{dev,test}.tsv` (commit 4e9be6e9), the sha256 of our output, which
reproduces those files: same size to the byte (457,745 and 457,319, final newline included) and the same text in every
16,000-character window we compared (dev at offset 0; test at offsets 200,000 and 441,319, the end). The digest is
that of our output; it was not recomputed from a full transcription of the authors' files.
"""
import hashlib
import pytest
from cogen_lib.core import CogenError
from cogen_lib.data import load_cogs
from cogen_lib.recogs.lf import parse_lf, render
from cogen_lib.recogs.sem import sem
from cogen_lib.recogs import rewrites as rw

def sha(text: str) -> str: return hashlib.sha256(text.encode()).hexdigest()

# --- ReCOGS_pos: byte-identical to recogs_positional_index/{dev,test}.tsv (commit 4e9be6e9 of frankaging/ReCOGS)
AUTHORS_POS = {'dev': (457745, 'fb863a167667eff33c141241ceff546b78f2f8a4171a6902570a1817bfa63842'),
               'test': (457319, '4eed77fbe78b2e786b34fcabf71a84021988a60e1c5528864e0a5999b20c919c')}

@pytest.mark.parametrize('split', ['dev', 'test'])
def test_recogs_pos_byte_identical(split):
    text = rw.to_tsv(rw.convert('recogs-pos', split))
    size, digest = AUTHORS_POS[split]
    assert len(text.encode()) == size and text.endswith('\n')
    assert sha(text) == digest

def test_recogs_pos_train():
    d = rw.convert('recogs-pos', 'train')
    assert len(d) == 24155 + 3072 == 27227          # the authors' recogs_positional_index/train.tsv has 27,227 rows
    assert (d.type == 'concat').sum() == 3072
    cat = d[d.type == 'concat']
    for s, l in zip(cat.sentence, cat.lf):          # every noun / name conjunct points at its own token
        toks = s.split()
        for c in parse_lf(l).prefix:
            assert toks[int(c.args[0].text)].lower() == c.pred[0].lower(), (s, l)

def test_recogs_pool():
    pool = rw.recogs_pool()
    assert pool == tuple(sorted(pool)) and pool[0] == 0 and len(pool) >= 50

# --- ReCOGS v1/v2: renamings of ReCOGS_pos (which is the authors' file), so SEM-equivalent row by row to the authors'
AUTHORS_ROWS = {  # two rows of the authors' recogs_v1/dev.tsv and recogs_v2/dev.tsv (row index: LF)
    'recogs-v1': {5: '* girl ( 9 ) ; * weapon ( 54 ) ; machine ( 21 ) ; chicken ( 18 ) ; nmod . beside ( 54 , 21 ) AND offer ( 10 ) AND agent ( 10 , 9 ) AND theme ( 10 , 54 ) AND recipient ( 10 , 18 )',
                  31: 'Emma ( 54 ) ; * sheep ( 59 ) ; believe ( 17 ) AND agent ( 17 , 54 ) AND ccomp ( 17 , 32 ) AND try ( 32 ) AND agent ( 32 , 59 ) AND xcomp ( 32 , 42 ) AND run ( 42 ) AND agent ( 42 , 59 )'},
    'recogs-v2': {7: 'Liam ( 4 ) ; box ( 46 ) ; table ( 11 ) ; * chair ( 54 ) ; paint ( 49 ) AND agent ( 49 , 4 ) AND theme ( 49 , 46 ) AND nmod . on ( 46 , 11 ) AND nmod . beside ( 11 , 54 )',
                  0: 'Liam ( 22 ) ; box ( 18 ) ; girl ( 45 ) ; hope ( 27 ) AND agent ( 27 , 22 ) AND ccomp ( 27 , 37 ) AND burn ( 37 ) AND theme ( 37 , 18 ) AND agent ( 37 , 45 )'}}

@pytest.mark.parametrize('variant', ['recogs-v1', 'recogs-v2'])
@pytest.mark.parametrize('split', ['dev', 'test'])
def test_recogs_renamed_sem_equivalent(variant, split):
    pos, d = rw.convert('recogs-pos', split), rw.convert(variant, split, seed=0)
    assert (d.sentence == pos.sentence).all() and (d.type == pos.type).all()
    assert all(sem(a, b).match for a, b in zip(d.lf, pos.lf))
    pool = set(map(str, rw.recogs_pool()))
    assert all(t in pool for l in d.lf for t in l.split() if t.isdigit())
    if split == 'dev':
        for i, g in AUTHORS_ROWS[variant].items(): assert sem(d.lf[i], g).match
    assert rw.to_tsv(d) == rw.to_tsv(rw.convert(variant, split, seed=0))      # same seed, same bytes
    assert rw.to_tsv(d) != rw.to_tsv(rw.convert(variant, split, seed=1))

def test_recogs_v1_nmod_first_v2_cogs_order():
    v1, v2 = rw.convert('recogs-v1', 'dev').lf[7], rw.convert('recogs-v2', 'dev').lf[7]
    assert v1.split(' ; ')[-1].startswith('nmod . on') and v2.split(' ; ')[-1].startswith('paint')

@pytest.mark.parametrize('variant', ['recogs-v1', 'recogs-v2'])
def test_recogs_renamed_train(variant):
    d = rw.convert(variant, 'train', seed=0)
    assert not d.duplicated().any()
    assert (d.type == 'concat').sum() == 5 * 3072
    assert len(d) == {'recogs-v1': 135546, 'recogs-v2': 135550}[variant]   # paper Table 8: 135,547 (random collisions)
    if variant == 'recogs-v2':
        assert d.type.str.contains(r'\+preposing').sum() > 1000 and d.type.str.contains(r'\+sprinkle').sum() > 5000
    pos_noun = [l for l in d.lf if not l.startswith('LAMBDA')]
    assert all(' x ' not in l and ' _ ' not in l for l in pos_noun)

# --- Token removal: sizes of the authors' cogs_token_removal files, and the exact inverse on all of COGS
AUTHORS_TOKEN_REMOVAL = {('token-removal-1', 'train'): 3561510, ('token-removal-1', 'dev'): 448101, ('token-removal-3', 'gen'): 4054088}

@pytest.mark.parametrize('key', list(AUTHORS_TOKEN_REMOVAL))
def test_token_removal_matches_authors_size(key):
    assert len(rw.to_tsv(rw.convert(*key)).encode()) == AUTHORS_TOKEN_REMOVAL[key]

@pytest.mark.parametrize('split', ['train', 'dev', 'test', 'gen'])
def test_token_removal_inverse_exact(split):
    lfs = load_cogs(split).lf.tolist()
    for v in (1, 2, 3):
        removed = [rw.remove_tokens(l, v) for l in lfs]
        assert all(not set(r.split()) & rw.TOKEN_REMOVAL[v] for r in removed)
        assert [rw.restore_tokens(r) for r in removed] == lfs

# --- Concatenation
@pytest.mark.parametrize('k', rw.CONCAT_KS)
def test_concat(k):
    d = rw.convert(f'concat-{k}', 'train')
    cat = d[d.type == 'concat']
    assert len(d) == 24155 + k and len(cat) == k
    assert not cat.lf.str.startswith(' ;').any() and not cat.lf.str.startswith(';').any()
    for s, l in zip(cat.sentence, cat.lf):
        toks = s.split()
        assert toks[-1] == '.' and s.count(' . ') == 0
        for c in parse_lf(l).conjuncts:
            if len(c.pred) == 1: assert toks[int(c.args[0].text)].lower() == c.pred[0].lower()
        assert render(parse_lf(l)) == l
    if k == 3072: assert (~cat.lf.str.contains(r'\*')).sum() > 0   # rows with no definite (the authors' ' ; ' bug)

# --- Preposing, sprinkles, participial phrases
def _nouns_point_at_tokens(df):
    for s, l in zip(df.sentence, df.lf):
        toks = s.split()
        for c in parse_lf(l).conjuncts:
            if len(c.pred) == 1 and c.args[0].kind == 'x': assert toks[int(c.args[0].text)].lower() == c.pred[0].lower(), (s, l)
            if len(c.pred) == 3: assert toks[int(c.args[0].text)].lower() == c.pred[0].lower(), (s, l)

def test_preposing():
    cogs, d = load_cogs('train'), rw.convert('preposing', 'train', seed=0)
    moved = d[d.type.str.endswith('+preposing')]
    eligible = sum(rw.prepose_span(s, l) is not None for s, l in zip(cogs.sentence, cogs.lf))
    assert eligible == (cogs.lf.str.count(' nmod ') > 0).sum() == 5047
    assert 0.03 * eligible < len(moved) < 0.07 * eligible
    _nouns_point_at_tokens(moved)
    for s, l in zip(moved.sentence, moved.lf):
        lf = parse_lf(l)
        head = min(int(c.args[0].text) for c in lf.conjuncts if len(c.pred) == 3)
        assert head == 1 and s.split()[0] in ('A', 'The')          # the modified NP now starts the sentence
    # the authors' cogs_preposing/train.tsv has these two rows, preposed from COGS train:
    assert rw.prepose('Emma ate the ring beside a bed .', '* ring ( x _ 3 ) ; eat . agent ( x _ 1 , Emma ) AND eat . theme ( x _ 1 , x _ 3 ) AND ring . nmod . beside ( x _ 3 , x _ 6 ) AND bed ( x _ 6 )') == \
        ('The ring beside a bed Emma ate .', '* ring ( x _ 1 ) ; ring . nmod . beside ( x _ 1 , x _ 4 ) AND bed ( x _ 4 ) AND eat . theme ( x _ 6 , x _ 1 ) AND eat . agent ( x _ 6 , Emma )')
    assert rw.prepose('A girl was awarded a cake in a soup .', 'girl ( x _ 1 ) AND award . recipient ( x _ 3 , x _ 1 ) AND award . theme ( x _ 3 , x _ 5 ) AND cake ( x _ 5 ) AND cake . nmod . in ( x _ 5 , x _ 8 ) AND soup ( x _ 8 )') == \
        ('A cake in a soup a girl was awarded .', 'cake ( x _ 1 ) AND cake . nmod . in ( x _ 1 , x _ 4 ) AND soup ( x _ 4 ) AND girl ( x _ 6 ) AND award . theme ( x _ 8 , x _ 1 ) AND award . recipient ( x _ 8 , x _ 6 )')

def test_sprinkles():
    cogs, d = load_cogs('train'), rw.convert('sprinkles', 'train', seed=0)
    sp = d.type.str.endswith('+sprinkle')
    assert 0.04 * len(d) < sp.sum() < 0.06 * len(d)
    assert (d.sentence.str.replace(' um', '', regex=False) == cogs.sentence).all()
    _nouns_point_at_tokens(d[sp])
    for s, l in zip(d.sentence[sp], cogs.lf[sp]):                 # 'um' only at word positions 0 < i < len-2
        toks = [t for t in s.split() if t != 'um']
        assert s.split()[:2] == toks[:2] and s.split()[-2:] == toks[-2:]

def cogs_verbs():
    vs = set()
    for l in load_cogs().lf:
        for c in parse_lf(l).conjuncts:
            if len(c.pred) == 2 and len(c.args) == 2: vs.add(c.pred[0])
    return sorted(vs)

EXPECTED_PARTICIPLES = dict(w.split(':') for w in '''
admire:admiring adore:adoring appreciate:appreciating attempt:attempting award:awarding bake:baking believe:believing
bless:blessing break:breaking bring:bringing burn:burning call:calling change:changing clean:cleaning collapse:collapsing
confess:confessing cook:cooking crave:craving crawl:crawling crumple:crumpling cry:crying dance:dancing declare:declaring
decompose:decomposing discover:discovering disintegrate:disintegrating double:doubling draw:drawing dream:dreaming
dust:dusting eat:eating enjoy:enjoying enlarge:enlarging examine:examining expect:expecting feed:feeding find:finding
float:floating forward:forwarding freeze:freezing frown:frowning gasp:gasping giggle:giggling give:giving grow:growing
hand:handing hate:hating hear:hearing help:helping hold:holding hope:hoping hunt:hunting imagine:imagining
improve:improving inflate:inflating intend:intending investigate:investigating itch:itching jog:jogging juggle:juggling
know:knowing laugh:laughing lend:lending like:liking loan:loaning long:longing love:loving mail:mailing mean:meaning
miss:missing nap:napping need:needing notice:noticing nurse:nursing observe:observing offer:offering pack:packing
paint:painting pass:passing pierce:piercing plan:planning poke:poking post:posting prefer:preferring promise:promising
prove:proving read:reading redden:reddening rent:renting respect:respecting return:returning roll:rolling run:running
say:saying scoff:scoffing scream:screaming see:seeing sell:selling send:sending serve:serving shatter:shattering
ship:shipping shorten:shortening sketch:sketching sleep:sleeping slide:sliding slip:slipping smile:smiling smirk:smirking
snap:snapping sneeze:sneezing snooze:snoozing snore:snoring split:splitting squeeze:squeezing stab:stabbing
study:studying stutter:stuttering support:supporting talk:talking teleport:teleporting think:thinking throw:throwing
tolerate:tolerating toss:tossing touch:touching try:trying value:valuing walk:walking want:wanting wire:wiring
wish:wishing worship:worshiping yearn:yearning'''.split())

def test_participle_every_cogs_verb():
    verbs = cogs_verbs()
    assert len(verbs) == 134 and set(verbs) == set(EXPECTED_PARTICIPLES)
    assert {v: rw.participle(v) for v in verbs} == EXPECTED_PARTICIPLES

@pytest.mark.parametrize('variant,rel', [('participial', 'acl'), ('participial-easy', 'nmod')])
def test_participial(variant, rel):
    d = rw.convert(variant, 'train', seed=0)
    pv = d[d.type.str.contains('+participial_', regex=False)]
    eligible = load_cogs('train').sentence.str.match(r'(The|A) ').sum()
    assert 0.12 * eligible < len(pv) < 0.18 * eligible
    _nouns_point_at_tokens(pv)
    for s, l, t in zip(pv.sentence, pv.lf, pv.type):
        toks, lf = s.split(), parse_lf(l)
        mods = [c for c in lf.conjuncts if len(c.pred) == 3 and c.pred[1] == rel and toks[int(c.args[1].text) - 2] == rw.participle(c.pred[2])]
        assert len(mods) == (2 if t.endswith('_nested') else 1), (s, l)
        assert (min(int(c.args[0].text) for c in mods) == 1) == ('_subj' in t)
    assert rw.to_tsv(d) == rw.to_tsv(rw.convert(variant, 'train', seed=0))

# --- The entry point
def test_convert_errors_and_columns():
    with pytest.raises(CogenError, match='recogs-pos'): rw.convert('recogs', 'dev')
    with pytest.raises(CogenError, match='train, dev, test, gen'): rw.convert('cogs', 'validation')
    with pytest.raises(CogenError): rw.convert('cogs', 'dev', seed=-1)
    for v in rw.VARIANTS:
        d = rw.convert(v, 'dev')
        assert list(d.columns) == ['sentence', 'lf', 'type'] and len(d) == 3000

def test_split_sizes():
    t = rw.split_sizes(0, ['cogs', 'concat-512', 'recogs-pos'])
    assert t.set_index('variant').loc['cogs'].tolist() == [24155, 3000, 3000, 21000]
    assert t.set_index('variant').loc['concat-512', 'train'] == 24155 + 512
    assert t.set_index('variant').loc['recogs-pos', 'train'] == 27227
