"""ReCOGS seq2seq training: the training loop of `cogen_lib.recogs.seq2seq` vs the loop it replaced, same rows, same seeds.

Run from the repository root:
  COGEN_MIRROR=../shared/data .venv/bin/python bench/recogs_train.py [--arch transformer] [--rows 2000] [--epochs 3]
      [--hidden 0] [--ffn 0] [--heads 0] [--batch-size 64] [--lr 5e-4] [--threads 1] [--seed 0] [--decode-rows 210]
      [--bucket 0] [--chunks 1]

What it measures (one process, CPU unless CUDA is there):
  baseline  a verbatim copy (below, BASELINE) of the model and `train` loop of cogen_lib.recogs.seq2seq before
            issue #9: `nn.TransformerEncoder`/`nn.TransformerDecoder` layers; each batch drawn from a fresh permutation,
            padded in Python and copied to the device; `loss.item()` every step; foreach AdamW.
  new       `init_training` + `train_epoch` of the library: pairs padded once and kept on the device, each batch a
            gather cut to its longest row, the LM head and loss on real target tokens only, loss summed on the device,
            fused AdamW, own attention layers on scaled_dot_product_attention. Its batches are the baseline's (the
            same seeded permutation cut in order) unless --bucket N asks for length bucketing in pools of N batches;
            --chunks N computes each batch in N pieces of similar length (the same batch and update, less padding).
The two train on the same seeded sample of COGS train with the same config and seed, one epoch each in turn
(baseline epoch 1, new epoch 1, baseline epoch 2, ...), so that load from other processes on a shared machine hits
both alike; each keeps its own torch RNG state, so the alternation does not change either run. Printed: examples/s and
s/epoch of each epoch, the training loss after every epoch, and the ratio new / baseline of examples per second over
all epochs.

Decoding (Transformer): the baseline's trained weights are copied into the new model (same parameters, other names);
the script checks that both give the same logits (teacher forcing, eval mode) and the same greedy output on
`--decode-rows` gen rows (10 per category by default), and times the two greedy decoders on those rows.

The two loops see the same batches in the same order but are not numerically identical: the new layers have no
dropout on the feed-forward activations (BERT, and the authors' model, have none there; `nn.Transformer*` layers do),
so dropout masks differ, and the kernels differ (SDPA vs nn.MultiheadAttention, fused vs foreach AdamW). With
--bucket N the batches differ too; on COGS, bucketing lowers padding but learns worse (compare the losses).
"""
import argparse, dataclasses, math, sys, time
from pathlib import Path
import numpy as np
import torch
from torch import nn
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cogen_lib.core import make_rng
from cogen_lib.data import load_cogs
from cogen_lib.recogs import seq2seq as S
from cogen_lib.recogs.seq2seq import BOS, EOS, PAD, Seq2SeqConfig


