"""ReCOGS `paper` profile: what one run costs on this device, measured with the library's own trainer and decoder.

Run from the repository root (a lent GPU, or here with small numbers):
  COGEN_MIRROR=../shared/data .venv/bin/python bench/recogs_paper_cost.py [--variant cogs] [--seed 0] [--seconds 240]
      [--rows 0] [--eval-limit 0] [--threads 0] [--json cost.json]

What it does (one process; CUDA when there is one):
  1. builds the `paper` profile's Transformer exactly as `nbs/recogs/experiment.ipynb` does for it (the paper's
     settings: hidden 300, 2 layers, 4 heads, ffn 512, dropout 0.1, batch 128, lr 1e-4 with the warm-up/decay schedule
     of 300 epochs, decoding bound 512) on all train rows of `--variant` (`--rows N`: a seeded sample, for a quick try);
  2. trains it epoch by epoch (`init_training` + `train_epoch`) until `--seconds` of training have passed or the 300
     epochs are done, printing each epoch's seconds and loss;
  3. decodes ALL of dev, test and gen (`--eval-limit N`: N rows each and N per gen category) with the library's
     batched greedy decoder and scores exact match and SEM, per gen category too.
Printed and written to `--json`: seconds per epoch (median of the epochs after the first, which holds the warm-up of
the kernels), the decoding seconds, and the projection of one paper run (300 epochs + decoding) and of the grid's 20
seeds of this variant. The scores are those of a model stopped early in a 300-epoch schedule (its learning rate still
in the warm-up for the first 30 epochs): they measure nothing about the paper's claims and are printed only to show
that the decoding ran on real outputs. It writes no result rows.
"""
import argparse, json, math, statistics, sys, time
from pathlib import Path
import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from cogen_lib.core import make_rng
from cogen_lib.recogs.rewrites import convert
from cogen_lib.recogs import seq2seq as S


def sample(df, n, rng):
    "A seeded sample of `n` rows of `df` (all when 0), in file order (the experiment notebook's rule)."
    if not n or n >= len(df): return df.reset_index(drop=True)
    return df.iloc[np.sort(rng.choice(len(df), n, replace=False))].reset_index(drop=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--variant', default='cogs', help='a variant of cogen_lib.recogs.rewrites.VARIANTS')
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--epochs', type=int, default=300, help='length of the schedule (300: the paper profile; fewer: a complete shorter budget)')
    ap.add_argument('--seconds', type=float, default=240.0, help='training time to spend (whole epochs; at least one)')
    ap.add_argument('--rows', type=int, default=0, help='seeded sample of train rows (0: all, as the paper profile)')
    ap.add_argument('--eval-limit', type=int, default=0, help='rows of dev/test and per gen category (0: all)')
    ap.add_argument('--threads', type=int, default=0, help='torch CPU threads (0: torch default)')
    ap.add_argument('--json', default='', help='also write the measurements to this file')
    a = ap.parse_args()
    if a.threads: torch.set_num_threads(a.threads)
    device = 'cuda' if torch.cuda.is_available() else 'cpu'
    where = torch.cuda.get_device_name(0) if device == 'cuda' else f'cpu, {torch.get_num_threads()} thread(s)'
    cfg = S.Seq2SeqConfig('transformer', epochs=a.epochs, max_len=512, seed=a.seed)   # the paper profile's run (epochs 300)
    rng = make_rng(a.seed)
    train_df = sample(convert(a.variant, 'train', a.seed), a.rows, rng)
    evals = {s: sample(convert(a.variant, s, a.seed), a.eval_limit, rng) for s in ('dev', 'test')}
    gen = convert(a.variant, 'gen', a.seed)
    evals['gen'] = gen if not a.eval_limit else gen.groupby('type', sort=True).head(a.eval_limit).reset_index(drop=True)
    print(f"{a.variant} seed {a.seed}: {len(train_df):,} train rows; eval {({k: len(v) for k, v in evals.items()})}; "
          f"{where}; torch {torch.__version__}", flush=True)

    t0 = time.perf_counter()
    st = S.init_training(cfg, list(zip(train_df.sentence, train_df.lf)), device)
    setup = time.perf_counter() - t0
    print(f"paper Transformer: {S.n_params(st.model):,} parameters; set-up {setup:.1f} s", flush=True)
    spent = 0.0
    while st.epoch < cfg.epochs and (st.epoch == 0 or spent < a.seconds):
        rec = S.train_epoch(st)
        if device == 'cuda': torch.cuda.synchronize()
        spent += rec['seconds']
        print(f"epoch {rec['epoch']}: {rec['seconds']:.2f} s, loss {rec['loss']:.4f}", flush=True)
    secs = [h['seconds'] for h in st.history]
    per_epoch = statistics.median(secs[1:]) if len(secs) > 1 else secs[0]

    tm = S.trained_model(st)
    decode, scores = {}, {}
    for split, df in evals.items():
        t0 = time.perf_counter()
        preds = tm.predict(df.sentence, batch_size=256)
        decode[split] = time.perf_counter() - t0
        sc = S.score_predictions(preds, df.lf, a.variant)
        scores[split] = dict(n=len(df), em=float(sc['em'].mean()), sem=float(sc['sem'].mean()))
        if split == 'gen':
            scores['gen_by_category'] = {k: float(v) for k, v in sc['sem'].groupby(df['type'].to_numpy(), sort=True).mean().items()}
        print(f"{split}: {len(df):,} rows decoded in {decode[split]:.1f} s; exact match {scores[split]['em']:.3f}, "
              f"SEM {scores[split]['sem']:.3f} (after {st.epoch} of {cfg.epochs} epochs)", flush=True)

    run_s = setup + per_epoch * 300 + sum(decode.values())
    out = dict(variant=a.variant, seed=a.seed, schedule_epochs=cfg.epochs, device=where, torch=torch.__version__, train_rows=len(train_df),
               n_params=S.n_params(st.model), epochs_run=st.epoch, epoch_seconds=secs, seconds_per_epoch=per_epoch,
               examples_per_second=len(train_df) / per_epoch, setup_seconds=setup, decode_seconds=decode,
               eval_rows={k: len(v) for k, v in evals.items()}, scores_after_epochs_run=scores,
               projected_run_seconds=run_s, projected_20_seeds_hours=20 * run_s / 3600)
    print(f"projection: one paper run (300 epochs + decoding) {run_s / 60:.1f} min; 20 seeds of {a.variant} "
          f"{20 * run_s / 3600:.1f} h, one run at a time on this device")
    if a.json:
        Path(a.json).write_text(json.dumps(out, indent=1, allow_nan=False) + '\n')


if __name__ == '__main__':
    main()
