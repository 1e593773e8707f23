"Seq2seq models of the ReCOGS paper: config, vocabularies, schedule, seeded training, checkpoints, decoding, scoring."
import dataclasses
import numpy as np
import pytest
import torch
from cogen_lib.core import CogenError
from cogen_lib.recogs.seq2seq import (BOS, EOS, PAD, UNK, DecoderLayer, EncoderLayer, Seq2SeqConfig, build_vocab,
                                      checkpoint_dir, epoch_batches, init_training, lr_lambda, make_model, n_params, pad_pairs,
                                      score_predictions, train, train_epoch)

TINY = dict(hidden=16, ffn=32, heads=2, lr=3e-3, batch_size=8, epochs=2, dropout=0.1)

def _pairs(n=40, seed=0):
    g = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = [f"w{j}" for j in g.integers(0, 5, g.integers(1, 5))]
        out.append((' '.join(s), ' '.join(reversed(s))))
    return out

@pytest.fixture(autouse=True)
def _one_thread_tmp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('COGEN_CACHE', str(tmp_path/'cache'))
    n = torch.get_num_threads(); torch.set_num_threads(1)
    yield
    torch.set_num_threads(n)

def test_config_defaults_and_errors():
    assert (Seq2SeqConfig('transformer').batch_size, Seq2SeqConfig('transformer').epochs) == (128, 300)
    assert (Seq2SeqConfig('lstm').lr, Seq2SeqConfig('lstm').hidden) == (8e-4, 512)
    for bad in (dict(arch='gru'), dict(hidden=0), dict(hidden=301), dict(warmup=1.0), dict(seed=-1), dict(lr=0.0), dict(bucket=-1)):
        with pytest.raises(CogenError): Seq2SeqConfig(**bad)

def test_vocab():
    v = build_vocab(['b a', 'a c'])
    assert v.itos[:4] == ['<pad>', '<bos>', '<eos>', '<unk>'] and v.itos[4:] == ['a', 'b', 'c']
    assert v.encode('a z') == [4, UNK]
    assert v.decode([BOS, 5, 4, EOS, 6]) == 'b a'
    assert v.unk_rate(['z a']) == 0.5 and v.unk_rate([]) == 0.0

def test_schedule():
    assert [lr_lambda(s, 10, 2) for s in (0, 1, 2, 6, 10, 12)] == [0.0, 0.5, 1.0, 0.5, 0.0, 0.0]

@pytest.mark.parametrize('arch', ['transformer', 'lstm'])
def test_same_seed_same_weights_and_predictions(arch):
    cfg = Seq2SeqConfig(arch, seed=1, **({k: v for k, v in TINY.items() if arch == 'transformer' or k not in ('ffn', 'heads')}))
    a = train(cfg, _pairs(), progress=False, checkpoint=False)
    b = train(cfg, _pairs(), progress=False, checkpoint=False)
    for x, y in zip(a.model.state_dict().values(), b.model.state_dict().values()): assert torch.equal(x, y)
    src = [s for s, _ in _pairs(10, 5)]
    pa, pb = a.predict(src, batch_size=3, max_len=12), b.predict(src, batch_size=3, max_len=12)
    assert pa == pb and len(pa) == 10
    assert all(t not in p.split() for p in pa for t in ('<pad>', '<bos>', '<eos>'))
    c = train(dataclasses.replace(cfg, seed=2), _pairs(), progress=False, checkpoint=False)
    assert any(not torch.equal(x, y) for x, y in zip(a.model.state_dict().values(), c.model.state_dict().values()))

def test_checkpoint_reused_and_keyed_by_config_and_data():
    cfg = Seq2SeqConfig('transformer', seed=0, **TINY)
    a = train(cfg, _pairs(), progress=False)
    assert a.epochs_run == 2 and (checkpoint_dir(cfg, _pairs())/'last.pt').exists()
    b = train(cfg, _pairs(), progress=False)
    assert b.epochs_run == 0 and len(b.history) == 2 and b.train_seconds == a.train_seconds
    assert checkpoint_dir(cfg, _pairs()) != checkpoint_dir(cfg, _pairs(41))
    assert checkpoint_dir(cfg, _pairs()) != checkpoint_dir(dataclasses.replace(cfg, lr=1e-3), _pairs())

def test_resume_equals_uninterrupted(monkeypatch):
    cfg = Seq2SeqConfig('lstm', seed=0, hidden=16, lr=3e-3, batch_size=8, epochs=3)
    full = train(cfg, _pairs(), progress=False, checkpoint=False)
    steps = 5  # 40 rows / batch 8
    orig = torch.optim.lr_scheduler.LambdaLR.step
    def boom(self, *a, **k):
        orig(self, *a, **k)
        if self.last_epoch == steps + 1: raise KeyboardInterrupt
    monkeypatch.setattr(torch.optim.lr_scheduler.LambdaLR, 'step', boom)
    with pytest.raises(KeyboardInterrupt): train(cfg, _pairs(), progress=False)
    monkeypatch.setattr(torch.optim.lr_scheduler.LambdaLR, 'step', orig)
    resumed = train(cfg, _pairs(), progress=False)
    assert resumed.epochs_run == 2 and len(resumed.history) == 3
    for x, y in zip(full.model.state_dict().values(), resumed.model.state_dict().values()): assert torch.equal(x, y)

