"""One grammar for every `cogen` command (cogen_lib.cliutil): `cogen <paper> score` in every paper, the old verbs and
option spellings hidden but working, `-h` everywhere, one meaning for `--limit`, each `--profile` default stated, and
help printed as written (`[hf]` included). In-process through typer's CliRunner: seconds."""
import importlib

import pytest
import typer
from typer.testing import CliRunner

from cogen_lib.cli import app, paper_packages, paper_command

PAPERS = ['cggc', 'cocoa', 'recogs', 'spor']
OLD_VERBS = {'cocoa': 'eval', 'spor': 'evaluate', 'cggc': 'evaluate'}       # hidden aliases of `score`, for a release


def invoke(args: list[str]):
    return CliRunner().invoke(app, args, terminal_width=120)


def commands(group, path=()):
    "(path, command) for every command and group under `group`, hidden ones included."
    for name, cmd in sorted(group.commands.items()):
        yield (*path, name), cmd
        if hasattr(cmd, 'commands'): yield from commands(cmd, (*path, name))


def every_command():
    top = typer.main.get_command(app)
    yield (), top
    yield from commands(top)
    for p in paper_packages():
        g = paper_command(p)
        yield (p,), g
        yield from commands(g, (p,))


ALL = [(' '.join(p) or 'cogen', p, c) for p, c in every_command()]


def test_the_four_papers_are_here():
    assert set(PAPERS) <= set(paper_packages())


@pytest.mark.parametrize('paper', PAPERS)
def test_score_help(paper):
    r = invoke([paper, 'score', '--help'])
    assert r.exit_code == 0, r.output
    assert r.output.startswith('Usage: ') and f'{paper} score [OPTIONS]' in r.output, r.output


@pytest.mark.parametrize('paper', PAPERS)
def test_score_is_listed_and_old_verbs_are_hidden(paper):
    out = invoke([paper, '-h']).output
    assert ' score ' in out
    if paper in OLD_VERBS: assert f' {OLD_VERBS[paper]} ' not in out, out


@pytest.mark.parametrize('paper', sorted(OLD_VERBS))
def test_old_verb_is_score(paper):
    "The old verb is the same command: the same help, but for its name in the usage line."
    new, old = invoke([paper, 'score', '-h']), invoke([paper, OLD_VERBS[paper], '-h'])
    assert old.exit_code == 0 and old.output == new.output.replace(f'{paper} score', f'{paper} {OLD_VERBS[paper]}')


# the old spelling of each positional input: the same outcome as the new one (a missing file; {d} holds no model)
OLD_SPELLINGS = [
    (['recogs', 'score', '{f}', '--gold', '{f}'], ['recogs', 'score', '--gold', '{f}', '--pred', '{f}']),
    (['cocoa', 'score', '{f}', '--model', '{d}'], ['cocoa', 'eval', '--model', '{d}', '--data', '{f}']),
    (['spor', 'score', '{f}', '--aspect', 'systematicity', '--split', '{f}'],
     ['spor', 'evaluate', '--aspect', 'systematicity', '--pred', '{f}', '--split', '{f}']),
    (['cggc', 'score', '{f}'], ['cggc', 'evaluate', '--pred', '{f}']),
    (['cggc', 'stats', '{f}'], ['cggc', 'stats', '--graphs', '{f}']),
    (['cggc', 'prompts', '{f}', '--setting', 'id', '--out', '{o}'],
     ['cggc', 'prompts', '--graphs', '{f}', '--setting', 'id', '--out', '{o}']),
]


@pytest.mark.parametrize('new,old', OLD_SPELLINGS, ids=[' '.join(n[:2]) for n, _ in OLD_SPELLINGS])
def test_old_spelling_still_works(tmp_path, new, old):
    f = lambda args: [a.format(f=tmp_path/'missing.jsonl', o=tmp_path/'out.jsonl', d=tmp_path) for a in args]
    rn, ro = invoke(f(new)), invoke(f(old))
    assert rn.exit_code == 1 and ('missing.jsonl' in rn.output or 'holds no model' in rn.output), rn.output
    assert (ro.exit_code, ro.output) == (rn.exit_code, rn.output)
    flag = next(a for a in old if a in ('--pred', '--data', '--graphs'))
    assert flag not in invoke([*new[:2], '-h']).output                    # hidden from the help


@pytest.mark.parametrize('name,path,cmd', ALL, ids=[a[0] for a in ALL])
def test_every_command_takes_h(name, path, cmd):
    r = invoke([*path, '-h'])
    assert r.exit_code == 0 and r.output.startswith('Usage: ') and '-h, --help' in r.output, r.output
    for p in cmd.params:                       # every help printed as written: brackets too (rich markup ate `[hf]`)
        if getattr(p, 'help', None) and not p.hidden:
            assert ' '.join(p.help.split()) in ' '.join(r.output.split()), (p.name, p.help)


def test_every_paper_app_takes_h_on_its_own():
    for p in paper_packages():
        a = importlib.import_module(f'cogen_lib.{p}.cli').app
        r = CliRunner().invoke(a, ['-h'])
        assert r.exit_code == 0 and '-h, --help' in r.output, (p, r.output)


def test_export_help_shows_hf():
    r = invoke(['export', '--help'])
    assert r.exit_code == 0 and "pip install 'cogen_lib[hf]'" in ' '.join(r.output.split()), r.output


LIMITS = [(n, p) for n, p, c in ALL if any(q.name == 'limit' for q in c.params)]


def test_limit_is_everywhere_the_same():
    assert {n for n, _ in LIMITS} >= {'export', 'cocoa score', 'cggc build', 'cggc prompts'}


@pytest.mark.parametrize('name,path', LIMITS, ids=[n for n, _ in LIMITS])
def test_limit_one_meaning(name, path):
    "At most N, omitted: all, and 0 refused (it meant `all` in `cogen export` and was refused elsewhere)."
    assert 'omitted: all' in ' '.join(invoke([*path, '-h']).output.split())
    r = invoke([*path, '--limit', '0'])
    assert r.exit_code == 2 and "Invalid value for '--limit'" in r.output, r.output


@pytest.mark.parametrize('path,default', [(['run'], 'smoke'), (['verify'], 'cpu'), (['results', 'import'], 'paper')])
def test_profile_default_is_stated(path, default):
    out = ' '.join(invoke([*path, '-h']).output.split())
    assert f'Default {default}' in out and f'[default: {default}]' in out, out
