"""Every command and code block of the README and ``docs/`` works as the page shows it (issue 29).

Each shell command a page shows is checked (``docs_helpers.check``): a ``brainscore`` command must parse with the
real command line, its options spelled as the parser defines them, and every model and benchmark it names must
be registered; a script must exist and take the options shown; an install must name extras that exist.
Commands that are cheap on the real data then run, page by page in the page's order, in a fresh configuration
folder and results database (the cache of the test session is shared), and what each printed is compared with
what the page shows under it: every number, word and count as shown; only paths, dates, clock times and
durations may differ (``docs_helpers.line_pattern``). Commands that need a website, a cluster, a GPU, the reader's
own files or placeholders filled in, or minutes of forward passes are parsed only: ``docs_helpers.how_checked``
names the reason in each test's id. Python blocks run too (a ``print(...)  # text`` line must print ``text``),
except on the two pages whose own tests run them (``docs_helpers.PAGE_TESTS``).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import docs_helpers as docs

PAGES = docs.pages()
ITEMS = {docs.relative(page): docs.page_items(page) for page in PAGES}
COMMANDS = [command for found, _ in ITEMS.values() for command in found]


def _id(command: docs.Command) -> str:
    mode, why = docs.how_checked(command)
    return f"{command.page}:{command.line}:{command.words[0]}:{mode if mode == 'run' else 'parse-only(' + why + ')'}"


def test_the_pages_are_read():
    assert {"README.md", "docs/README.md", "docs/results.md", "docs/models.md"} <= set(ITEMS)
    readme, python = ITEMS["README.md"]
    argvs = [c.brainscore_argv for c in readme if c.brainscore_argv is not None]
    # the quick start, as one line: install, set the data folder, score
    assert ["config", "set", "data_mirror", "../shared/data"] in argvs
    assert ["score", "--model", "efficientnet-lite0", "--benchmark", "Cowley2026.210325.V4-pls"] in argvs
    assert any(c.words == ["bash", ".ci/run"] for c in readme)
    assert python and len(COMMANDS) >= 60


def test_the_quick_start_is_one_line_and_ci_runs_the_readmes_test_command():
    text = (docs.ROOT / "README.md").read_text(encoding="utf-8")
    assert ("python -m pip install -e . && brainscore config set data_mirror ../shared/data && brainscore score "
            "--model efficientnet-lite0 --benchmark Cowley2026.210325.V4-pls") in text
    assert "bash .ci/run" in text
    ci = (docs.ROOT / ".ci" / "run").read_text()
    assert "python -m pytest" in ci and 'pip install -e ".[test]"' in ci


@pytest.mark.parametrize("command", COMMANDS, ids=_id)
def test_command_is_valid(command):
    mode, why = docs.how_checked(command)
    assert mode == "run" or why in docs.REASONS, f"{command}: parse-only without a reason"
    assert docs.check(command) == [], str(command)


def _session_env(tmp_path: Path, page: str, runnable: list[docs.Command]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BRAINSCORE_")}
    xdg = tmp_path / "config"
    xdg.mkdir()
    env.update(XDG_CONFIG_HOME=str(xdg), BRAINSCORE_HOME=os.environ["BRAINSCORE_HOME"], BRAINSCORE_OFFLINE="1",
               BRAINSCORE_DB_URL=f"sqlite:///{tmp_path / 'results.sqlite'}")
    sets_mirror = any(c.brainscore_argv[:3] == ["config", "set", "data_mirror"] for c in runnable)
    if not sets_mirror:  # a page that sets the data folder itself is run without it, as a new user would
        env["BRAINSCORE_DATA_MIRROR"] = os.environ["BRAINSCORE_DATA_MIRROR"]
    for name in ("BRAINSCORE_DEV_SRC",):
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def _expected_exit(shown: list[str] | None) -> int | None:
    return None if shown and any(line.startswith("error:") for line in shown) else 0


RUN_PAGES = sorted(page for page, (found, python) in ITEMS.items()
                   if any(docs.how_checked(c)[0] == "run" for c in found)
                   or (python and page not in docs.PAGE_TESTS))


@pytest.mark.parametrize("page", RUN_PAGES)
def test_page_runs_as_shown(page, tmp_path):
    """The page's cheap commands and its Python, in the page's order, print what the page shows."""
    found, python = ITEMS[page]
    runnable = [c for c in found if docs.how_checked(c)[0] == "run"]
    blocks = [b for b in python if page not in docs.PAGE_TESTS and not (b.marker and b.marker[0] == "no-run")]
    env = _session_env(tmp_path, page, runnable)
    failures = []
    for item in sorted([*runnable, *blocks], key=lambda item: item.line):
        if isinstance(item, docs.Command):
            argv = [sys.executable, "-m", "brainscore", *item.brainscore_argv]
            shown, what = item.output, str(item)
        else:
            argv = [sys.executable, "-c", item.text]
            shown, what = docs.expected_prints(item.text), f"{item.page}:{item.line}: python block"
        done = subprocess.run(argv, cwd=docs.ROOT, env={**env, **getattr(item, "env", {})}, capture_output=True,
                              text=True, timeout=900)
        expected = _expected_exit(shown)
        if expected is not None and done.returncode != expected:
            failures.append(f"{what}\n  exit {done.returncode}\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
            continue
        missing = docs.compare_output(shown or [], done.stdout, done.stderr)
        if missing:
            failures.append(f"{what}\n  the page shows lines it did not print:\n    " + "\n    ".join(missing)
                            + f"\n  it printed:\n{done.stdout[-3000:]}\n  stderr:\n{done.stderr[-1500:]}")
    assert not failures, "\n\n".join(failures)


@pytest.mark.parametrize("block", [b for page, (_, python) in ITEMS.items() for b in python],
                         ids=lambda b: f"{b.page}:{b.line}")
def test_python_block_compiles_and_imports_exist(block):
    assert docs.check_python_code(block.text) == []


def test_yaml_blocks_parse():
    found = 0
    for page in PAGES:
        for block in docs.blocks(page.read_text(encoding="utf-8"), docs.relative(page)):
            if block.lang in ("yaml", "yml"):
                assert isinstance(yaml.safe_load(block.text), dict), f"{block.page}:{block.line}"
                found += 1
    assert found >= 1


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation but hyphens and underscores dropped, spaces to -.

    Code and emphasis marks go; an underscore inside a word (``get_activations``) stays, as on GitHub.
    """
    text = re.sub(r"`+|\*{1,2}", "", heading.strip().lower())
    text = re.sub(r"(?<!\w)_{1,2}(?=\S)|(?<=\S)_{1,2}(?!\w)", "", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = re.sub(r"^(`{3,}|~{3,}).*?^\1", "", path.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {_slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.*)$", text, re.M)}


def test_every_relative_link_and_anchor_resolves():
    broken = []
    for page in PAGES:
        text = re.sub(r"^(`{3,}|~{3,}).*?^\1", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"^[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            resolved = (page.parent / path).resolve() if path else page
            if not resolved.exists():
                broken.append(f"{docs.relative(page)}: {target} (no such file)")
            elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
                broken.append(f"{docs.relative(page)}: {target} (no heading gives #{anchor})")
    assert not broken, "\n".join(broken)


def test_every_docs_page_is_in_the_index():
    index = (docs.ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in PAGES if p.parent.name == "docs" and p.name != "README.md" and f"({p.name})" not in index]
    assert not missing, f"docs/README.md does not list {missing}"


def test_shell_looking_blocks_are_tagged():
    """An untagged block whose lines all start like commands is shown to be copied: tag it ```bash (or prompt its
    commands with `$ `), so that this test finds and checks it."""
    starts = ("brainscore ", "python ", "export ", "pip ", "bash ")
    untagged = []
    for page in PAGES:
        for block in docs.blocks(page.read_text(encoding="utf-8"), docs.relative(page)):
            lines = [line for line in block.text.splitlines() if line.strip() and not line.startswith("#")]
            if block.lang == "" and lines and not any(l.startswith("$ ") for l in lines) \
                    and all(line.startswith(starts) for line in lines):
                untagged.append(f"{block.page}:{block.line}")
    assert not untagged, untagged


INLINE = re.compile(r"`(brainscore [^`]+)`")


def test_inline_commands_name_real_subcommands_and_options():
    """`brainscore ...` in running text: its sub-command exists and so does every --option it shows."""
    wrong = []
    for page in PAGES:
        text = re.sub(r"^(`{3,}|~{3,}).*?^\1", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        for span in INLINE.findall(text):
            words = span.split()[1:]
            if not words or not re.fullmatch(r"[a-z][a-z_-]*", words[0]):  # `brainscore --help`, `brainscore ...`
                continue
            chain = docs.command_parsers(words)
            if len(chain) == 1:
                wrong.append(f"{docs.relative(page)}: `{span}`: no sub-command {words[0]!r}")
                continue
            options = {o for p in chain for sub in [p, *docs._subparsers(p).values()] for a in sub._actions
                       for o in a.option_strings}
            for word in words:
                option = re.match(r"--[\w-]+", word)
                if option and option.group(0) not in options:
                    wrong.append(f"{docs.relative(page)}: `{span}`: no option {option.group(0)}")
    assert not wrong, "\n".join(wrong)
