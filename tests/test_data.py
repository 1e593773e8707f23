"Failure paths of the verified data cache: bad mirror files, missing mirror files, no network, interrupted downloads, corrupted cache."
import io, os, shutil
from pathlib import Path
from urllib.error import URLError
import pytest
from cogen_lib import data
from cogen_lib.core import sha256_file

AIRPORTS = 'groundcocoa/busiest_airports.csv'
ROOT = Path(__file__).resolve().parents[1]

def _real_mirror() -> Path:
    m = Path(os.environ.get('COGEN_MIRROR') or ROOT.parent/'shared'/'data').expanduser()
    if not m.is_absolute() and not m.is_dir(): m = ROOT/m
    if not (m/AIRPORTS).is_file(): pytest.skip(f"no mirror holding {AIRPORTS}; set COGEN_MIRROR (e.g. ../shared/data)")
    return m.resolve()

def _leftovers(cache: Path) -> list[str]:
    "Every file in the cache except the verification stamps."
    return sorted(str(p.relative_to(cache)) for p in cache.rglob('*') if p.is_file() and '.verified' not in p.parts)

@pytest.fixture
def cache(tmp_path, monkeypatch) -> Path:
    c = tmp_path/'cache'
    monkeypatch.setenv('COGEN_CACHE', str(c))
    return c

@pytest.fixture
def mirror(tmp_path, monkeypatch) -> Path:
    "A mirror holding one real small file."
    src = _real_mirror()/AIRPORTS
    m = tmp_path/'mirror'
    (m/'groundcocoa').mkdir(parents=True)
    shutil.copyfile(src, m/AIRPORTS)
    monkeypatch.setenv('COGEN_MIRROR', str(m))
    return m

class _Resp(io.BytesIO):
    "A fake HTTP response: `body`, or with `exc`, its first `n` bytes and then `exc` (a connection that breaks mid-read)."
    def __init__(self, body: bytes, n: int = 0, exc: BaseException | None = None):
        super().__init__(body[:n] if exc else body); self.exc = exc
    def read(self, size=-1):
        b = super().read(size)
        if not b and self.exc is not None: raise self.exc
        return b

def test_fetch_from_mirror(cache, mirror):
    sf = data.source_file(AIRPORTS)
    p = data.fetch(AIRPORTS)
    assert p == cache/'data'/AIRPORTS and sha256_file(p) == sf.sha256 and data.status(AIRPORTS) == 'verified'
    assert _leftovers(cache) == [f'data/{AIRPORTS}']

def test_corrupt_mirror_file(cache, mirror):
    sf = data.source_file(AIRPORTS)
    b = bytearray((mirror/AIRPORTS).read_bytes()); b[1000] ^= 0x20
    (mirror/AIRPORTS).write_bytes(bytes(b))
    with pytest.raises(data.ChecksumError) as e: data.fetch(AIRPORTS)
    msg = str(e.value)
    assert sf.sha256 in msg and sha256_file(mirror/AIRPORTS) in msg and AIRPORTS in msg and str(mirror/AIRPORTS) in msg
    assert _leftovers(cache) == [] and data.status(AIRPORTS) == 'missing'

def test_missing_mirror_file(cache, mirror):
    (mirror/AIRPORTS).unlink()
    with pytest.raises(data.MirrorMissingError) as e: data.fetch(AIRPORTS)
    msg = str(e.value)
    assert str(mirror.resolve()/AIRPORTS) in msg and 'COGEN_MIRROR' in msg
    assert _leftovers(cache) == []

def test_no_network(cache, monkeypatch):
    monkeypatch.delenv('COGEN_MIRROR', raising=False)
    def no_net(*a, **k): raise URLError('[Errno -3] Temporary failure in name resolution')
    monkeypatch.setattr(data, 'urlopen', no_net)
    sf = data.source_file(AIRPORTS)
    with pytest.raises(data.NetworkError) as e: data.fetch(AIRPORTS)
    assert sf.url in str(e.value) and 'COGEN_MIRROR' in str(e.value)
    assert _leftovers(cache) == []

