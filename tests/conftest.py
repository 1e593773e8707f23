import os, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

@pytest.fixture(scope='session')
def root() -> Path:
    return ROOT

def pytest_configure(config):
    # Tests read the real data from the mirror when one is configured; model caches stay in the user's cache.
    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    os.environ.setdefault('TRANSFORMERS_OFFLINE', '1')
    config.addinivalue_line('markers', 'xdist_group(name): run with the other tests of group `name`, on one worker, in order')


# `make test` runs two workers (`pytest -n 2 --dist loadgroup`). Most tests write only under their `tmp_path`, or into
# caches that are safe to share between processes (data files are fetched to a temporary name and renamed; the
# model-call cache is sqlite in WAL mode; the embedding store takes a file lock). Two kinds of test share something that
# is not, and each kind runs as one group, on one worker, one test at a time:
#   'shared'  the project's own runs/ results/ figures/ (test_site compares `git status` before and after a smoke run
#             into the project), and the GGUF models converted into the cache on first use (models.converted_dir
#             assembles the GGUF to one fixed path and deletes it afterwards, with no lock), and the seq2seq
#             checkpoints of the cache (written through one fixed temporary name): grids, LM evaluations, and every
#             notebook that loads a model, trains one, or runs a grid or a summary;
#   'cggc'    CGGC's triple cache and graph builds (graphs.cached_build writes into a fixed folder until stats.json
#             exists, with no lock) and its test embedding store.
SHARED_FILES = {'test_models.py', 'test_cocoa_evaluate.py', 'test_backend_registry.py', 'test_openai_server.py',
                'test_quickstart.py', 'test_site.py', 'test_course.py', 'test_interrupt.py', 'test_recogs_summary.py',
                'test_run_model.py', 'test_store.py', 'test_benchmark_export.py', 'test_quickstart_summary.py'}
_SHARED_NB = re.compile(r'load_lm|load_model|load_embedder|smollm|gemma|evaluate_file|evaluate_records|finetune|run_grid|'
                        r'cogen run|Recorder\(|save_figure|save_table|figures_dir|results_dir|build_site|checkpoint')


def xdist_group_of(path: Path, nb: Path | None = None) -> str | None:
    "The group of a test file, or of the notebook `nb` that tests/test_notebooks.py executes; None: runs anywhere."
    if nb is not None:
        rel = nb.relative_to(ROOT/'nbs').as_posix()
        if rel.startswith('cggc/') or rel.startswith('course/05_cggc'): return 'cggc'
        return 'shared' if _SHARED_NB.search(nb.read_text(encoding='utf-8')) else None
    if path.name.startswith('test_cggc_'): return 'cggc'
    return 'shared' if path.name in SHARED_FILES else None


@pytest.hookimpl(tryfirst=True)      # before xdist's own hook, which reads the marks to schedule --dist loadgroup
def pytest_collection_modifyitems(config, items):
    for item in items:
        path = Path(str(item.fspath))
        nb = item.callspec.params.get('nb') if path.name == 'test_notebooks.py' and hasattr(item, 'callspec') else None
        group = xdist_group_of(path, Path(nb) if nb is not None else None)
        if group and not item.get_closest_marker('xdist_group'): item.add_marker(pytest.mark.xdist_group(group))
