"""The committed digest of CGGC's full build (data/cggc/build.json) stays what the build gives: it names the build the
current construction and ConceptNet 4 make, it equals the digest of that build when the cache has it, and the
walkthrough reads it on a fresh clone without loading an embedder."""
import json, os, subprocess, sys
from pathlib import Path

import pytest

from cogen_lib.core import CogenError, temp_env
from cogen_lib.cggc.digest import DIGEST, TIMINGS, build_digest, read_digest, walkthrough_digest

ROOT = Path(__file__).resolve().parents[1]


def _full_build_path():
    from cogen_lib.cggc.graphs import build_path
    try: return build_path('conceptnet4')
    except CogenError as e: pytest.skip(f"ConceptNet 4 not reachable (COGEN_MIRROR offline): {e}")


def test_committed_digest_is_small_and_timeless():
    p = ROOT/DIGEST
    assert p.stat().st_size < 100_000, p.stat().st_size                  # a small artifact, not the build
    d = read_digest()
    assert not set(TIMINGS) & set(d['stats']), set(TIMINGS) & set(d['stats'])   # no seconds: the file changes only with the build
    assert (ROOT/'data'/'cggc'/'README.md').read_text().count('CC BY-SA 4.0') >= 1 and 'CC BY-SA 4.0' in d['license']
    assert json.dumps(d, indent=1, ensure_ascii=False) + '\n' == p.read_text(encoding='utf-8')   # as save_digest writes it


def test_committed_digest_names_the_current_build():
    # the build's folder name hashes ConceptNet 4's sha256 and the construction version (graphs.build_path): a new
    # construction or source names another build, and this digest is then stale
    assert read_digest()['build'] == _full_build_path().name, f"{DIGEST} is of another build: rewrite it (python -m cogen_lib.cggc.digest)"


def test_committed_digest_equals_the_cached_build():
    p = _full_build_path()
    if not (p/'stats.json').exists(): pytest.skip(f"the full CGGC build is not in this cache ({p}); `python -m cogen_lib.cggc.digest` builds it (about an hour)")
    assert build_digest(p) == read_digest(), f"{DIGEST} differs from the digest of {p}: rewrite it (python -m cogen_lib.cggc.digest) and commit it"


def test_walkthrough_reads_the_digest_without_an_embedder(tmp_path):
    # a fresh clone's cache: no build; the walkthrough's source is the committed digest, and no model library is loaded
    code = ("import json, sys\nfrom cogen_lib.cggc.digest import walkthrough_digest\nd, where = walkthrough_digest(True)\n"
            "print(json.dumps([where, d['build'], sorted(m for m in sys.modules if m.split('.')[0] in ('torch', 'transformers', 'sentence_transformers'))]))")
    env = {**os.environ, 'COGEN_CACHE': str(tmp_path/'cache'), 'PYTHONPATH': str(ROOT)}
    r = subprocess.run([sys.executable, '-c', code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    if r.returncode and 'COGEN_MIRROR' in r.stderr: pytest.skip('ConceptNet 4 not reachable (COGEN_MIRROR offline)')
    assert r.returncode == 0, r.stderr[-2000:]
    where, build, loaded = json.loads(r.stdout.strip().splitlines()[-1])
    assert where.startswith(f'the committed digest {DIGEST}') and build == read_digest()['build'] and loaded == [], (where, loaded)
    assert not (tmp_path/'cache'/'cggc'/'embeddings').exists()
