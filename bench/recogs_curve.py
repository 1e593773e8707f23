"""ReCOGS learning curve on this machine: gen SEM per category against training minutes, to size the `cpu` profile.

Run from the repository root (one run; it writes one CSV, the rows of every evaluation):
  COGEN_MIRROR=../shared/data nice -n 10 .venv/bin/python bench/recogs_curve.py [--variant cogs] [--model transformer]
      [--hidden 128] [--ffn 0] [--batch-size 64] [--lr 1e-3] [--epochs 8] [--eval-limit 10] [--threads 1]
      [--bucket 0] [--chunks 1] [--shared-vocab] [--scale-embeddings] [--budget-min 28] [--out measured/recogs_cpu_curve.csv]
      [--eval-split gen|dev] [--device cpu|cuda] [--checkpoint]

One training run of the library's loop (`init_training`, then `train_epoch` epoch by epoch) on all of the variant's
training rows, with the schedule of `--epochs` epochs (linear warm-up over 10% of the steps, linear decay to 0 at the
last one). After every epoch, the model decodes `--eval-limit` gen rows per category (the same seeded rows as the
experiment notebook scores with that eval_limit and seed; with `--eval-split dev`, that many dev rows) and scores exact
match, SEM, the structure with indices abstracted (`index_skeleton`) and the index-collision rate (`index_collision`).
With `--checkpoint` every epoch is saved where the library's `train` keeps it (`checkpoint_dir`), and a run resumes from
it (keeping the rows its earlier epochs wrote to `--out`): a run whose flags match a grid entry leaves a finished model that `cogen run` decodes without training again. The run stops early once
the training time passes `--budget-min` minutes. Note: a point before the last epoch is taken mid-schedule (learning
rate not yet decayed); a run planned to end at that epoch would decay earlier and usually score a little higher there.
Training time is recorded twice: wall-clock seconds on this machine as it was (shared with other work; the `load1`
column records the 1-minute load average at each evaluation) and the CPU seconds of the process, which with one torch
thread is about what the training takes on an idle core.
"""
import argparse, os, sys, time
from pathlib import Path
import numpy as np, pandas as pd
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cogen_lib.core import make_rng
from cogen_lib.recogs.rewrites import convert
from cogen_lib.recogs import seq2seq as S
from cogen_lib.recogs.sem import index_skeleton, index_collision


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--variant', default='cogs')
    ap.add_argument('--model', default='transformer', choices=['transformer', 'lstm'])
    ap.add_argument('--hidden', type=int, default=128)
    ap.add_argument('--ffn', type=int, default=0, help='feed-forward width, 0 = the paper value (512)')
    ap.add_argument('--batch-size', type=int, default=64)
    ap.add_argument('--lr', type=float, default=1e-3)
    ap.add_argument('--epochs', type=int, default=8, help='epochs of the schedule')
    ap.add_argument('--train-limit', type=int, default=0, help='training rows (seeded sample), 0 = all')
    ap.add_argument('--eval-limit', type=int, default=10, help='gen rows per category')
    ap.add_argument('--max-len', type=int, default=160)
    ap.add_argument('--threads', type=int, default=1)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--bucket', type=int, default=0, help='Seq2SeqConfig.bucket: length bucketing in pools of N batches, 0 = random batches')
    ap.add_argument('--chunks', type=int, default=1, help='Seq2SeqConfig.chunks: each batch computed in N length-sorted pieces (the same update)')
    ap.add_argument('--shared-vocab', action='store_true', help="Seq2SeqConfig.shared_vocab: one embedding matrix for source, target and output (not the paper's model)")
    ap.add_argument('--scale-embeddings', action='store_true', help="Seq2SeqConfig.scale_embeddings: word embeddings times sqrt(hidden) (not the authors' layers)")
    ap.add_argument('--show', type=int, default=0, help='print this many gen predictions after every epoch')
    ap.add_argument('--budget-min', type=float, default=28.0, help='stop after the epoch that passes this many training minutes')
    ap.add_argument('--out', default='measured/recogs_cpu_curve.csv')
    ap.add_argument('--eval-split', default='gen', choices=['gen', 'dev'], help='score --eval-limit rows per gen category, or --eval-limit dev rows')
    ap.add_argument('--device', default='cpu', help='cpu or cuda (bf16 autocast on cuda, as the library trains)')
    ap.add_argument('--checkpoint', action='store_true', help="save every epoch to the library's checkpoint and resume from it")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    # the experiment notebook's row samples: one seeded generator drawing train, dev, test, then each gen category
    rng = make_rng(a.seed)
    def sample(df, n):
        if not n or n >= len(df): return df.reset_index(drop=True)
        return df.iloc[np.sort(rng.choice(len(df), n, replace=False))].reset_index(drop=True)
    train = sample(convert(a.variant, 'train', a.seed), a.train_limit)
    dev = sample(convert(a.variant, 'dev', a.seed), a.eval_limit).assign(type='dev')
    sample(convert(a.variant, 'test', a.seed), a.eval_limit)
    gen = convert(a.variant, 'gen', a.seed)
    gen = pd.concat([sample(g, a.eval_limit) for _, g in gen.groupby('type', sort=True)], ignore_index=True)
    if a.eval_split == 'dev': gen = dev

    cfg = S.Seq2SeqConfig(a.model, hidden=a.hidden, ffn=a.ffn or None, batch_size=a.batch_size, lr=a.lr, epochs=a.epochs, max_len=a.max_len, seed=a.seed,
                          bucket=a.bucket, chunks=a.chunks, shared_vocab=a.shared_vocab, scale_embeddings=a.scale_embeddings)
    pairs = list(zip(train.sentence, train.lf))
    st = S.init_training(cfg, pairs, a.device)
    ckpt = S.checkpoint_dir(cfg, pairs)/'last.pt' if a.checkpoint else None
    if ckpt is not None and ckpt.exists(): S.resume(st, ckpt)
    if ckpt is not None: print(f"checkpoint {ckpt} (epoch {st.epoch})", flush=True)
    print(f"{cfg}\n{len(train)} train rows, {len(gen)} gen rows, {S.n_params(st.model):,} parameters, "
          f"{torch.get_num_threads()} thread(s)", flush=True)
    out, rows, cpu_s = Path(a.out), [], 0.0
    if st.epoch and out.exists():        # resumed: keep the points this run wrote before, drop any past the checkpoint
        prev = pd.read_csv(out)
        mine = (prev.variant == a.variant) & (prev.model == a.model) & (prev.hidden == cfg.hidden) & (prev.batch_size == cfg.batch_size) \
            & (prev.lr == cfg.lr) & (prev.seed == cfg.seed) & (prev.epochs_planned == cfg.epochs) & (prev.train_rows == len(train))
        rows = prev[~mine | (prev.epoch <= st.epoch)].to_dict('records')
        if (mine & (prev.epoch == st.epoch)).any(): cpu_s = float(prev[mine & (prev.epoch == st.epoch)].train_cpu_seconds.iloc[0])
        print(f"resumed at epoch {st.epoch}: kept {len(rows)} rows of {out}", flush=True)
    for _ in range(st.epoch, cfg.epochs):
        c0 = time.process_time()
        rec = S.train_epoch(st)
        cpu_s += time.process_time() - c0        # CPU seconds of this process (all its threads): the time alone, with 1 thread
        if ckpt is not None: S.save_checkpoint(st, ckpt)
        t0 = time.perf_counter()
        tm = S.trained_model(st)
        preds = tm.predict(gen.sentence, batch_size=128 if a.device == 'cpu' else 1024)
        sc = pd.concat([gen, S.score_predictions(preds, gen.lf, a.variant)], axis=1)
        sc['structure'] = [(k := index_skeleton(p)) is not None and k == index_skeleton(g) for p, g in zip(preds, gen.lf)]   # each skeleton once
        sc['collision'] = [index_collision(p) for p in preds]
        dec = time.perf_counter() - t0
        train_s = sum(h['seconds'] for h in st.history)
        load1 = os.getloadavg()[0]
        for cat, g in sc.groupby('type', sort=True):
            rows.append(dict(variant=a.variant, model=a.model, hidden=cfg.hidden, ffn=cfg.ffn, heads=cfg.heads,
                             batch_size=cfg.batch_size, lr=cfg.lr, seed=cfg.seed, bucket=cfg.bucket, chunks=cfg.chunks, shared_vocab=cfg.shared_vocab, scale_embeddings=cfg.scale_embeddings, epochs_planned=cfg.epochs,
                             train_rows=len(train), threads=torch.get_num_threads(), epoch=rec['epoch'],
                             train_seconds=round(train_s, 1), train_cpu_seconds=round(cpu_s, 1), loss=round(rec['loss'], 5), category=cat, n=len(g),
                             em=round(float(g['em'].mean()), 4), sem=round(float(g['sem'].mean()), 4),
                             structure=round(float(g['structure'].mean()), 4), collision=round(float(g['collision'].mean()), 4),
                             device=a.device,
                             decode_seconds=round(dec, 1), load1=round(load1, 2)))
        for i in range(0, len(sc), max(1, len(sc) // a.show)) if a.show else []:   # a few predictions beside the gold LFs
            print(f"  {sc.type[i]}: {sc.sentence[i]}\n    gold {sc.lf[i]}\n    pred {preds[i]}")
        print(f"epoch {rec['epoch']}: {rec['seconds']:.0f} s ({rec['examples'] / rec['seconds']:.0f} ex/s), loss {rec['loss']:.4f}, "
              f"train {train_s / 60:.1f} min ({cpu_s / 60:.1f} CPU min); {a.eval_split} EM {sc['em'].mean():.3f} SEM {sc['sem'].mean():.3f} "
              f"structure {sc['structure'].mean():.3f} collisions {sc['collision'].mean():.3f} "
              f"(decoded in {dec:.0f} s); load {load1:.1f}", flush=True)
        pd.DataFrame(rows).to_csv(out, index=False)        # rewritten after every epoch: an interrupted run keeps its points
        if train_s > 60 * a.budget_min: break
    print(f"wrote {out}")


if __name__ == '__main__':
    main()
