"""TEST-ONLY transcription of the reference PARENT implementation, NOT part of cogen_lib.

Source: google-research/language, language/table_text_eval/table_text_eval.py (functions `_entailment_probability`,
`_mention_probability`, `_len_lcs`, `_lcs`, `_ngrams`, `_ngram_counts`, `parent`), Copyright 2018 The Google AI
Language Team Authors, Apache License 2.0 (http://www.apache.org/licenses/LICENSE-2.0). Transcribed with the logic
unchanged (absl flags and file readers left out) so that tests/test_spor_parent.py can check that
`cogen_lib.spor.metrics.parent` gives the same numbers. Do not import it from the library.
"""
import collections
import math


def _entailment_probability(ngram, table, smoothing=0.0, stopwords=None):
    if len(table[0]) == 2:
        table_values = set([tok for _, value in table for tok in value])
    else:
        table_values = set([tok for head, _, tail in table for tok in head + tail])
    overlap = 0
    for token in ngram:
        if stopwords is not None and token in stopwords:
            overlap += 1
            continue
        if token in table_values:
            overlap += 1
    return float(overlap + smoothing) / float(len(ngram) + smoothing)


def _mention_probability(table_entry, sentence, smoothing=0.0):
    if len(table_entry) == 2:
        value = table_entry[1]
    else:
        value = table_entry[0] + table_entry[2]
    overlap = _len_lcs(value, sentence)
    return float(overlap + smoothing) / float(len(value) + smoothing)


def _len_lcs(x, y):
    table = _lcs(x, y)
    n, m = len(x), len(y)
    return table[n, m]


def _lcs(x, y):
    n, m = len(x), len(y)
    table = dict()
    for i in range(n + 1):
        for j in range(m + 1):
            if i == 0 or j == 0:
                table[i, j] = 0
            elif x[i - 1] == y[j - 1]:
                table[i, j] = table[i - 1, j - 1] + 1
            else:
                table[i, j] = max(table[i - 1, j], table[i, j - 1])
    return table


def _ngrams(sequence, order):
    assert order >= 1
    for n in range(order, len(sequence) + 1):
        yield tuple(sequence[n - order: n])


def _ngram_counts(sequence, order):
    if len(sequence) < order:
        return collections.Counter()
    return collections.Counter(_ngrams(sequence, order))


def parent(predictions, references, tables, lambda_weight=0.5, smoothing=0.00001, max_order=4,
           entailment_fn=_entailment_probability, mention_fn=_mention_probability):
    precisions, recalls, all_f_scores = [], [], []
    reference_recalls, table_recalls = [], []
    for prediction, list_of_references, table in zip(predictions, references, tables):
        c_prec, c_rec, c_f = [], [], []
        ref_rec, table_rec = [], []
        for reference in list_of_references:
            ngram_prec, ngram_rec = [], []
            for order in range(1, max_order + 1):
                pred_ngram_counts = _ngram_counts(prediction, order)
                pred_ngram_weights = {ngram: entailment_fn(ngram, table) for ngram in pred_ngram_counts}
                ref_ngram_counts = _ngram_counts(reference, order)
                ref_ngram_weights = {ngram: entailment_fn(ngram, table) for ngram in ref_ngram_counts}
                numerator, denominator = 0., 0.
                for ngram, count in pred_ngram_counts.items():
                    denominator += count
                    prob_ngram_in_ref = min(1., float(ref_ngram_counts.get(ngram, 0) / count))
                    numerator += count * (prob_ngram_in_ref + (1. - prob_ngram_in_ref) * pred_ngram_weights[ngram])
                if denominator == 0.:
                    ngram_prec.append(0.0)
                else:
                    ngram_prec.append(numerator / denominator)
                numerator, denominator = 0., 0.
                for ngram, count in ref_ngram_counts.items():
                    prob_ngram_in_pred = min(1., float(pred_ngram_counts.get(ngram, 0) / count))
                    denominator += count * ref_ngram_weights[ngram]
                    numerator += count * ref_ngram_weights[ngram] * prob_ngram_in_pred
                if denominator == 0.:
                    ngram_rec.append(1.0)
                else:
                    ngram_rec.append(numerator / denominator)
            table_mention_probs = [mention_fn(entry, prediction) for entry in table]
            table_rec.append(sum(table_mention_probs) / len(table))
            for order in range(1, max_order):
                if ngram_prec[order] == 0.:
                    ngram_prec[order] = smoothing
                if ngram_rec[order] == 0.:
                    ngram_rec[order] = smoothing
            w = 1. / max_order
            if any(prec == 0. for prec in ngram_prec):
                c_prec.append(0.)
            else:
                sp = (w * math.log(p_i) for p_i in ngram_prec)
                c_prec.append(math.exp(math.fsum(sp)))
            if any(rec == 0. for rec in ngram_rec):
                ref_rec.append(smoothing)
            else:
                sr = [w * math.log(r_i) for r_i in ngram_rec]
                ref_rec.append(math.exp(math.fsum(sr)))
            if table_rec[-1] == 0.:
                table_rec[-1] = smoothing
            if ref_rec[-1] == 0. or table_rec[-1] == 0.:
                c_rec.append(0.)
            else:
                c_rec.append(math.exp((1. - lambda_weight) * math.log(ref_rec[-1]) + (lambda_weight) * math.log(table_rec[-1])))
            c_f.append((2. * c_prec[-1] * c_rec[-1]) / (c_prec[-1] + c_rec[-1] + 1e-8))
        max_i = max(enumerate(c_f), key=lambda x: x[1])[0]
        precisions.append(c_prec[max_i])
        recalls.append(c_rec[max_i])
        all_f_scores.append(c_f[max_i])
        reference_recalls.append(ref_rec[max_i])
        table_recalls.append(table_rec[max_i])
    avg_precision = sum(precisions) / len(precisions)
    avg_recall = sum(recalls) / len(recalls)
    avg_f_score = sum(all_f_scores) / len(all_f_scores)
    return avg_precision, avg_recall, avg_f_score, all_f_scores
