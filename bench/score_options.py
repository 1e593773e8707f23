"""Log-likelihood multiple choice: options scored on a shared prompt's key/value cache vs one full pass per option.

Run from the repository root:  .venv/bin/python bench/score_options.py [--model smollm2-135m] [--n 12] [--batch-size 4]

The prompts are GroundCocoa `loglik` prompts (`cocoa.prompts.question_prompt`, ~1,000-3,000 tokens) of `--n` generated
questions (round-robin over the six configurations), each with its five continuations " The answer is Option A".."E",
exactly as `cocoa.evaluate.decide_loglik` scores them. Both runs bypass the on-disk call cache:

* baseline: the `score_options` of cogen before this change, kept here verbatim: every (prompt, option) pair is one
  row, batched by length (right padding) and read in full, so the shared prompt is read five times;
* cogen: `HFLM.score_options`, which reads each prompt once and scores the options on its key/value cache.

Prints seconds for each, the ratio baseline/cogen (goal >= 3x), the largest absolute difference of the log-likelihoods
and whether the chosen letter is the same for every question.
"""
import argparse, os, sys, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import numpy as np
import torch

from cogen_lib.core import CogenError
from cogen_lib.models import load_lm
from cogen_lib.cocoa.generate import LETTERS, generate
from cogen_lib.cocoa.prompts import question_prompt
from cogen_lib.cocoa.records import select_questions


def baseline_score_options(self, prompt, options, batch_size=8, chat=False):
    "cogen's `score_options` before the shared-prompt cache (plain-text prompts; no cache, no normalisation)."
    ctxs = prompt if isinstance(prompt, (list, tuple)) else [prompt] * len(options)

    def prepare(pair):
        ctx, opt = pair
        text = self._text(ctx, chat)
        if not chat:
            n = len(text) - len(text.rstrip())
            if n: text, opt = text[:-n], text[-n:] + opt
        whole, cids = self._encode(text + opt, chat), self._encode(text, chat)
        if not cids:
            pre = self.tokenizer.bos_token_id if self.tokenizer.bos_token_id is not None else self.eos_ids[0]
            whole, cids = [pre] + whole, [pre]
        n_opt = len(whole) - len(cids)
        if n_opt < 1: raise CogenError(f"option {pair[1]!r} adds no tokens to the prompt")
        whole = whole[-(self.max_length + 1):]
        return len(whole), (whole, n_opt)

    def run_batch(rows):
        L = max(len(w) for w, _ in rows) - 1
        ids = torch.full((len(rows), L), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), L), dtype=torch.long)
        for r, (w, _) in enumerate(rows): ids[r, :len(w)-1] = torch.tensor(w[:-1]); mask[r, :len(w)-1] = 1   # right padding
        with torch.inference_mode():
            logits = self.model(input_ids=ids.to(self.device), attention_mask=mask.to(self.device)).logits.float()
        res = []
        for r, (w, n) in enumerate(rows):
            lp = torch.log_softmax(logits[r, len(w)-1-n:len(w)-1], -1)
            tgt = torch.tensor(w[-n:], device=lp.device)
            res.append(dict(logprob=float(lp.gather(-1, tgt[:, None]).sum()), n_tokens=n, greedy=bool((lp.argmax(-1) == tgt).all())))
        return res

    out = self._run('score', [list(p) for p in zip(ctxs, options)], dict(chat=chat, dtype=self.dtype), prepare, run_batch,
                    batch_size, 'baseline', cache=False)
    return [v['logprob'] for v, _, _ in out]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--model', default='smollm2-135m')
    ap.add_argument('--n', type=int, default=12, help='questions (round-robin over the six configurations)')
    ap.add_argument('--batch-size', type=int, default=4, help="questions per batch for cogen; the baseline's batch is 5x as many rows")
    ap.add_argument('--seed', type=int, default=0)
    a = ap.parse_args(argv)
    torch.manual_seed(0)
    lm = load_lm(a.model)
    print(f"model: {lm}  torch threads: {torch.get_num_threads()}")
    recs = select_questions(generate(max(1, -(-a.n // 6)), seed=a.seed), a.n)
    prompts = [question_prompt(r) for r in recs]
    ntok = [len(lm._encode(p, False)) for p in prompts]
    print(f"{len(recs)} GroundCocoa loglik prompts, {min(ntok)}-{max(ntok)} tokens (mean {np.mean(ntok):.0f}), 5 options each")
    conts = [f" The answer is Option {l}" for l in LETTERS]
    ctx, opts = [p for p in prompts for _ in LETTERS], conts * len(prompts)
    lm.score_options(['Warm up.'] * 2, conts[:2], chat=False, cache=False); baseline_score_options(lm, ['Warm up.'] * 2, conts[:2])

    t0 = time.perf_counter(); base = baseline_score_options(lm, ctx, opts, batch_size=5 * a.batch_size); t_base = time.perf_counter() - t0
    t0 = time.perf_counter(); new = lm.score_options(ctx, opts, chat=False, batch_size=a.batch_size, cache=False); t_new = time.perf_counter() - t0

    b, n = np.array(base).reshape(-1, 5), np.array(new).reshape(-1, 5)
    same = int((b.argmax(1) == n.argmax(1)).sum())
    print(f"baseline (one full pass per option): {t_base:.1f} s ({len(opts) / t_base:.2f} options/s)")
    print(f"cogen (shared prompt cache):         {t_new:.1f} s ({len(opts) / t_new:.2f} options/s)")
    print(f"max |log-likelihood difference|: {np.abs(b - n).max():.2e}; same chosen letter: {same}/{len(recs)}")
    print(f"ratio baseline/cogen: {t_base / t_new:.2f}x")


if __name__ == '__main__':
    main()
