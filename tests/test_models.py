"Tests of cogen_lib.models beyond its notebook: cache keys, error rows, retries, sampling, the conversion marker."
import json, multiprocessing as mp, os, sqlite3
from pathlib import Path
import numpy as np
import pytest

os.environ.setdefault('HF_HUB_OFFLINE', '1')
from cogen_lib.core import CogenError
from cogen_lib import models
from cogen_lib.models import CallCache, Generation, ModelSpec, load_lm, load_embedder, model_spec, converted_dir

@pytest.fixture(scope='module')
def lm():
    return load_lm('smollm2-135m')

@pytest.fixture
def cc(tmp_path):
    return CallCache(tmp_path/'calls.sqlite')

def test_same_object(lm):
    assert load_lm('smollm2-135m') is lm

def test_cache_keys_differ_with_settings(lm, cc):
    p = ['Say hello.']
    lm.generate(p, max_new_tokens=4, cache=cc)
    assert lm.last_stats['model_calls'] == 1
    for kw in [dict(max_new_tokens=5), dict(max_new_tokens=4, chat=False),
               dict(max_new_tokens=4, do_sample=True, seed=1), dict(max_new_tokens=4, do_sample=True, seed=2),
               dict(max_new_tokens=4, do_sample=True, seed=2, temperature=0.5)]:
        g = lm.generate(p, cache=cc, **kw)[0]
        assert not g.cached and lm.last_stats['model_calls'] == 1, kw
    assert len(cc) == 6
    # batch_size and desc are execution details, not settings: same key
    g = lm.generate(p, max_new_tokens=4, batch_size=3, desc='again', cache=cc)[0]
    assert g.cached and lm.last_stats['model_calls'] == 0

def test_key_includes_model_and_revision(lm):
    k = lm._key('generate', 'x', {})
    rev, lm.revision = lm.revision, 'other'
    try: assert lm._key('generate', 'x', {}) != k
    finally: lm.revision = rev
    assert lm._key('generate', 'x', {}) == k
    assert lm._key('score', 'x', {}) != k

def test_sampling_reproducible(lm):
    a = lm.generate(['Tell me a story.'] * 2, max_new_tokens=8, do_sample=True, seed=3, cache=False)
    b = lm.generate(['Tell me a story.'], max_new_tokens=8, do_sample=True, seed=3, cache=False)
    assert a[0].text == a[1].text == b[0].text   # a repeated prompt is computed once
    assert lm.last_stats['model_calls'] == 1

def _boom_when(monkeypatch, lm, word):
    "Make model.generate raise whenever a row contains `word`'s last token."
    tid = lm.tokenizer(' ' + word, add_special_tokens=False).input_ids[-1]
    orig, calls = lm.model.generate, []
    def gen(*a, **kw):
        ids = kw['input_ids']; calls.append(ids.shape[0])
        if (ids == tid).any(): raise RuntimeError(f'{word} in batch')
        return orig(*a, **kw)
    monkeypatch.setattr(lm.model, 'generate', gen)
    return calls

def test_batch_exception_retried_row_by_row_and_not_cached(lm, cc, monkeypatch):
    calls = _boom_when(monkeypatch, lm, 'xylophone')
    prompts = ['The sky is', 'My xylophone is', 'Water is']
    gs = lm.generate(prompts, max_new_tokens=3, chat=False, batch_size=8, cache=cc)
    assert calls == [3, 1, 1, 1]
    assert [g.ok for g in gs] == [True, False, True]
    assert gs[1].text is None and gs[1].error == 'RuntimeError: xylophone in batch' and gs[1].n_new_tokens == 0
    assert all(g.text for g in (gs[0], gs[2]))
    assert lm.last_stats['errors'] == 1 and len(cc) == 2
    monkeypatch.undo()
    gs2 = lm.generate(prompts, max_new_tokens=3, chat=False, cache=cc)
    assert [g.cached for g in gs2] == [True, False, True] and gs2[1].ok
    assert lm.last_stats['model_calls'] == 1

def test_too_long_is_error_row_not_cached(lm, cc):
    long = 'word ' * (lm.max_length + 10)
    gs = lm.generate(['Hi', long], max_new_tokens=2, chat=False, cache=cc)
    assert gs[0].ok and gs[1].text is None and 'context window' in gs[1].error
    assert lm.last_stats['model_calls'] == 1 and len(cc) == 1

def test_empty_and_bad_inputs(lm, cc):
    assert lm.generate([], cache=cc) == [] and lm.last_stats['model_calls'] == 0
    with pytest.raises(CogenError, match='list of prompts'): lm.generate('Hi')
    with pytest.raises(CogenError, match='max_new_tokens'): lm.generate(['Hi'], max_new_tokens=0)
    with pytest.raises(CogenError, match='batch_size'): lm.generate(['Hi'], batch_size=0, cache=False)
    g = lm.generate([[{'role': 'user', 'content': 'Hi'}]], max_new_tokens=2, chat=False, cache=cc)[0]
    assert not g.ok and 'messages' in g.error