# ---------------------------------------------------------------------------------------------------------------------
# BASELINE: copied from cogen_lib/recogs/seq2seq.py at commit 507f30b (before issue #9); only the checkpointing is left
# out of the loop (it runs once per epoch and is not what is measured), and the loop is cut into one call per epoch.
# ---------------------------------------------------------------------------------------------------------------------
def _heads(x, h):
    B, T, D = x.shape
    return x.view(B, T, h, D // h).transpose(1, 2)

def _merge(x):
    B, h, T, d = x.shape
    return x.transpose(1, 2).reshape(B, T, h * d)

def _qkv(mha, x, which):
    d = mha.embed_dim
    return F.linear(x, mha.in_proj_weight[which * d:(which + 1) * d], mha.in_proj_bias[which * d:(which + 1) * d])

class BaselineTransformer(nn.Module):
    "BASELINE (507f30b): BERT-style encoder-decoder on nn.TransformerEncoder / nn.TransformerDecoder."
    def __init__(self, n_src, n_tgt, cfg):
        super().__init__()
        d = cfg.hidden
        self.src_emb, self.tgt_emb = nn.Embedding(n_src, d, padding_idx=PAD), nn.Embedding(n_tgt, d, padding_idx=PAD)
        self.src_pos, self.tgt_pos = nn.Embedding(cfg.max_positions, d), nn.Embedding(cfg.max_positions, d)
        self.src_ln, self.tgt_ln = nn.LayerNorm(d, eps=1e-12), nn.LayerNorm(d, eps=1e-12)
        self.drop = nn.Dropout(cfg.dropout)
        kw = dict(d_model=d, nhead=cfg.heads, dim_feedforward=cfg.ffn, dropout=cfg.dropout, activation='gelu',
                  batch_first=True, norm_first=False, layer_norm_eps=1e-12)
        self.encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(**kw), cfg.layers, enable_nested_tensor=False)
        self.decoder = nn.TransformerDecoder(nn.TransformerDecoderLayer(**kw), cfg.layers)
        self.head = nn.Sequential(nn.Linear(d, d), nn.GELU(), nn.LayerNorm(d, eps=1e-12))
        self.out = nn.Linear(d, n_tgt)
        self.apply(self._init)
        self.out.weight = self.tgt_emb.weight
        self.max_positions, self.n_heads = cfg.max_positions, cfg.heads
    @staticmethod
    def _init(m):
        if isinstance(m, (nn.Linear, nn.Embedding)):
            nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear) and m.bias is not None: nn.init.zeros_(m.bias)
            if isinstance(m, nn.Embedding) and m.padding_idx is not None: m.weight.data[m.padding_idx].zero_()
        if isinstance(m, nn.MultiheadAttention):
            nn.init.normal_(m.in_proj_weight, std=0.02); nn.init.zeros_(m.in_proj_bias)
    def _embed(self, ids, emb, pos, ln, start=0):
        p = torch.arange(start, start + ids.shape[1], device=ids.device)
        return self.drop(ln(emb(ids) + pos(p)[None]))
    def encode(self, src):
        mask = src == PAD
        return self.encoder(self._embed(src, self.src_emb, self.src_pos, self.src_ln), src_key_padding_mask=mask), mask
    def decode(self, memory, mem_mask, tgt_in):
        T = tgt_in.shape[1]
        causal = torch.ones(T, T, dtype=torch.bool, device=tgt_in.device).triu(1)
        h = self.decoder(self._embed(tgt_in, self.tgt_emb, self.tgt_pos, self.tgt_ln), memory, tgt_mask=causal,
                         tgt_key_padding_mask=tgt_in == PAD, memory_key_padding_mask=mem_mask)
        return self.out(self.head(h))
    def forward(self, src, tgt_in): return self.decode(*self.encode(src), tgt_in)
    @torch.no_grad()
    def greedy(self, src, max_len):
        memory, mask = self.encode(src)
        B, dev, h = src.shape[0], src.device, self.n_heads
        out = torch.full((B, max_len), PAD, dtype=torch.long, device=dev)
        rows = torch.arange(B, device=dev)
        layers = list(self.decoder.layers)
        mem_kv = [(_heads(_qkv(l.multihead_attn, memory, 1), h), _heads(_qkv(l.multihead_attn, memory, 2), h)) for l in layers]
        attend = ~mask[:, None, None, :]
        cache = [None] * len(layers)
        y = torch.full((B, 1), BOS, dtype=torch.long, device=dev)
        for t in range(min(max_len, self.max_positions)):
            x = self._embed(y, self.tgt_emb, self.tgt_pos, self.tgt_ln, start=t)
            for i, l in enumerate(layers):
                q, k, v = (_heads(_qkv(l.self_attn, x, j), h) for j in range(3))
                if cache[i] is not None: k, v = torch.cat([cache[i][0], k], 2), torch.cat([cache[i][1], v], 2)
                cache[i] = (k, v)
                x = l.norm1(x + l.self_attn.out_proj(_merge(F.scaled_dot_product_attention(q, k, v))))
                q = _heads(_qkv(l.multihead_attn, x, 0), h)
                x = l.norm2(x + l.multihead_attn.out_proj(_merge(F.scaled_dot_product_attention(q, *mem_kv[i], attn_mask=attend))))
                x = l.norm3(x + l.linear2(l.activation(l.linear1(x))))
            nxt = self.out(self.head(x[:, -1])).argmax(-1)
            out[rows, t] = nxt
            live = nxt != EOS
            if not bool(live.any()): break
            if not bool(live.all()):
                rows, nxt, attend = rows[live], nxt[live], attend[live]
                mem_kv = [(k[live], v[live]) for k, v in mem_kv]
                cache = [(k[live], v[live]) for k, v in cache]
            y = nxt[:, None]
        return out

