"""Measure what beam search costs against greedy decoding on this machine, for grids/spor.yaml.

Fine-tunes smollm2-135m with LoRA on `--train` WebNLG training pairs for one epoch (lr 5e-4, batch 6, the cpu
profile's settings), timing it (CPU seconds per training pair), then generates for `--samples` WebNLG test samples (a
seeded subset of the test pool) greedily and with each beam width of `--beams`, timing wall and CPU seconds (process
time, all threads) per generated text and per generated token, and scoring each with PARENT F and BLEU. Writes one CSV
row per step to `--out`:

    COGEN_MIRROR=/work/shared/data .venv/bin/python measured/spor/decode_cost.py --threads 1 --out measured/spor/decode_cost.csv

Measured on the shared 2-core machine with one torch thread: under heavy load, several torch threads spin while they
wait and their CPU seconds stop measuring work, and a single thread's CPU seconds are what a run with `threads: 1` pays
when the machine is otherwise idle (wall ~ CPU). The training is a few steps only (`--train 18`: three steps of 6) to
keep the measurement short on the loaded machine; training cost is linear in the pairs. The load average before and
after each step is recorded beside it.
"""
import argparse, os, shutil, tempfile, time
from pathlib import Path
import numpy as np
import pandas as pd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--out', default='measured/spor/decode_cost.csv')
    ap.add_argument('--dataset', default='webnlg')
    ap.add_argument('--train', type=int, default=18, help='training pairs (one epoch; 6 per step)')
    ap.add_argument('--samples', type=int, default=16, help='test samples generated per setting')
    ap.add_argument('--beams', default='1,5', help='beam widths, comma-separated (1 = greedy)')
    ap.add_argument('--max-new-tokens', type=int, default=48)
    ap.add_argument('--threads', type=int, default=1, help='torch threads (0: torch default)')
    a = ap.parse_args()
    import torch
    if a.threads: torch.set_num_threads(a.threads)
    from cogen_lib.spor.data import load_corpus
    from cogen_lib.spor.finetune import FinetuneConfig, finetune, generate_texts
    from cogen_lib.spor.metrics import parent_samples, bleu
    corpus = load_corpus(a.dataset)
    test = list(corpus.test)
    pick = np.sort(np.random.default_rng(0).permutation(len(test))[:a.samples])
    evalset = [test[i] for i in pick]
    rows, work = [], Path(tempfile.mkdtemp(prefix='spor-decode-'))
    load = lambda: round(os.getloadavg()[0], 2)
    common = dict(dataset=a.dataset, torch_threads=torch.get_num_threads(), cores=os.cpu_count(), max_new_tokens=a.max_new_tokens)
    try:
        cfg = FinetuneConfig(model='smollm2-135m', method='lora', epochs=1, lr=5e-4, batch_size=6, train_limit=a.train, seed=0)
        l0, w, c = load(), time.perf_counter(), time.process_time()
        info = finetune(list(corpus.train), cfg, work, progress=False)
        rows.append(dict(step='train (LoRA, batch 6)', num_beams=None, items=info['pairs'], wall_s=time.perf_counter() - w,
                         cpu_s=time.process_time() - c, load_before=l0, load_after=load(), **common))
        folder = work/'epoch-1'
        generate_texts(folder, evalset[:2], max_new_tokens=8)                       # load the model once, outside the timings
        for k in [int(x) for x in a.beams.split(',')]:
            l0, w, c = load(), time.perf_counter(), time.process_time()
            gens = generate_texts(folder, evalset, max_new_tokens=a.max_new_tokens, num_beams=k)
            wall, cpu = time.perf_counter() - w, time.process_time() - c
            preds = [g.text or '' for g in gens]
            rows.append(dict(step='generate', num_beams=k, items=len(evalset), wall_s=wall, cpu_s=cpu, load_before=l0, load_after=load(),
                             new_tokens=sum(g.n_new_tokens or 0 for g in gens), parent_f=100 * parent_samples(preds, evalset)[2],
                             bleu=bleu(preds, [list(s.texts) for s in evalset])[0], **common))
            print(rows[-1], flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    df = pd.DataFrame(rows)
    df['wall_s_per_item'] = df.wall_s / df['items']; df['cpu_s_per_item'] = df.cpu_s / df['items']
    if 'new_tokens' in df: df['cpu_s_per_token'] = df.cpu_s / df.new_tokens
    df.round(4).to_csv(a.out, index=False, lineterminator='\n')
    print(df.round(3).to_string(index=False))


if __name__ == '__main__':
    main()