def test_download_ok(cache, monkeypatch):
    "Without a mirror the file is downloaded from its URL (here a fake response with the real bytes)."
    monkeypatch.delenv('COGEN_MIRROR', raising=False)
    body, seen = (_real_mirror()/AIRPORTS).read_bytes(), []
    def fake(req, timeout=None): seen.append((req.full_url, timeout)); return _Resp(body)
    monkeypatch.setattr(data, 'urlopen', fake)
    p = data.fetch(AIRPORTS, timeout=5)
    assert seen == [(data.source_file(AIRPORTS).url, 5)] and p.read_bytes() == body
    assert _leftovers(cache) == [f'data/{AIRPORTS}']

@pytest.mark.parametrize('exc, raised', [(ConnectionResetError('reset by peer'), data.NetworkError), (KeyboardInterrupt(), KeyboardInterrupt)])
def test_interrupted_download(cache, monkeypatch, exc, raised):
    monkeypatch.delenv('COGEN_MIRROR', raising=False)
    body = (_real_mirror()/AIRPORTS).read_bytes()
    monkeypatch.setattr(data, 'urlopen', lambda req, timeout=None: _Resp(body, n=2000, exc=exc))
    with pytest.raises(raised): data.fetch(AIRPORTS)
    assert _leftovers(cache) == [] and data.status(AIRPORTS) == 'missing'

def test_truncated_download(cache, monkeypatch):
    "A download that ends early without an error fails its checksum and leaves nothing."
    monkeypatch.delenv('COGEN_MIRROR', raising=False)
    body = (_real_mirror()/AIRPORTS).read_bytes()
    monkeypatch.setattr(data, 'urlopen', lambda req, timeout=None: _Resp(body[:3000]))
    with pytest.raises(data.ChecksumError) as e: data.fetch(AIRPORTS)
    assert data.source_file(AIRPORTS).url in str(e.value)
    assert _leftovers(cache) == []

def test_corrupted_cache_refetched(cache, mirror):
    p = data.fetch(AIRPORTS)
    os.utime(p, ns=(p.stat().st_mtime_ns - 10**10,)*2)   # old enough for a verification stamp
    assert data.status(AIRPORTS) == 'verified'
    b = bytearray(p.read_bytes()); b[10] ^= 1
    p.write_bytes(bytes(b))                             # same size, same second
    assert data.status(AIRPORTS) == 'corrupt'
    assert data.list_sources().set_index('source').status['groundcocoa'] == 'corrupt'
    assert sha256_file(data.fetch(AIRPORTS)) == data.source_file(AIRPORTS).sha256
    assert data.status(AIRPORTS) == 'verified' and _leftovers(cache) == [f'data/{AIRPORTS}']

def test_corrupted_cache_same_mtime(cache, mirror):
    "A change that keeps size and mtime but not the inode (replaced file) is still caught."
    p = data.fetch(AIRPORTS)
    old = p.stat().st_mtime_ns - 10**10
    os.utime(p, ns=(old, old)); assert data.status(AIRPORTS) == 'verified'
    b = bytearray(p.read_bytes()); b[10] ^= 1
    q = p.with_name('x'); q.write_bytes(bytes(b)); os.utime(q, ns=(old, old)); os.replace(q, p)
    assert data.status(AIRPORTS) == 'corrupt'

def test_unknown_names(cache):
    with pytest.raises(data.CogenError, match='known sources: cogs, commongen'): data.fetch('nope/x.csv')
    with pytest.raises(data.CogenError, match='known sources'): data.fetch_source('nope')

def test_fetch_source_leaves_every_registered_file(cache, monkeypatch):
    """`cogen data fetch cogs` then `cogen data list`: every registered file of the source is fetched and verified,
    the LICENSE that no loader reads included, so the source is listed `verified` (issue 17: reported `missing`)."""
    from typer.testing import CliRunner
    from cogen_lib.cli import app
    m = _real_mirror()
    want = sorted(f'data/{s.path}' for s in data.source_files('cogs'))
    if missing := [p for p in want if not (m/p.removeprefix('data/')).is_file()]: pytest.skip(f"the mirror lacks {missing}")
    monkeypatch.setenv('COGEN_MIRROR', str(m))
    r = CliRunner().invoke(app, ['data', 'fetch', 'cogs'])
    assert r.exit_code == 0, r.output
    assert 'data/cogs/LICENSE' in want and _leftovers(cache) == want
    assert {data.status(s) for s in data.source_files('cogs')} == {'verified'}
    r = CliRunner().invoke(app, ['data', 'list'])
    assert r.exit_code == 0, r.output
    row = next(l for l in r.output.splitlines() if l.split()[:1] == ['cogs'])
    assert row.split()[3] == 'verified', row