class BaselineLoop:
    "BASELINE (507f30b): `train`'s set-up and its per-epoch loop body, verbatim apart from the split into epochs."
    def __init__(self, cfg, pairs, device):
        self.cfg, self.device = cfg, device
        self.src_vocab, self.tgt_vocab = S.build_vocab(s for s, _ in pairs), S.build_vocab(t for _, t in pairs)
        self.src = [[BOS] + self.src_vocab.encode(s) + [EOS] for s, _ in pairs]
        self.tgt = [[BOS] + self.tgt_vocab.encode(t) + [EOS] for _, t in pairs]
        S.seed_everything(int(cfg.seed))
        arch = BaselineTransformer if cfg.arch == 'transformer' else S.LSTMSeq2Seq   # the LSTM model is unchanged
        self.model = arch(len(self.src_vocab), len(self.tgt_vocab), cfg).to(device)
        self.opt = torch.optim.AdamW(self.model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
        total = math.ceil(len(pairs) / cfg.batch_size) * cfg.epochs
        self.sched = torch.optim.lr_scheduler.LambdaLR(self.opt, lambda s: S.lr_lambda(s, total, int(cfg.warmup * total)))
        self.gen = torch.Generator().manual_seed(int(cfg.seed))
        self.loss_fn = nn.CrossEntropyLoss(ignore_index=PAD)
        self.n = len(pairs)
    def epoch(self):
        cfg, model, opt, sched, device = self.cfg, self.model, self.opt, self.sched, self.device
        model.train(); t0 = time.perf_counter(); tot = ntok = 0.0
        perm = torch.randperm(self.n, generator=self.gen).tolist()
        for b in range(0, len(perm), cfg.batch_size):
            idx = perm[b:b + cfg.batch_size]
            s, t = S._pad([self.src[i] for i in idx], device), S._pad([self.tgt[i] for i in idx], device)
            logits = model(s, t[:, :-1])
            loss = self.loss_fn(logits.reshape(-1, logits.shape[-1]), t[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True); loss.backward(); opt.step(); sched.step()
            k = int((t[:, 1:] != PAD).sum()); tot += loss.detach().item() * k; ntok += k
        return dict(loss=tot / ntok, seconds=time.perf_counter() - t0, examples=self.n)
# ----------------------------------------------------------------------------------------------------- end of BASELINE


def baseline_to_new(sd: dict) -> dict:
    "The baseline Transformer's state dict under the new model's parameter names (the same tensors)."
    ren = [('encoder.layers.', 'encoder.'), ('decoder.layers.', 'decoder.'), ('.self_attn.in_proj_weight', '.self_attn.in_proj.weight'),
           ('.self_attn.in_proj_bias', '.self_attn.in_proj.bias'), ('.multihead_attn.in_proj_weight', '.cross_attn.in_proj.weight'),
           ('.multihead_attn.in_proj_bias', '.cross_attn.in_proj.bias'), ('.multihead_attn.out_proj', '.cross_attn.out_proj'),
           ('.linear1.', '.ffn.0.'), ('.linear2.', '.ffn.2.'), ('.norm1.', '.ln1.'), ('.norm2.', '.ln2.'), ('.norm3.', '.ln3.')]
    out = {}
    for k, v in sd.items():
        for a, b in ren: k = k.replace(a, b)
        if k.startswith('encoder.'): k = k.replace('.self_attn.', '.attn.')
        out[k] = v
    return out


class Alternating:
    "Runs `step()` with its own torch RNG state (the global one when created), so two runs interleaved in one process draw what each would alone."
    def __init__(self): self.rng = torch.get_rng_state()
    def __call__(self, step):
        torch.set_rng_state(self.rng)
        try: return step()
        finally: self.rng = torch.get_rng_state()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--arch', default='transformer', choices=['transformer', 'lstm'])
    ap.add_argument('--rows', type=int, default=2000, help='seeded sample of COGS train rows')
    ap.add_argument('--epochs', type=int, default=3)
    ap.add_argument('--hidden', type=int, default=0, help='0: the paper value')
    ap.add_argument('--ffn', type=int, default=0, help='0: the paper value')
    ap.add_argument('--heads', type=int, default=0, help='0: the paper value')
    ap.add_argument('--batch-size', type=int, default=64)
    ap.add_argument('--lr', type=float, default=5e-4)
    ap.add_argument('--threads', type=int, default=1, help='torch CPU threads (the cpu profile uses 1)')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--bucket', type=int, default=0, help='new loop: length bucketing in pools of N batches (0: random batches)')
    ap.add_argument('--chunks', type=int, default=1, help='new loop: each batch computed in N pieces of similar length')
    ap.add_argument('--decode-rows', type=int, default=210, help='gen rows decoded by both greedy decoders (Transformer)')
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    over = {k: v for k, v in dict(hidden=a.hidden, ffn=a.ffn, heads=a.heads).items() if v}
    cfg = Seq2SeqConfig(a.arch, epochs=a.epochs, batch_size=a.batch_size, lr=a.lr, seed=a.seed, **over)
    new_cfg = dataclasses.replace(cfg, bucket=a.bucket, chunks=a.chunks)
    train = load_cogs('train')
    rows = np.sort(make_rng(a.seed).choice(len(train), min(a.rows, len(train)), replace=False))
    pairs = list(zip(train.sentence.iloc[rows], train.lf.iloc[rows]))
    print(f"{cfg.arch}: hidden {cfg.hidden}, layers {cfg.layers}, heads {cfg.heads}, ffn {cfg.ffn}, batch {cfg.batch_size}, "
          f"lr {cfg.lr:g}, {len(pairs)} COGS train rows, {cfg.epochs} epochs, seed {cfg.seed}, bucket {new_cfg.bucket}, chunks {new_cfg.chunks} (new loop), {device}, "
          f"{torch.get_num_threads()} torch thread(s), torch {torch.__version__}")

    base = BaselineLoop(cfg, pairs, device); base_rng = Alternating()    # RNG state right after each model's seeded init
    st = S.init_training(new_cfg, pairs, device); new_rng = Alternating()
    print(f"parameters: baseline {S.n_params(base.model):,}, new {S.n_params(st.model):,}; "
          f"optimizer: baseline foreach, new fused={st.optimizer.defaults.get('fused')}")
    hb, hn = [], []
    for e in range(cfg.epochs):
        hb.append(base_rng(base.epoch))
        hn.append(new_rng(lambda: S.train_epoch(st)))
        print(f"epoch {e + 1}: baseline {hb[-1]['seconds']:6.1f} s ({hb[-1]['examples'] / hb[-1]['seconds']:6.1f} ex/s, "
              f"loss {hb[-1]['loss']:.4f})   new {hn[-1]['seconds']:6.1f} s ({hn[-1]['examples'] / hn[-1]['seconds']:6.1f} ex/s, "
              f"loss {hn[-1]['loss']:.4f})", flush=True)
    sb, sn = sum(h['seconds'] for h in hb), sum(h['seconds'] for h in hn)
    eb, en = sum(h['examples'] for h in hb) / sb, sum(h['examples'] for h in hn) / sn
    print(f"baseline: {eb:.1f} examples/s, {sb / cfg.epochs:.1f} s/epoch, loss after {cfg.epochs} epochs {hb[-1]['loss']:.4f}")
    print(f"new:      {en:.1f} examples/s, {sn / cfg.epochs:.1f} s/epoch, loss after {cfg.epochs} epochs {hn[-1]['loss']:.4f}")
    print(f"ratio new / baseline (examples/s): {en / eb:.2f}x")

    if cfg.arch == 'transformer' and a.decode_rows:
        # the same weights in both models: the baseline's, copied into a fresh new-style model
        new_model = S.make_model(cfg, len(base.src_vocab), len(base.tgt_vocab)).to(device)
        new_model.load_state_dict(baseline_to_new(base.model.state_dict()))
        base.model.eval(); new_model.eval()
        gen = load_cogs('gen')
        per = max(1, a.decode_rows // gen.category.nunique())
        gen = gen.groupby('category', sort=True).head(per)
        enc = [[BOS] + base.src_vocab.encode(s) + [EOS] for s in gen.sentence]
        tgt = [[BOS] + base.tgt_vocab.encode(t) + [EOS] for t in gen.lf]
        src_b, tgt_b = S._pad(enc[:64], device), S._pad([t[:60] for t in tgt[:64]], device)
        with torch.no_grad():   # at real target positions (at padded ones the baseline also masks padded keys; unused)
            diff = (base.model(src_b, tgt_b) - new_model(src_b, tgt_b)).abs()[tgt_b != PAD].max().item()
        print(f"same weights, teacher-forced logits at the real tokens of 64 gen rows: max |baseline - new| = {diff:.2e}")
        order = sorted(range(len(enc)), key=lambda i: (len(enc[i]), i))
        outs, secs = {}, {}
        for name, m in (('baseline', base.model), ('new', new_model), ('baseline again', base.model), ('new again', new_model)):
            t0 = time.perf_counter(); o = []
            for b in range(0, len(order), 128):
                o += m.greedy(S._pad([enc[i] for i in order[b:b + 128]], device), 160).tolist()
            secs[name], outs[name] = time.perf_counter() - t0, o
        same = outs['baseline'] == outs['new']
        tb, tn = secs['baseline'] + secs['baseline again'], secs['new'] + secs['new again']
        print(f"greedy decoding of {len(enc)} gen rows (max_len 160, twice each, alternating): baseline {tb / 2:.2f} s, "
              f"new {tn / 2:.2f} s, ratio {tb / tn:.2f}x; identical outputs: {same}")
        if not same: sys.exit('the two decoders disagree on the same weights')


if __name__ == '__main__':
    main()
