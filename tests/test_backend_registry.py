"""Model backends as registered classes: a backend defined outside cogen_lib (tests/fixtures/toy_backend.py) is found
by the `cogen` command through COGEN_BACKENDS or a `cogen_lib.backends` entry point and evaluated by `cogen cocoa score`
with the accuracy its rule implies; registration checks a class against the `LanguageModel` interface; unknown names
and unsupported arguments are clear errors."""
import json, os, re, subprocess, sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace as NS
import pytest

from cogen_lib import models
from cogen_lib.core import CogenError
from cogen_lib.models import (Generation, LanguageModel, ModelSpec, OpenAILM, check_lm, load_lm, model_spec,
                              register_backend, unload)

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT/'tests'/'fixtures'
COGEN = Path(sys.executable).parent/'cogen'


@pytest.fixture(scope='module')
def data(tmp_path_factory):
    "Six generated GroundCocoa questions (one per configuration, seed 1) and their gold letters, read back from the file."
    from cogen_lib.cocoa.generate import generate, write_jsonl
    p = tmp_path_factory.mktemp('toy')/'set.jsonl'
    write_jsonl(generate(1, seed=1), p)
    golds = [json.loads(l)['answer'] for l in p.read_text().splitlines() if l.strip()]
    return p, golds


def _letters(golds) -> dict:
    "The toy letter each style is run with: the most common gold for `direct`, a rarer (present) gold for `loglik`."
    c = Counter(golds)
    direct = max(sorted(c), key=lambda l: c[l])
    loglik = next(l for l in sorted(c) if c[l] != c[direct])
    return dict(direct=direct, loglik=loglik)


def _run(args, **env) -> subprocess.CompletedProcess:
    e = dict(os.environ, HF_HUB_OFFLINE='1', TRANSFORMERS_OFFLINE='1')
    e.pop('COGEN_BACKENDS', None)
    e.update(env)
    return subprocess.run([str(a) for a in args], capture_output=True, text=True, env=e, cwd=ROOT, timeout=300)


@pytest.mark.parametrize('style', ['direct', 'loglik'])
def test_cli_evaluates_a_backend_from_outside_cogen_lib(data, style):
    path, golds = data
    letter = _letters(golds)[style]
    r = _run([COGEN, 'cocoa', 'score', path, '--model', f'toy:{letter}', '--prompt', style],
             COGEN_BACKENDS='toy_backend', PYTHONPATH=str(FIXTURES))
    assert r.returncode == 0, r.stdout + r.stderr
    m = re.search(r'(\d+) questions \| accuracy ([0-9.]+)', r.stdout)
    assert m, r.stdout
    # the toy always picks `letter` (by generating it, or by scoring its continuation highest): accuracy = its share of golds
    assert int(m[1]) == len(golds) and float(m[2]) == pytest.approx(golds.count(letter) / len(golds), abs=6e-4), r.stdout
    assert f'model toy:{letter}' in r.stdout


def test_the_two_styles_are_told_apart(data):
    "The letters chosen above give different accuracies, so a style answered by the wrong method would fail."
    _, golds = data
    l = _letters(golds)
    assert golds.count(l['direct']) != golds.count(l['loglik']) and golds.count(l['loglik']) > 0


def test_cli_without_the_module_lists_the_accepted_names(data):
    r = _run([COGEN, 'cocoa', 'score', data[0], '--model', 'toy:B', '--prompt', 'direct'], PYTHONPATH=str(FIXTURES))
    assert r.returncode == 1
    err = ' '.join(r.stderr.split())
    for part in ("unknown model 'toy:B'", 'smollm2-135m', "hub id 'org/name'", "'openai:<model>' (OpenAILM)", 'COGEN_BACKENDS=',
                 "'cogen_lib.backends' entry points"):
        assert part in err, (part, err)


def test_entry_point_finds_the_backend(tmp_path):
    "An installed package declaring `[cogen_lib.backends] toy = toy_backend` is enough: no COGEN_BACKENDS."
    d = tmp_path/'toy_backend_dist-0.1.dist-info'
    d.mkdir()
    (d/'METADATA').write_text('Metadata-Version: 2.1\nName: toy-backend-dist\nVersion: 0.1\n')
    (d/'entry_points.txt').write_text('[cogen_lib.backends]\ntoy = toy_backend\n')
    code = "from cogen_lib.models import load_lm; m = load_lm('toy:d'); print(type(m).__name__, m.generate(['q'])[0].text)"
    r = _run([sys.executable, '-c', code], PYTHONPATH=os.pathsep.join([str(tmp_path), str(FIXTURES)]))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == 'ToyLM The answer is Option D.'


