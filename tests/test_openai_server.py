"""`openai:<model>` against a real OpenAI-compatible server, not a mock: transformers' own `transformers serve`
(FastAPI + uvicorn, pinned in requirements.txt) serving the SmolLM2 weights the project already has, on localhost.

What is checked: concurrent requests (the client's pool keeps several in flight against the real server), answers in
input order and equal to the same model's greedy output run locally, token counts from the server's `usage` and the
cost they imply, a rerun served from the call cache, and an interrupted run (the server stopped mid-way) that resumes
from the cache once the server is back, paying only for the prompts it had not got.
"""
import os, socket, subprocess, sys, threading, time, urllib.request
from pathlib import Path
import pytest

pytest.importorskip('openai')
pytest.importorskip('fastapi', reason='transformers serve needs fastapi (pinned in requirements.txt)')
pytest.importorskip('uvicorn', reason='transformers serve needs uvicorn (pinned in requirements.txt)')

from cogen_lib import models
from cogen_lib.models import CallCache, converted_dir, load_lm, model_spec, OpenAILM

BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0)); return s.getsockname()[1]


class Server:
    "`transformers serve <weights>` on a free localhost port, started and stopped by the test."
    def __init__(self, weights: Path, log: Path):
        self.weights, self.log, self.port, self.proc = weights, log, _free_port(), None

    @property
    def base(self) -> str: return f'http://127.0.0.1:{self.port}/v1'

    def start(self, timeout: float = 240):
        env = dict(os.environ, HF_HUB_OFFLINE='1', TRANSFORMERS_OFFLINE='1', CUDA_VISIBLE_DEVICES='')
        cmd = [str(BIN/'transformers'), 'serve', str(self.weights), '--host', '127.0.0.1', '--port', str(self.port), '--device', 'cpu']
        self.proc = subprocess.Popen(cmd, stdout=open(self.log, 'ab'), stderr=subprocess.STDOUT, env=env)
        t0 = time.time()
        while time.time() - t0 < timeout:
            if self.proc.poll() is not None: pytest.fail(f'transformers serve exited ({self.proc.returncode}): {self.log.read_text()[-2000:]}')
            try:
                with urllib.request.urlopen(f'http://127.0.0.1:{self.port}/health', timeout=2) as r:
                    if r.status == 200: return
            except OSError: time.sleep(0.5)
        pytest.fail(f'transformers serve did not answer in {timeout} s: {self.log.read_text()[-2000:]}')

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            try: self.proc.wait(30)
            except subprocess.TimeoutExpired: self.proc.kill(); self.proc.wait()


@pytest.fixture(scope='module')
def server(tmp_path_factory):
    weights = converted_dir(model_spec('smollm2-135m'))       # the safetensors copy of the project's SmolLM2 GGUF
    s = Server(weights, tmp_path_factory.mktemp('serve')/'serve.log')
    s.start()
    yield s
    s.stop()


class InFlight:
    "Wraps the client's chat endpoint and counts how many requests are in flight at once."
    def __init__(self, create):
        self.create_, self.lock, self.now, self.most, self.calls = create, threading.Lock(), 0, 0, 0
    def create(self, **kw):
        with self.lock: self.now += 1; self.calls += 1; self.most = max(self.most, self.now)
        try: return self.create_(**kw)
        finally:
            with self.lock: self.now -= 1


def _lm(server, monkeypatch, **env) -> OpenAILM:
    monkeypatch.setenv('OPENAI_API_KEY', 'EMPTY')
    monkeypatch.setenv('OPENAI_BASE_URL', server.base)
    for k, v in env.items(): monkeypatch.setenv(k, v)
    name = f'openai:{server.weights}'
    models.unload(name)
    lm = load_lm(name, revision='smollm2-135m served by transformers serve')   # one revision: resumes across restarts
    fl = InFlight(lm.client.chat.completions.create)
    lm.client.chat.completions.create = fl.create       # the real client's call, counted (an instance attribute)
    return lm, fl


PROMPTS = ['Name a colour.', 'Name a fruit.', 'Name an animal.', 'Name a city.', 'Name a planet.', 'Name a tree.']


def test_concurrent_cached_and_priced(server, monkeypatch, tmp_path):
    lm, fl = _lm(server, monkeypatch, COGEN_OPENAI_CONCURRENCY='3', COGEN_OPENAI_PRICES='1.0,2.0')
    cc = CallCache(tmp_path/'calls.sqlite')
    out = lm.generate(PROMPTS, max_new_tokens=8, cache=cc)
    assert [g.error for g in out] == [None] * 6 and all(g.text.strip() for g in out), [(g.text, g.error) for g in out]
    assert fl.calls == 6 and 2 <= fl.most <= 3            # several requests at once against the server, never more than 3
    st = lm.last_stats
    assert st['model_calls'] == 6 and st['prompt_tokens'] > 6 and 0 < st['new_tokens'] <= 48
    assert st['cost_usd'] == pytest.approx((st['prompt_tokens'] * 1.0 + st['new_tokens'] * 2.0) / 1e6)
    # the same model run locally, greedily, from the same chat template: the same texts in the same order
    local = load_lm('smollm2-135m').generate(PROMPTS, max_new_tokens=8, chat=True, cache=False)
    assert [g.text for g in out] == [g.text for g in local]
    again = lm.generate(PROMPTS, max_new_tokens=8, cache=cc)
    assert [g.text for g in again] == [g.text for g in out] and all(g.cached for g in again)
    assert (lm.last_stats['model_calls'], lm.last_stats['cache_hits'], lm.last_stats['cost_usd']) == (0, 6, 0.0)
    assert fl.calls == 6                                   # the rerun sent nothing


def test_interrupted_run_resumes_from_cache(server, monkeypatch, tmp_path):
    lm, fl = _lm(server, monkeypatch, COGEN_OPENAI_CONCURRENCY='2', COGEN_OPENAI_RETRIES='1', COGEN_OPENAI_TIMEOUT='90')
    cc = CallCache(tmp_path/'calls.sqlite')
    prompts = [f'Count to {i}.' for i in range(2, 8)]
    first = lm.generate(prompts[:2], max_new_tokens=6, cache=cc)            # the part that finished before the outage
    assert all(g.error is None for g in first)
    server.stop()                                                            # the server goes away mid-run
    down = lm.generate(prompts, max_new_tokens=6, cache=cc)
    assert [g.cached for g in down[:2]] == [True, True]
    assert all(g.text is None and 'Connection' in g.error for g in down[2:]), [g.error for g in down]   # error rows, no empty texts
    server.start()
    calls = fl.calls
    back = lm.generate(prompts, max_new_tokens=6, cache=cc)
    assert all(g.error is None for g in back) and [g.cached for g in back] == [True] * 2 + [False] * 4, [(g.cached, g.error) for g in back]
    assert [g.text for g in back[:2]] == [g.text for g in first]
    assert fl.calls - calls == 4                                             # only what it had not got