def test_messages_prompt_equals_string_prompt(lm, cc):
    a = lm.generate(['Say hi.'], max_new_tokens=6, cache=cc)[0]
    b = lm.generate([[{'role': 'user', 'content': 'Say hi.'}]], max_new_tokens=6, cache=cc)[0]
    assert a.text == b.text

def test_input_order_with_mixed_lengths(lm):
    ps = ['One.', 'A much longer prompt that has quite a few more tokens than the others do.', 'Two words.']
    batched = lm.generate(ps, max_new_tokens=6, chat=False, batch_size=3, cache=False)
    alone = [lm.generate([p], max_new_tokens=6, chat=False, cache=False)[0] for p in ps]
    assert [g.text for g in batched] == [g.text for g in alone]

def test_score_options(lm, cc):
    s = lm.score_options('2 + 2 =', [' 4', ' 5', ' 4 and more'], chat=False, batch_size=2, cache=cc)
    assert s[0] > s[1] and s[0] > s[2]
    tok = lm.score_options('2 + 2 =', [' 4', ' 5', ' 4 and more'], chat=False, normalize='tokens', cache=cc)
    assert lm.last_stats['model_calls'] == 0   # normalisation is applied after the cache
    n = [len(lm.tokenizer(o, add_special_tokens=False).input_ids) for o in [' 4', ' 5', ' 4 and more']]
    np.testing.assert_allclose(tok, [a / b for a, b in zip(s, n)], rtol=1e-6)
    # trailing whitespace in the prompt moves into the option (lm-evaluation-harness convention)
    np.testing.assert_allclose(lm.score_options('2 + 2 = ', ['4'], chat=False, cache=cc), s[:1], rtol=1e-5)
    with pytest.raises(CogenError, match='one per option'): lm.score_options(['a', 'b'], ['x'])
    with pytest.raises(CogenError, match='non-empty list'): lm.score_options('a', 'x')

def test_score_empty_context(lm):
    s = lm.score_options('', ['Hello', 'zzkx qq'], chat=False, cache=False)
    assert s[0] > s[1]

def test_stats_accumulate(lm, cc):
    lm.reset_stats()
    lm.generate(['A', 'B'], max_new_tokens=2, chat=False, cache=cc)
    lm.generate(['A', 'B'], max_new_tokens=2, chat=False, cache=cc)
    assert (lm.stats['model_calls'], lm.stats['cache_hits']) == (2, 2)
    assert lm.stats['new_tokens'] >= 2 and lm.stats['model_seconds'] > 0

def _reader(path, q):
    q.put(len(CallCache(path)))

def test_call_cache_readable_while_writing(tmp_path):
    path = tmp_path/'c.sqlite'
    w = CallCache(path)
    w.put_many({'a': {'v': 1}})
    con = sqlite3.connect(path, timeout=1)
    con.execute('BEGIN IMMEDIATE'); con.execute("INSERT INTO calls VALUES ('b', 'm', '{}', 0)")   # a writer holds the lock
    ctx = mp.get_context('spawn'); q = ctx.Queue()
    p = ctx.Process(target=_reader, args=(path, q)); p.start(); p.join(60)
    assert q.get(timeout=5) == 1      # another process still reads the committed rows
    con.commit(); con.close()
    assert len(w) == 2

def test_default_call_cache_follows_cogen_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('COGEN_CACHE', str(tmp_path))
    assert models.call_cache().path == tmp_path/'calls'/'calls.sqlite'

def test_converted_dir_marker(tmp_path, monkeypatch):
    monkeypatch.setenv('COGEN_CACHE', str(tmp_path))
    def no_gguf(): raise RuntimeError('conversion attempted')
    spec = ModelSpec('/x/toy.gguf', 'causal-lm', 'r1', 'toy', gguf=no_gguf)
    d = tmp_path/'models'/spec.slug; d.mkdir(parents=True)
    (d/'cogen_model.json').write_text(json.dumps({'revision': 'r1'}))
    assert converted_dir(spec) == d                       # up to date: nothing converted
    stale = ModelSpec('/x/toy.gguf', 'causal-lm', 'r2', 'toy', gguf=no_gguf)
    with pytest.raises(RuntimeError, match='conversion attempted'): converted_dir(stale)

def test_model_spec_local_gguf_and_errors(tmp_path):
    f = tmp_path/'m.gguf'; f.write_bytes(b'x')
    s = model_spec(str(f))
    assert s.kind == 'causal-lm' and s.gguf() == f and s.revision.startswith('local:') and s.slug.startswith('m.gguf-')
    (tmp_path/'w.bin').write_bytes(b'x')
    with pytest.raises(CogenError, match='not a .gguf'): model_spec(str(tmp_path/'w.bin'))
    with pytest.raises(CogenError, match='unknown model'): model_spec('./nope')
    with pytest.raises(CogenError, match='kind must be'): model_spec('smollm2-135m', kind='seq2seq')

