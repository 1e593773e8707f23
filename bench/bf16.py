"""bf16 on the CPU: float32 against bfloat16 for cogen's four CPU workloads, one torch thread, in one process.

Run from the repository root:
  COGEN_MIRROR=../shared/data .venv/bin/python bench/bf16.py [--quick] [--threads 1] [--model smollm2-135m]
      [--lora-batch 1] [--lora-tokens 16] [--lora-steps 2] [--lora-arms fp32,autocast,bf16] [--gen-prompts 4]
      [--gen-tokens 16] [--score-questions 3] [--recogs-rows 160] [--recogs-epochs 2]
      [--only lora,generate,score,recogs]
(`--quick`: every workload at its smallest, LoRA without the bf16-weights arm: a smoke check, for trying the script.)
The defaults are small because on a CPU without bf16 instructions every bf16 arm is several times slower than float32
(the times of a run are rows of measured/measurements.csv); on a CPU with bf16 instructions (AVX-512 BF16, AMX), raise
them (e.g. --lora-batch 8 --lora-tokens 128 --lora-steps 5 --gen-prompts 32 --gen-tokens 64 --score-questions 40
--recogs-rows 3000, as the rows of an AVX-512 BF16 EPYC did).

The arms of each workload, all in this process on the same data and seeds:
  fp32      float32 weights and compute: what the trainers and `load_lm` use today (the baseline);
  autocast  the same float32 weights under `torch.autocast('cpu', dtype=torch.bfloat16)` (matmuls and attention in
            bf16, float32 master weights and optimizer state);
  bf16      bf16 weights (`load_lm(..., dtype='bfloat16')`; for LoRA the frozen base in bf16, the adapters in float32,
            peft's default); not for the ReCOGS trainer, which trains every weight from scratch.
Workloads:
  lora      LoRA fine-tuning (r=8, alpha 16, AdamW lr 1e-3) of the model on packed COGS text, `--lora-steps` steps of
            `--lora-batch` x `--lora-tokens` tokens (forward, backward, optimizer step); the arms step in turn. Quality:
            the loss at each step against fp32's, beside the seed spread (fp32 with LoRA seed 1 against seed 0).
  generate  `HFLM.generate`, greedy, `--gen-prompts` prompts of bench/generation.py in one batch, `--gen-tokens` new
            tokens. Quality: outputs identical to fp32's, and the mean share of fp32's text they start with.
  score     `HFLM.score_options`: `--score-questions` questions "which word is the verb" over COGS sentences, each
            word of the sentence an option. Quality: same argmax as fp32, largest |log-likelihood difference|.
  recogs    the ReCOGS trainer (`cogen_lib.recogs.seq2seq.init_training` + `train_epoch`, Transformer, hidden 128,
            batch 32, lr 5e-4) on a seeded sample of `--recogs-rows` COGS train rows, seeds 0 and 1; autocast by
            wrapping the model's forward (the loss in float32, as `train_epoch` does on CUDA). The arms' epochs
            alternate, each arm with its own torch RNG state. Quality: the training loss after each epoch; the seed
            spread is |fp32 seed 1 - fp32 seed 0|.
Printed per workload: seconds of each arm (model loading excluded), the speed-up fp32 seconds / arm seconds (> 1: bf16
faster), the quality figures; first the CPU (`cogen_lib.results._device`) and its bf16 flags (`cpu_bf16_flags`).
LoRA steps and ReCOGS epochs alternate the arms, so that load from other processes on a shared machine hits them alike;
generation and scoring run each arm once, in turn (fp32 first).
"""
import argparse, contextlib, dataclasses, os, sys, time
from pathlib import Path

os.environ.setdefault('HF_HUB_OFFLINE', '1')
os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
import torch

from cogen_lib.core import make_rng
from cogen_lib.data import load_cogs
from cogen_lib.models import converted_dir, load_lm, model_spec
from cogen_lib.recogs import seq2seq as S
from cogen_lib.results import _device, cpu_bf16_flags
from generation import make_prompts

ARMS = ('fp32', 'autocast', 'bf16')


def amp(arm: str):
    "The context an arm computes in: bf16 autocast for 'autocast', nothing otherwise."
    return torch.autocast('cpu', dtype=torch.bfloat16) if arm == 'autocast' else contextlib.nullcontext()


