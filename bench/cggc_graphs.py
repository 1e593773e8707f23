"""Milliseconds per sentence of CGGC's reasoning-graph search vs a plain full-graph Dijkstra, on the same sentences.

Run from the repository root:  COGEN_MIRROR=../shared/data .venv/bin/python bench/cggc_graphs.py [--sets 30] [--sentences N]
    [--plain-sentences N] [--workers 2] [--kg conceptnet4 | --kg conceptnet5 --kg-path P] [--only-embedded]

Both sides get the same inputs: the ConceptNet triples that can lie on a path between CommonGen concepts (exact leaf
pruning, `cggc.kg.prune_triples`), their `minilm-l6` embeddings from the triple store, and the embeddings of the
reference sentences of the first `--sets` concept sets (the first `--sentences` of them when given). Embedding is a one-time step outside both timings.
The plain search takes seconds per sentence, so it runs on the first `--plain-sentences` of them (0: all), and the
cogen search, timed on all of them, is compared with it on those. The cogen search is compiled (numba) before it is
timed: compiling is a one-time cost per installation (numba caches it on disk).

* plain (`cggc.graphs.plain_graph`): per sentence, the weights of all triples (`triple_weights`), the lowest per node
  pair, and networkx's `single_source_dijkstra` over the whole graph from each concept (no bound), one process;
* cogen (`cggc.graphs.run_graphs`): per sentence, a bidirectional Dijkstra between every concept pair over one shared
  search per concept, weighing a pair only when a search reaches it (numba, `cggc.graphs.sentence_graph`), in one
  process and in `--workers` processes. Both sides compute a triple's weight with the same function (`_weight`), so
  their weights are bit-identical.

It checks that both give identical graphs (nodes, edges with relation and direction, label, structure, missing pairs)
and prints ms/sentence for each and the ratio (goal: cogen <= 10 ms per sentence).

`--only-embedded` restricts the graph to the triples the store has embedded so far (a real but partial ConceptNet
subgraph), for measuring before the one-time full embedding has finished; the triple count is printed.
"""
import argparse, os, sys, time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import numpy as np

from cogen_lib.cggc.kg import load_kg, prune_triples, EmbeddingStore, verbalise
from cogen_lib.cggc.graphs import commongen_sentences, build_index, run_graphs, plain_graph, nx_graph, sentence_graph


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--sets', type=int, default=30)
    ap.add_argument('--sentences', type=int, default=0, help='only the first N sentences of those sets (0: all)')
    ap.add_argument('--plain-sentences', type=int, default=0, help='run the plain search on the first N sentences only (0: all)')
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--kg', default='conceptnet4')
    ap.add_argument('--kg-path', default=None)
    ap.add_argument('--only-embedded', action='store_true')
    a = ap.parse_args()
    all_sents = commongen_sentences()
    sents = commongen_sentences(a.sets)
    if a.sentences: sents = sents.iloc[:a.sentences].reset_index(drop=True)
    triples = load_kg(a.kg, a.kg_path)
    concepts = sorted({c for cs in all_sents.concepts for c in cs})
    sub = prune_triples(triples, concepts)
    store = EmbeddingStore()
    if a.only_embedded:
        ix_, done = store.index(), store.done()
        texts = [verbalise(h, r, t) for h, r, t in zip(sub['head'], sub['relation'], sub['tail'])]
        keep = np.array([(i := ix_.get(s)) is not None and done[i] for s in texts], bool)
        sub = prune_triples(sub[keep].reset_index(drop=True), concepts)
        print(f"--only-embedded: {len(sub):,} of the {int(len(keep)):,} pruned triples are embedded and kept (a partial graph)")
    ix = build_index(sub)
    rows, srows = store.ensure(ix.texts()), store.ensure(sents.target.tolist())
    M = store.matrix()
    ix.E, S = np.ascontiguousarray(M[rows]), np.ascontiguousarray(M[srows])
    cls = sents.concepts.tolist()
    print(f"graph: {ix.n_triples:,} triples, {len(ix.starts):,} node pairs, {ix.n_nodes:,} nodes ({a.kg}); {len(S)} sentences of {a.sets} concept sets")

    sentence_graph(ix, S[0], cls[0])                      # compile (or load numba's on-disk cache) before timing
    t, c = time.perf_counter(), time.process_time()
    fast1 = run_graphs(ix, S, cls, workers=1, progress=False)
    t_fast1, c_fast1 = time.perf_counter() - t, time.process_time() - c
    t = time.perf_counter()
    fast = run_graphs(ix, S, cls, workers=a.workers, progress=False)
    t_fast = time.perf_counter() - t
    m = a.plain_sentences or len(S)
    G = nx_graph(ix)
    t = time.perf_counter()
    plain = [plain_graph(ix, S[i], cls[i], G) for i in range(m)]
    t_plain = time.perf_counter() - t

    same = sum(p == f for p, f in zip(plain, fast))
    assert fast == fast1, "1 and N workers disagree"
    n = len(S)
    print(f"plain full-graph networkx Dijkstra : {1000 * t_plain / m:8.2f} ms/sentence ({m} sentences)")
    print(f"cogen, 1 process                   : {1000 * t_fast1 / n:8.2f} ms/sentence ({n} sentences; CPU time {1000 * c_fast1 / n:.2f} ms)")
    print(f"cogen, {a.workers} processes                 : {1000 * t_fast / n:8.2f} ms/sentence ({n} sentences, wall)")
    print(f"identical graphs: {same}/{m}")
    print(f"ratio plain / cogen ({a.workers} processes): {(t_plain / m) / (t_fast / n):.1f}x; plain / cogen (1 process): {(t_plain / m) / (t_fast1 / n):.1f}x")
    print(f"load average (1, 5, 15 min) at the end: {os.getloadavg()} on {os.cpu_count()} cores")
    if same != m:
        for p, f in zip(plain, fast):
            if p != f: print('first difference:', p, f, sep='\n'); break
        sys.exit(1)


if __name__ == '__main__':
    main()