def test_bad_backend_module_is_a_clear_error(monkeypatch):
    monkeypatch.setenv('COGEN_BACKENDS', 'cogen_no_such_backend_xyz')
    with pytest.raises(CogenError, match="COGEN_BACKENDS names module 'cogen_no_such_backend_xyz', which cannot be imported.*PYTHONPATH"):
        model_spec('smollm2-135m')


@pytest.fixture
def registry():
    "Restore the registry after a test that registers classes."
    dicts = (models.BACKENDS, models.BACKENDS.aliases, models.registry._PREFIXES)
    saved = [dict(d) for d in dicts]
    yield
    for d, s in zip(dicts, saved): d.clear(); d.update(s)


def test_register_resolve_load_in_process(registry):
    @register_backend('mini', prefix='mini:', aliases=('tiny',))
    class Mini(LanguageModel):
        @classmethod
        def load(cls, spec, device=None, dtype=None): return cls(spec)
        def generate(self, prompts, **kw): return [Generation(p[::-1]) for p in prompts]
        def score_options(self, prompt, options, **kw): return [float(len(o)) for o in options]
    s = model_spec('mini:abc', kind='tiny')
    assert (s.kind, s.path, s.revision) == ('mini', 'abc', 'unversioned')
    m = load_lm('mini:abc')
    assert isinstance(m, Mini) and load_lm('mini:abc') is m and check_lm(m) is m
    assert m.generate(['abc'])[0].text == 'cba' and m.stats['model_calls'] == 0
    unload('mini:abc')


def test_registration_checks_the_interface(registry):
    class NoTopK(LanguageModel):
        @classmethod
        def load(cls, spec, device=None, dtype=None): return cls(spec)
        def generate(self, prompts, *, max_new_tokens=64, do_sample=False, temperature=1.0, top_p=1.0, seed=0,
                     batch_size=8, chat=None, desc=None, cache=True): return []
        def score_options(self, prompt, options, *, normalize=None, batch_size=8, chat=None, cache=True): return []
    with pytest.raises(CogenError, match=r'lack the interface arguments generate\.top_k, score_options\.desc'):
        register_backend('notopk')(NoTopK)
    assert 'notopk' not in models.BACKENDS
    with pytest.raises(CogenError, match="kind 'hf' is taken by cogen_lib.models.hf.HFLM"):
        register_backend('hf')(type('Other', (OpenAILM,), {}))
    with pytest.raises(CogenError, match="prefix 'openai:' is taken by kind 'openai'"):
        register_backend('other', prefix='openai:')(type('Other', (OpenAILM,), {}))


def test_openai_rejects_top_k_instead_of_ignoring_it():
    calls = []
    def create(**kw):
        calls.append(kw)
        return NS(choices=[NS(message=NS(content='ok'), finish_reason='stop')], usage=NS(completion_tokens=1, prompt_tokens=2))
    lm = OpenAILM(ModelSpec('openai:m', 'openai', 'test', 'a stand-in server', path='m'), NS(chat=NS(completions=NS(create=create))))
    with pytest.raises(CogenError, match=r"does not support generate\(top_k=40\)"):
        lm.generate(['hi'], do_sample=True, top_k=40, cache=False)
    assert calls == []                                   # refused before any request
    assert lm.generate(['hi'], do_sample=True, top_p=0.5, cache=False)[0].text == 'ok'
    assert calls[0]['top_p'] == 0.5 and 'top_k' not in calls[0]


def test_interface_is_abstract_and_check_lm_still_takes_stand_ins():
    with pytest.raises(TypeError, match='abstract'): LanguageModel(ModelSpec('x', 'toy', '0', ''))
    duck = NS(name='d', revision='0', stats={}, generate=lambda *a, **k: [], score_options=lambda *a, **k: [])
    assert check_lm(duck) is duck
    with pytest.raises(CogenError, match='lacks score_options'): check_lm(NS(name='d', revision='0', stats={}, generate=None))