def test_cached_greedy_matches_full_decoding():
    m = make_model(Seq2SeqConfig(hidden=16, heads=2, ffn=32, seed=4), 12, 12).eval()
    src = torch.tensor([[BOS, 5, 6, 7, EOS], [BOS, 8, EOS, PAD, PAD], [BOS, 9, 9, EOS, PAD]])
    out = m.greedy(src, 10)
    memory, mask = m.encode(src)
    ys = torch.full((3, 1), BOS)
    for _ in range(10): ys = torch.cat([ys, m.decode(memory, mask, ys)[:, -1].argmax(-1)[:, None]], 1)
    for r in range(3):
        full = ys[r, 1:].tolist()
        n = full.index(EOS) + 1 if EOS in full else 10
        assert out[r, :n].tolist() == full[:n] and (out[r, n:] == PAD).all()

def test_paper_sizes():
    assert 3.9e6 < n_params(make_model(Seq2SeqConfig('transformer'), 747, 687)) < 4.3e6
    assert 9e6 < n_params(make_model(Seq2SeqConfig('lstm'), 747, 687)) < 10e6

def test_score_predictions_never_raises_on_bad_predictions():
    gold = 'cat ( x _ 1 ) AND run . agent ( x _ 2 , x _ 1 )'
    s = score_predictions([gold, '', '( ( AND', 'cat ( x _ 4 ) AND run . agent ( x _ 7 , x _ 4 )'], [gold] * 4)
    assert s['em'].tolist() == [True, False, False, False]
    assert s['sem'].tolist() == [True, False, False, True]
    with pytest.raises(CogenError): score_predictions(['a'], [gold, gold])

def test_empty_training_data_is_an_error():
    with pytest.raises(CogenError, match='no training pairs'): train(Seq2SeqConfig(**TINY), [], progress=False)

def test_checkpoint_bytes_are_deterministic(tmp_path, monkeypatch):
    cfg = Seq2SeqConfig('transformer', seed=3, **TINY)
    blobs = []
    for k in range(2):
        monkeypatch.setenv('COGEN_CACHE', str(tmp_path/f'cache{k}'))
        train(cfg, _pairs(), progress=False)
        blobs.append((checkpoint_dir(cfg, _pairs())/'last.pt').read_bytes())
    assert blobs[0] == blobs[1]

class _Payload:
    "Unpickling this object would run code (it writes the marker file), as a tampered cache could."
    def __init__(self, marker): self.marker = str(marker)
    def __reduce__(self): return (exec, (f"open({self.marker!r}, 'w').write('pwned')",))

def test_tampered_or_damaged_checkpoint_is_refused_and_never_executed(tmp_path):
    cfg = Seq2SeqConfig('transformer', seed=0, **TINY)
    ck = checkpoint_dir(cfg, _pairs())/'last.pt'
    marker = tmp_path/'pwned.txt'
    torch.save(dict(format='recogs.seq2seq/2', model=_Payload(marker)), ck)
    with pytest.raises(CogenError, match='cannot be read safely.*delete it'): train(cfg, _pairs(), progress=False)
    assert not marker.exists()
    ck.write_bytes(b'not a checkpoint')
    with pytest.raises(CogenError, match='cannot be read safely'): train(cfg, _pairs(), progress=False)
    torch.save(dict(weights=torch.zeros(2)), ck)   # readable, but not ours
    with pytest.raises(CogenError, match='not a recogs.seq2seq/2 checkpoint'): train(cfg, _pairs(), progress=False)
    ck.unlink()
    assert train(cfg, _pairs(), progress=False).epochs_run == cfg.epochs

def test_epoch_batches_cover_every_row_once_and_bucket_by_length():
    pairs = _pairs(203, 1)
    data = pad_pairs(pairs, build_vocab(s for s, _ in pairs), build_vocab(t for _, t in pairs))
    assert data.src.shape == (203, int(data.src_len.max())) and data.tgt.dtype == torch.long
    bs = epoch_batches(data, 8, torch.Generator().manual_seed(0), pool=5)
    assert len(bs) == 26 and sorted(np.concatenate(bs).tolist()) == list(range(203))
    assert [b.tolist() for b in bs] == [b.tolist() for b in epoch_batches(data, 8, torch.Generator().manual_seed(0), pool=5)]
    assert [b.tolist() for b in bs] != [b.tolist() for b in epoch_batches(data, 8, torch.Generator().manual_seed(1), pool=5)]
    padded = sum(len(b) * data.tgt_len[b].max() for b in bs)
    rand = sum(len(b) * data.tgt_len[b].max() for b in np.array_split(np.random.default_rng(0).permutation(203), 26))
    assert padded < rand

