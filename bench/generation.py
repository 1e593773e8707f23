"""Throughput of batched vs one-at-a-time generation with `cogen_lib.models`, and a cached rerun.

Run from the repository root:  .venv/bin/python bench/generation.py [--n 32] [--max-new-tokens 32] [--batch-size 16]

Both timed runs bypass the on-disk call cache state of the user: the one-at-a-time loop runs with the cache off,
the batched run writes to a fresh temporary call cache, which the rerun then reads (it should make 0 model calls).
Tokens/s counts generated tokens (up to and including each row's end-of-sequence token) over model time.
"""
import argparse, os, sys, tempfile, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cogen_lib.models import CallCache, load_lm

SUBJECTS = ['A cat', 'The girl', 'Emma', 'A hedgehog', 'The teacher', 'Liam', 'A baby', 'The sailor']
VERBS = ['rolled a ball to the boy', 'painted the cake', 'was given a donut by the king', 'slept in the house',
         'noticed that a dog ate the cookie', 'sold the bike to a friend']
TASKS = ['Rewrite this sentence in the passive voice: {s}.', 'Translate into French: {s}.',
         'Who did what in this sentence? {s}.', 'Continue the story in one sentence: {s}.']

def make_prompts(n: int) -> list[str]:
    "n instructions over COGS-like sentences (varied lengths), deterministic."
    out = []
    for i in range(n):
        s = f"{SUBJECTS[i % len(SUBJECTS)]} {VERBS[(i * 5) % len(VERBS)]}"
        out.append(TASKS[i % len(TASKS)].format(s=s))
    return out

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--model', default='smollm2-135m')
    ap.add_argument('--n', type=int, default=32, help='number of prompts')
    ap.add_argument('--max-new-tokens', type=int, default=32)
    ap.add_argument('--batch-size', type=int, default=16)
    a = ap.parse_args(argv)

    t0 = time.perf_counter()
    lm = load_lm(a.model)
    print(f"model: {lm}  (loaded in {time.perf_counter() - t0:.1f} s)")
    prompts = make_prompts(a.n)
    lm.generate(prompts[:2], max_new_tokens=4, batch_size=2, cache=False)   # warm-up

    t0 = time.perf_counter()
    single = [lm.generate([p], max_new_tokens=a.max_new_tokens, cache=False)[0] for p in prompts]
    t_single = time.perf_counter() - t0
    tok_single = sum(g.n_new_tokens for g in single)

    with tempfile.TemporaryDirectory() as d:
        cc = CallCache(Path(d)/'calls.sqlite')
        t0 = time.perf_counter()
        batched = lm.generate(prompts, max_new_tokens=a.max_new_tokens, batch_size=a.batch_size, cache=cc, desc='batched')
        t_batched = time.perf_counter() - t0
        tok_batched = sum(g.n_new_tokens for g in batched)
        rerun = lm.generate(prompts, max_new_tokens=a.max_new_tokens, batch_size=a.batch_size, cache=cc, desc='rerun')
        rerun_stats = dict(lm.last_stats)

    same = sum(s.text == b.text for s, b in zip(single, batched))
    r_single, r_batched = tok_single / t_single, tok_batched / t_batched
    print(f"prompts: {a.n}, max_new_tokens: {a.max_new_tokens}, batch_size: {a.batch_size}, torch threads: {__import__('torch').get_num_threads()}")
    print(f"one at a time: {tok_single} tokens in {t_single:.1f} s = {r_single:.1f} tokens/s")
    print(f"batched:       {tok_batched} tokens in {t_batched:.1f} s = {r_batched:.1f} tokens/s")
    print(f"speed-up: {r_batched / r_single:.2f}x tokens/s ({t_single / t_batched:.2f}x wall time)")
    print(f"identical outputs batched vs alone: {same}/{a.n}; errors: {sum(not g.ok for g in batched)}")
    print(f"rerun through the cache: model calls: {rerun_stats['model_calls']}, cache hits: {rerun_stats['cache_hits']}, "
          f"all cached: {all(g.cached for g in rerun)}, same texts: {[g.text for g in rerun] == [g.text for g in batched]}")

if __name__ == '__main__': main()