def test_openai_needs_key(monkeypatch):
    monkeypatch.delenv('OPENAI_API_KEY', raising=False)
    monkeypatch.setenv('OPENAI_BASE_URL', 'http://localhost:1/v1')
    s = model_spec('openai:m')
    assert s.revision == 'http://localhost:1/v1'
    with pytest.raises(CogenError, match='OPENAI_API_KEY'): load_lm('openai:m')

def test_openai_client_from_env_only(monkeypatch):
    pytest.importorskip('openai')
    monkeypatch.setenv('OPENAI_API_KEY', 'EMPTY')
    monkeypatch.setenv('OPENAI_BASE_URL', 'http://127.0.0.1:9/v1')
    m = load_lm('openai:served-model')
    assert str(m.client.base_url).startswith('http://127.0.0.1:9/v1') and m.model_id == 'served-model'
    assert load_lm('openai:served-model') is m
    models.unload('openai:served-model')

def test_embedder_matches_sentence_transformers():
    st = pytest.importorskip('sentence_transformers')
    emb = load_embedder('minilm-l6')
    texts = ['A dog runs.', 'The committee approved the budget after a long debate.']
    ref = st.SentenceTransformer(model_spec('minilm-l6').path, device='cpu').encode(texts)
    np.testing.assert_allclose(emb.embed(texts), ref, atol=1e-4)

def _full_pass_logprob(lm, ctx: str, opt: str) -> float:
    "The log-likelihood of `opt` after plain-text `ctx` from one forward pass over the whole text, no cache, no batching."
    import torch
    whole, cids = lm._encode(ctx + opt, False), lm._encode(ctx, False)
    n = len(whole) - len(cids)
    with torch.inference_mode(): logits = lm.model(torch.tensor([whole[:-1]])).logits[0].float()
    lp = torch.log_softmax(logits[-n:], -1)
    return float(lp.gather(-1, torch.tensor(whole[-n:])[:, None]).sum())

def test_score_options_shared_prompt_equals_full_passes(lm, cc):
    # contexts of different lengths in one batch (left padding), options of 1 to several tokens, an option whose first
    # token merges with the end of the context, more options for one context than for another
    ctxs = ['The capital of France is', 'Q: What is two plus two? Give the answer as a word, then stop.\nA:', 'A cat']
    opts = [[' Paris', ' London', ' the city of Rome, in Italy'], [' four', ' Four.', ' 4', ' five or six'], ['alogue of items', ' sat', ' on the mat']]
    flat_c = [c for c, os_ in zip(ctxs, opts) for _ in os_]
    flat_o = [o for os_ in opts for o in os_]
    got = lm.score_options(flat_c, flat_o, chat=False, batch_size=3, cache=cc)
    want = [_full_pass_logprob(lm, c, o) for c, o in zip(flat_c, flat_o)]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
    assert lm.last_stats['model_calls'] == len(flat_o) and lm.last_stats['batches'] == 1
    # each (prompt, option) pair is cached on its own: a new option for a known prompt runs alone
    more = lm.score_options(ctxs[0], [' Paris', ' Berlin'], chat=False, cache=cc)
    assert lm.last_stats['model_calls'] == 1 and more[0] == got[0]
    np.testing.assert_allclose(more[1], _full_pass_logprob(lm, ctxs[0], ' Berlin'), rtol=1e-4, atol=1e-3)
    # one question per batch gives the same scores as several per batch
    np.testing.assert_allclose(lm.score_options(flat_c, flat_o, chat=False, batch_size=1, cache=False), got, rtol=1e-4, atol=1e-3)

def test_score_options_failed_batch_retried_per_option(lm, cc, monkeypatch):
    calls = []
    real = type(lm)._score_groups
    def flaky(self, rows):
        calls.append(len(rows))
        if len(rows) > 1: raise RuntimeError('out of memory')
        return real(self, rows)
    monkeypatch.setattr(type(lm), '_score_groups', flaky)
    s = lm.score_options('2 + 2 =', [' 4', ' 5'], chat=False, cache=cc)
    assert calls == [2, 1, 1] and s[0] > s[1]

def test_local_models_go_through_the_registered_hf_backend(lm):
    assert isinstance(lm, models.HFLM) and isinstance(lm, models.LanguageModel) and lm.kind == 'causal-lm'
    assert models.backend_class('hf') is models.HFLM and models.BACKENDS['causal-lm'] is models.HFLM
    assert load_lm('smollm2-135m', kind='hf') is lm          # 'hf' is an alias of the kind: the same loaded object
    with pytest.raises(CogenError, match='does not support'): models.OpenAILM(model_spec('openai:m'), None).generate(['x'], top_k=3)