def timed(fn):
    "`fn()` and its wall seconds."
    t0 = time.perf_counter(); out = fn()
    return out, time.perf_counter() - t0


def speedups(secs: dict) -> str:
    "'autocast 0.17x, bf16 0.20x': fp32 seconds over each other arm's."
    return ', '.join(f"{k} {secs['fp32'] / v:.2f}x" for k, v in secs.items() if k != 'fp32')


def cogs_text(n: int, seed: int) -> list[str]:
    "n seeded COGS train rows as 'sentence\\nlogical form' texts."
    train = load_cogs('train')
    rows = np.sort(make_rng(seed).choice(len(train), n, replace=False))
    return [f"{s}\n{lf}" for s, lf in zip(train.sentence.iloc[rows], train.lf.iloc[rows])]


# --- (a) LoRA fine-tuning -------------------------------------------------------------------------------------------
def lora_model(path: Path, dtype: torch.dtype, seed: int):
    "The causal LM at `path` in `dtype` with seeded LoRA adapters (r=8, alpha 16, no dropout) and AdamW on them."
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM
    base = AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
    torch.manual_seed(seed)
    model = get_peft_model(base, LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, task_type='CAUSAL_LM')).train()
    return model, torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)


def lora_step(model, opt, ids: torch.Tensor, arm: str) -> float:
    "One LoRA step on the packed batch `ids` (B, T): next-token loss (float32) over every position; returns the loss."
    with amp(arm):
        logits = model(input_ids=ids).logits[:, :-1]
    loss = torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), ids[:, 1:].reshape(-1))
    opt.zero_grad(set_to_none=True); loss.backward(); opt.step()
    return loss.item()


def bench_lora(a, path: Path, tok) -> dict:
    ids = tok('\n\n'.join(cogs_text(40 * a.lora_batch * a.lora_steps, 1))).input_ids
    need = a.lora_steps * a.lora_batch * a.lora_tokens
    if len(ids) < need: raise SystemExit(f"lora: {len(ids)} tokens of text, {need} needed")
    batches = torch.tensor(ids[:need]).view(a.lora_steps, a.lora_batch, a.lora_tokens)
    arms = [x for x in ARMS if x in a.lora_arms.split(',')]
    if arms[:1] != ['fp32']: raise SystemExit(f"--lora-arms {a.lora_arms!r}: fp32 (the baseline) and any of {ARMS[1:]}")
    runs = {k: lora_model(path, torch.bfloat16 if k == 'bf16' else torch.float32, 0) for k in arms}
    runs['fp32 seed 1'] = lora_model(path, torch.float32, 1)
    for name, (m, _) in runs.items():                                     # warm-up: one small forward and backward
        with amp(name): m(input_ids=batches[0, :1, :2]).logits.float().sum().backward()
        m.zero_grad(set_to_none=True)
    secs, loss = {k: 0.0 for k in runs}, {k: [] for k in runs}
    for s in range(a.lora_steps):
        for name, (m, opt) in runs.items():
            l, t = timed(lambda: lora_step(m, opt, batches[s], name))
            loss[name].append(l); secs[name] += t
        print(f"  lora step {s + 1}: " + ', '.join(f"{k} {loss[k][-1]:.4f} ({secs[k]:.1f} s so far)" for k in runs),
              flush=True)
    spread = max(abs(x - y) for x, y in zip(loss['fp32 seed 1'], loss['fp32']))
    q = {k: max(abs(x - y) for x, y in zip(loss[k], loss['fp32'])) for k in arms[1:]}
    secs = {k: secs[k] for k in arms}
    print(f"lora ({a.lora_steps} steps of {a.lora_batch} x {a.lora_tokens} tokens): "
          + ', '.join(f"{k} {v:.1f} s" for k, v in secs.items()) + f"; speed-up {speedups(secs)}")
    print(f"  loss after {a.lora_steps} steps: " + ', '.join(f"{k} {loss[k][-1]:.4f}" for k in loss)
          + f"; max |loss - fp32's| over the steps: " + ', '.join(f"{k} {v:.4f}" for k, v in q.items())
          + f"; seed spread (fp32 seed 1 vs 0) {spread:.4f}")
    del runs
    return dict(secs=secs, loss=loss, diff=q, spread=spread)


