"GroundCocoa fine-tuning (our protocol): training questions never share a source query with the test set; the run's parameter is checked."
import pytest
from cogen_lib.core import CogenError
from cogen_lib.cocoa.generate import generate, CONFIGS
from cogen_lib.cocoa.records import select_questions
from cogen_lib.cocoa.finetune import (TRAIN_SEED_OFFSET, source_query, training_questions, training_example, check_finetune_questions, finetune_key,
                                      LoraSettings)


@pytest.fixture(scope='module')
def long_test():
    "The `long` profile's test set, as nbs/cocoa/eval.ipynb builds it: per_config 50, seed 0, every question (limit 0)."
    return select_questions(generate(50, seed=0), 0)


def test_training_source_queries_are_disjoint_from_the_long_test_set(long_test):
    tr = training_questions(60, long_test)
    assert len(tr) == 60 and len(long_test) == 300
    assert not {source_query(r) for r in tr} & {source_query(r) for r in long_test}
    assert not {r['id'] for r in tr} & {r['id'] for r in long_test}
    assert {tuple(r['config']) for r in tr} == set(CONFIGS)


def test_the_filter_is_what_keeps_shared_queries_out(long_test):
    # a test set that holds some of the training questions: a second draw must avoid exactly those queries
    first = training_questions(30, long_test)
    held = long_test + first[:10]
    again = training_questions(30, held)
    assert not {source_query(r) for r in again} & {source_query(r) for r in held}
    unfiltered = {source_query(r) for r in generate(5, seed=TRAIN_SEED_OFFSET)}                  # the same seed, no filter
    assert {source_query(r) for r in first[:10]} & unfiltered                                  # the filter had them to remove


def test_training_questions_are_deterministic(long_test):
    a, b = training_questions(12, long_test), training_questions(12, long_test)
    assert [r['id'] for r in a] == [r['id'] for r in b]
    assert finetune_key('w', a, LoraSettings()) == finetune_key('w', b, LoraSettings())
    assert training_example(a[0])[1] == f" Option {a[0]['answer']}"


@pytest.mark.parametrize('bad', [-1, 1.5, '3', True, None])
def test_finetune_questions_must_be_a_non_negative_int(bad):
    with pytest.raises(CogenError, match='finetune_questions must be an int >= 0'): check_finetune_questions(bad)
