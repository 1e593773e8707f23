"""A full or read-only disk under the rows or the model-call cache: one clear error naming the path, no truncated file
or corrupt cache entry, and a rerun with space completes. The disks are small tmpfs mounts the test makes (root)."""
import os, sqlite3, subprocess
from pathlib import Path
import pytest
from cogen_lib.core import CannotWrite, CogenError, atomic_write_text
from cogen_lib.models import CallCache
from cogen_lib.results import collect_results
from cogen_lib.grid import RunFiles
from cogen_lib.runner import run_grid, run_lock

FIX = Path(__file__).resolve().parent/'fixtures'/'toy'


@pytest.fixture
def disk(tmp_path):
    "A 1 MiB tmpfs at tmp_path/disk, unmounted afterwards."
    d = tmp_path/'disk'; d.mkdir()
    r = subprocess.run(['mount', '-t', 'tmpfs', '-o', 'size=1m', 'cogen-test', str(d)], capture_output=True, text=True)
    if r.returncode: pytest.skip(f"cannot mount a tmpfs here ({r.stderr.strip() or r.returncode}): the test needs root")
    yield d
    subprocess.run(['umount', '-l', str(d)], capture_output=True)


def fill(d: Path) -> Path:
    "Fill the disk `d` to its last byte with one file (returned, to free the space again)."
    f = d/'filler'
    fd = os.open(f, os.O_WRONLY | os.O_CREAT)
    try:
        while True: os.write(fd, b'\0' * 4096)
    except OSError as e: assert e.errno == 28, e
    finally: os.close(fd)
    return f


def remount(d: Path, mode: str):
    subprocess.run(['mount', '-o', f'remount,{mode}', str(d)], check=True)


def test_rows_on_a_full_disk(disk):
    rows = atomic_write_text(disk/'rows.csv', 'metric,value\nacc,0.5\n')
    filler = fill(disk)
    with pytest.raises(CannotWrite, match=f"cannot write {rows}: No space left on device; free space"):
        atomic_write_text(rows, 'metric,value\n' + 'acc,0.25\n' * 10000)
    assert rows.read_text() == 'metric,value\nacc,0.5\n'                # the old rows whole, not truncated
    assert sorted(p.name for p in disk.iterdir()) == ['filler', 'rows.csv']   # no temporary file left
    filler.unlink()
    atomic_write_text(rows, 'metric,value\nacc,0.25\n')                   # with space, the rerun writes
    assert rows.read_text() == 'metric,value\nacc,0.25\n'


def test_call_cache_on_a_full_disk(disk):
    path = disk/'calls'/'calls.sqlite'
    cc = CallCache(path); cc.put_many({'a': {'text': 'x'}}, model='m')
    filler = fill(disk)
    with pytest.raises(CannotWrite, match=f"cannot write the model-call cache {path}: database or disk is full"):
        cc.put_many({f'k{i}': {'text': 'y' * 2000} for i in range(500)}, model='m')
    again = CallCache(path)                                               # a new connection: the old entry whole, none of the batch
    assert again.get_many(['a', 'k0', 'k499']) == {'a': {'text': 'x'}} and len(again) == 1
    with sqlite3.connect(path) as con: assert con.execute('PRAGMA integrity_check').fetchone()[0] == 'ok'
    filler.unlink()
    cc.put_many({f'k{i}': {'text': 'y' * 2000} for i in range(100)}, model='m')
    assert len(CallCache(path)) == 101


def test_read_only_disk(disk):
    rows = atomic_write_text(disk/'rows.csv', 'metric,value\nacc,0.5\n')
    cc = CallCache(disk/'calls.sqlite'); cc.put_many({'a': {'text': 'x'}}); cc.close()
    remount(disk, 'ro')
    try:
        with pytest.raises(CannotWrite, match=f"cannot write {rows}: Read-only file system"):
            atomic_write_text(rows, 'metric,value\nacc,0.25\n')
        with pytest.raises(CannotWrite, match=f"model-call cache {disk/'calls.sqlite'}"):
            CallCache(disk/'calls.sqlite').put_many({'b': {'text': 'y'}})
        with pytest.raises(CannotWrite, match=f"cannot write the lock of a run {disk/'runs'/'toy'/'x.lock'}: Read-only file system"):
            with run_lock(RunFiles(disk, 'toy', 'x')): pass
        assert rows.read_text() == 'metric,value\nacc,0.5\n'
    finally: remount(disk, 'rw')
    assert CallCache(disk/'calls.sqlite').get_many(['a', 'b']) == {'a': {'text': 'x'}}


def test_grid_on_a_full_disk_stops_then_resumes(disk, tmp_path):
    "The toy grid's output folder on a full disk: one error naming the path, no rows written; with space, the rows of an undisturbed run."
    ref = run_grid('toy', 'smoke', root=FIX, out=tmp_path/'ref', summary=False, log=lambda *a: None)
    assert not ref.failed
    filler = fill(disk)
    with pytest.raises(CogenError, match=r"toy/smoke: stopped at run .*: cannot write .*/disk/out/.*: No space left on device") as e:
        run_grid('toy', 'smoke', root=FIX, out=disk/'out', summary=False, log=lambda *a: None)
    assert '\n' not in str(e.value)
    assert not list((disk/'out').rglob('*.csv')), "rows were written to a full disk"
    filler.unlink()
    rep = run_grid('toy', 'smoke', root=FIX, out=disk/'out', summary=False, log=lambda *a: None)
    assert len(rep.ran) == len(ref.ran) and not rep.failed
    got, want = (collect_results('toy', o).sort_values(['slug', 'metric', 'category']).reset_index(drop=True) for o in (disk/'out', tmp_path/'ref'))
    assert got.equals(want)