# --- (b) generation and (c) option scoring ---------------------------------------------------------------------------
def lead_share(a: str, b: str) -> float:
    "The share of `b` that `a` starts with (1.0: a starts with all of b)."
    n = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return n / max(1, len(b))


def bench_generate(a, lms: dict) -> dict:
    prompts = make_prompts(a.gen_prompts)
    for arm, lm in lms.items():                                           # warm-up
        with amp(arm): lm.generate(prompts[:1], max_new_tokens=2, cache=False)
    secs, out = {}, {}
    for arm, lm in lms.items():
        with amp(arm):
            g, secs[arm] = timed(lambda: lm.generate(prompts, max_new_tokens=a.gen_tokens, batch_size=len(prompts),
                                                     cache=False))
        out[arm] = [x.text for x in g]
    same = {k: sum(x == y for x, y in zip(out[k], out['fp32'])) for k in ('autocast', 'bf16')}
    share = {k: float(np.mean([lead_share(x, y) for x, y in zip(out[k], out['fp32'])])) for k in ('autocast', 'bf16')}
    print(f"generate ({len(prompts)} prompts, greedy, {a.gen_tokens} new tokens, one batch): "
          + ', '.join(f"{k} {v:.1f} s" for k, v in secs.items()) + f"; speed-up {speedups(secs)}")
    print("  outputs identical to fp32's: "
          + ', '.join(f"{k} {same[k]}/{len(prompts)} (mean leading share {share[k]:.2f})" for k in same))
    return dict(secs=secs, same=same, share=share, n=len(prompts))


def bench_score(a, lms: dict) -> dict:
    sents = [s.rstrip(' .') for s in load_cogs('train').sentence.iloc[:200] if 5 <= len(s.split()) <= 8]
    sents = sents[:a.score_questions]
    ctx, opts, qs = [], [], []
    for s in sents:
        words = s.split()
        ctx += [f"Sentence: {s}.\nQuestion: which word of the sentence is its verb?\nAnswer:"] * len(words)
        opts += [f" {w}" for w in words]; qs.append(len(words))
    for arm, lm in lms.items():                                           # warm-up
        with amp(arm): lm.score_options(ctx[:2], opts[:2], cache=False)
    secs, ll = {}, {}
    for arm, lm in lms.items():
        with amp(arm):
            ll[arm], secs[arm] = timed(lambda: np.array(lm.score_options(ctx, opts, batch_size=8, cache=False)))
    cut = np.cumsum(qs)[:-1]
    pick = {k: [int(np.argmax(x)) for x in np.split(v, cut)] for k, v in ll.items()}
    same = {k: sum(x == y for x, y in zip(pick[k], pick['fp32'])) for k in ('autocast', 'bf16')}
    diff = {k: float(np.abs(ll[k] - ll['fp32']).max()) for k in ('autocast', 'bf16')}
    print(f"score ({len(sents)} questions, {len(opts)} options): "
          + ', '.join(f"{k} {v:.1f} s" for k, v in secs.items()) + f"; speed-up {speedups(secs)}")
    print("  same choice as fp32: "
          + ', '.join(f"{k} {same[k]}/{len(sents)} (max |log-likelihood difference| {diff[k]:.3f})" for k in same))
    return dict(secs=secs, same=same, diff=diff, n=len(sents))


# --- (d) the ReCOGS trainer -------------------------------------------------------------------------------------------
class Alternating:
    "Runs `step()` with its own torch RNG state (the global one when created), as if it ran alone."
    def __init__(self): self.rng = torch.get_rng_state()
    def __call__(self, step):
        torch.set_rng_state(self.rng)
        try: return step()
        finally: self.rng = torch.get_rng_state()