def test_named_steps_equal_train():
    cfg = Seq2SeqConfig('transformer', seed=5, **TINY)
    st = init_training(cfg, _pairs())
    recs = [train_epoch(st) for _ in range(cfg.epochs)]
    tm = train(cfg, _pairs(), progress=False, checkpoint=False, device='cpu')
    assert tm.device == 'cpu' and [r['loss'] for r in recs] == [h['loss'] for h in tm.history]
    for x, y in zip(st.model.state_dict().values(), tm.model.state_dict().values()): assert torch.equal(x, y)
    assert tm.model(torch.tensor([[BOS, 5, EOS]]), torch.tensor([[BOS]])).dtype == torch.float32   # no autocast on CPU

@pytest.mark.parametrize('arch', ['transformer', 'lstm'])
def test_chunks_give_the_same_batch_updates(arch):
    "A batch computed in length-sorted pieces (gradients summed) gives the update of the whole batch (no dropout: same masks)."
    kw = dict(TINY, dropout=0.0) if arch == 'transformer' else dict(hidden=16, lr=3e-3, batch_size=8, epochs=2, dropout=0.0)
    a = train(Seq2SeqConfig(arch, seed=2, **kw), _pairs(), progress=False, checkpoint=False)
    b = train(Seq2SeqConfig(arch, seed=2, chunks=3, **kw), _pairs(), progress=False, checkpoint=False)
    for x, y in zip(a.model.state_dict().values(), b.model.state_dict().values()): torch.testing.assert_close(x, y, rtol=1e-4, atol=1e-5)
    assert [round(h['loss'], 5) for h in a.history] == [round(h['loss'], 5) for h in b.history]

def test_layers_compute_what_torch_transformer_layers_compute():
    "With the same weights (eval mode), our post-LN layers equal torch's nn.Transformer*Layer (GELU, post-LN, batch first)."
    cfg = Seq2SeqConfig('transformer', hidden=16, heads=2, ffn=32, dropout=0.0)
    kw = dict(d_model=16, nhead=2, dim_feedforward=32, dropout=0.0, activation='gelu', batch_first=True, layer_norm_eps=1e-12)
    ren = {'self_attn.in_proj_weight': 'self_attn.in_proj.weight', 'self_attn.in_proj_bias': 'self_attn.in_proj.bias',
           'multihead_attn.in_proj_weight': 'cross_attn.in_proj.weight', 'multihead_attn.in_proj_bias': 'cross_attn.in_proj.bias',
           'multihead_attn.out_proj': 'cross_attn.out_proj', 'linear1': 'ffn.0', 'linear2': 'ffn.2', 'norm1': 'ln1', 'norm2': 'ln2', 'norm3': 'ln3'}
    def mapped(sd, enc):
        out = {}
        for k, v in sd.items():
            for a, b in ren.items(): k = k.replace(a, b)
            out[k.replace('self_attn.', 'attn.') if enc else k] = v
        return out
    torch.manual_seed(0)
    ref_e, ref_d = torch.nn.TransformerEncoderLayer(**kw).eval(), torch.nn.TransformerDecoderLayer(**kw).eval()
    ours_e, ours_d = EncoderLayer(cfg).eval(), DecoderLayer(cfg).eval()
    ours_e.load_state_dict(mapped(ref_e.state_dict(), True)); ours_d.load_state_dict(mapped(ref_d.state_dict(), False))
    x, y = torch.randn(3, 5, 16), torch.randn(3, 4, 16)
    pad = torch.tensor([[False] * 5, [False] * 3 + [True] * 2, [False] * 4 + [True]])   # True at padding
    with torch.no_grad():
        mem = ours_e(x, ~pad[:, None, None, :])
        torch.testing.assert_close(mem, ref_e(x, src_key_padding_mask=pad))
        causal = torch.ones(4, 4, dtype=torch.bool).triu(1)
        torch.testing.assert_close(ours_d(y, ours_d.cross_attn.memory_kv(mem), ~pad[:, None, None, :]),
                                   ref_d(y, mem, tgt_mask=causal, memory_key_padding_mask=pad))

@pytest.mark.skipif(not torch.cuda.is_available(), reason='needs CUDA')
def test_cuda_train_and_predict():
    tm = train(Seq2SeqConfig('transformer', seed=0, **TINY), _pairs(), progress=False, device='cuda', checkpoint=False)
    assert len(tm.predict(['w1 w2'], max_len=8)) == 1
    tm = train(Seq2SeqConfig('lstm', seed=0, hidden=16, lr=3e-3, batch_size=8, epochs=1), _pairs(), progress=False, device='cuda', checkpoint=False)
    assert len(tm.predict(['w1 w2'], max_len=8)) == 1