def bench_recogs(a) -> dict:
    train = load_cogs('train')
    rows = np.sort(make_rng(0).choice(len(train), a.recogs_rows, replace=False))
    pairs = list(zip(train.sentence.iloc[rows], train.lf.iloc[rows]))
    runs = {}
    for seed in (0, 1):
        cfg = S.Seq2SeqConfig('transformer', hidden=128, batch_size=32, lr=5e-4, epochs=a.recogs_epochs, seed=seed)
        for arm in ('fp32', 'autocast'):
            st = S.init_training(cfg, pairs, 'cpu')
            if arm == 'autocast': st.model.forward = torch.autocast('cpu', dtype=torch.bfloat16)(st.model.forward)
            runs[(arm, seed)] = (st, Alternating())
    for e in range(a.recogs_epochs):
        for (arm, seed), (st, alt) in runs.items(): alt(lambda: S.train_epoch(st))
        print(f"  recogs epoch {e + 1}: " + ', '.join(f"{arm} seed {seed} loss {st.history[-1]['loss']:.4f} "
                                                      f"({st.history[-1]['seconds']:.1f} s)"
                                                      for (arm, seed), (st, _) in runs.items()), flush=True)
    hist = {k: st.history for k, (st, _) in runs.items()}
    secs = {arm: sum(h['seconds'] for s in (0, 1) for h in hist[(arm, s)]) for arm in ('fp32', 'autocast')}
    loss = {k: h[-1]['loss'] for k, h in hist.items()}
    spread = abs(loss[('fp32', 1)] - loss[('fp32', 0)])
    print(f"recogs (Transformer hidden {cfg.hidden}, {len(pairs)} rows, {a.recogs_epochs} epochs, seeds 0 and 1): "
          + ', '.join(f"{k} {v:.1f} s" for k, v in secs.items()) + f"; speed-up {speedups(secs)}")
    print(f"  loss after {a.recogs_epochs} epochs: "
          + ', '.join(f"{arm} seed {s} {v:.4f}" for (arm, s), v in loss.items()) + f"; seed spread (fp32) {spread:.4f}")
    return dict(secs=secs, loss=loss, spread=spread)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--quick', action='store_true', help='every workload at its smallest (a smoke check)')
    ap.add_argument('--threads', type=int, default=1, help='torch CPU threads (the cpu profiles use 1)')
    ap.add_argument('--model', default='smollm2-135m')
    ap.add_argument('--lora-batch', type=int, default=1)
    ap.add_argument('--lora-tokens', type=int, default=16)
    ap.add_argument('--lora-steps', type=int, default=2)
    ap.add_argument('--lora-arms', default='fp32,autocast,bf16', help='comma-separated arms of the LoRA workload')
    ap.add_argument('--gen-prompts', type=int, default=4)
    ap.add_argument('--gen-tokens', type=int, default=16)
    ap.add_argument('--score-questions', type=int, default=3)
    ap.add_argument('--recogs-rows', type=int, default=160)
    ap.add_argument('--recogs-epochs', type=int, default=2)
    ap.add_argument('--only', default='lora,generate,score,recogs', help='comma-separated workloads to run')
    a = ap.parse_args(argv)
    if a.quick:
        a.lora_batch, a.lora_tokens, a.lora_steps, a.lora_arms = 1, 8, 1, 'fp32,autocast'
        a.gen_prompts, a.gen_tokens, a.score_questions, a.recogs_rows, a.recogs_epochs = 1, 2, 1, 16, 1
    torch.set_num_threads(a.threads)
    only = set(a.only.split(','))
    print(f"device: {_device()}; bf16 flags: {' '.join(cpu_bf16_flags()) or 'none'}; torch {torch.__version__} "
          f"(CPU capability {torch.backends.cpu.get_cpu_capability()}, "
          f"oneDNN bf16 {torch.ops.mkldnn._is_mkldnn_bf16_supported()}), "
          f"{torch.get_num_threads()} thread(s)", flush=True)
    t0 = time.perf_counter()
    if 'lora' in only:
        from transformers import AutoTokenizer
        spec = model_spec(a.model)
        path = converted_dir(spec) if spec.gguf else spec.path
        bench_lora(a, path, AutoTokenizer.from_pretrained(path))
    if only & {'generate', 'score'}:
        fp32 = load_lm(a.model)
        lms = {'fp32': fp32, 'autocast': fp32, 'bf16': load_lm(a.model, dtype='bfloat16')}
        if 'generate' in only: bench_generate(a, lms)
        if 'score' in only: bench_score(a, lms)
    if 'recogs' in only: bench_recogs(a)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == '__main__':
    main()
