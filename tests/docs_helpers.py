"""The commands and code of the README and ``docs/``: found, checked against the real command line, run where cheap.

``tests/docs/test_doc_commands.py`` uses this module; ``python tests/docs_helpers.py`` prints every command with
how it is checked. A page's fenced blocks are read as a reader sees them:

- ```` ```bash ```` (``sh``, ``shell``): every line is a command (``\\`` continues a line, ``#`` starts a comment);
- ```` ```console ```` and untagged blocks: lines starting with ``$ `` are commands, the lines after one are what it
  prints;
- an untagged block right after ``<!-- docs-test: output -->`` is what the last command before it prints;
- ```` ```python ```` blocks are programs; a ``print(...)  # text`` line says what it prints;
- ```` ```yaml ```` blocks must parse.

``<!-- docs-test: no-run REASON -->`` before a block keeps its commands or code from running (they are still
parsed and checked), saying why.

Every ``brainscore`` command is parsed by the real parser (``brainscore.cli.build_parser``), with every option
spelled out as the parser defines it (argparse would accept an abbreviation), and every model and benchmark it
names must be registered. ``how_checked`` says whether a command runs on the real data or is only parsed, and
why: a command that needs a website, a cluster, a GPU, the reader's own files or placeholders filled in, or
that takes minutes of forward passes, is parsed only.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import fnmatch
import importlib
import importlib.util
import io
import re
import shlex
import sys
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHELL = {"bash", "sh", "shell", "zsh"}
PROMPTED = {"console", "shell-session", "", "text"}
MARKER = re.compile(r"<!--\s*docs-test:\s*(?P<what>[\w-]+)\s*(?P<why>.*?)\s*-->")
FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)(?P=fence)[ \t]*$",
                   re.M | re.S)

#: programs other than brainscore and python a page may show, and why checking their name is enough
EXTERNAL_PROGRAMS = {
    "cd": "the shell", "export": "the shell (the names are checked)", "source": "the shell", "mkdir": "coreutils",
    "cp": "coreutils", "ls": "coreutils", "cat": "coreutils", "sqlite3": "SQLite's shell (a database backup)",
    "dask": "Dask's command line (a cluster of your own; --preload modules are checked)",
    "tmux": "a terminal multiplexer", "screen": "a terminal multiplexer", "git": "git",
    "sbatch": "SLURM", "squeue": "SLURM", "srun": "SLURM", "qsub": "PBS/SGE", "bsub": "LSF",
}

#: why a command is parsed and checked, but not run (every parse-only command names one)
REASONS = {
    "website": "needs a running brainscore website",
    "cluster": "needs a cluster (a batch system or a Dask scheduler)",
    "gpu": "needs a GPU",
    "placeholder": "has placeholders for the reader to fill in",
    "own-files": "needs files of the reader's own",
    "page-test": "its page's own test runs it",
    "costly": "takes minutes of forward passes (the same scores are checked by the slow tests)",
    "install": "installs packages (the extras it names are checked)",
    "test-suite": "is the test suite itself",
    "script": "a script of the repository (it exists and takes the options shown)",
    "external": "another program",
    "marked": "marked no-run on its page",
}

#: pages whose commands and code run in a test of their own, which sets up the files they need
PAGE_TESTS = {
    "docs/tutorial_benchmark_author.md": "tests/data/test_tutorial.py",
    "docs/coming_from_brain_score.md": "tests/compat/test_migration_doc.py",
}

#: (model pattern, benchmark pattern) pairs cheap enough to score in the test suite (seconds, not minutes)
CHEAP_PAIRS = [("pixels", "Kriegeskorte2008*"), ("pixels", "Kiani2007*"), ("pixels", "Mur2013*"),
               ("pixels", "Cowley2026.210325*"), ("efficientnet-lite0", "Cowley2026.210325.V4-pls"),
               ("my-tiny-net", "Cowley2026.210325.V4-pls")]

#: sub-commands that read settings, the registry or the results database only
CHEAP_COMMANDS = {"list", "records", "leaderboard", "config", "layers", "reproduce"}
PLACEHOLDER = re.compile(r"^(?:[A-Z][A-Z0-9_]*|ID|URL|ADDR|DIR|FOLDER|PATH|PLUGIN|RECORD)$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a page: its language, text (dedented) and the line of its opening fence."""

    page: str
    line: int
    lang: str
    text: str
    marker: tuple[str, str] | None = None  # ("no-run", reason) or ("output", "")


@dataclass
class Command:
    """One simple command of a page (a line may hold several, joined by ``&&``, ``;`` or ``|``)."""

    page: str
    line: int
    text: str  # the whole logical line as written
    words: list[str]
    env: dict[str, str] = field(default_factory=dict)
    output: list[str] | None = None  # what the page says it prints
    marker: tuple[str, str] | None = None

    @property
    def brainscore_argv(self) -> list[str] | None:
        """The arguments after ``brainscore`` (or ``python -m brainscore``), or None for another program."""
        if self.words[:1] == ["brainscore"]:
            return self.words[1:]
        if len(self.words) >= 3 and self.words[0] in ("python", "python3") and self.words[1:3] == ["-m", "brainscore"]:
            return self.words[3:]
        return None

    def __str__(self) -> str:
        return f"{self.page}:{self.line}: {' '.join(shlex.quote(w) for w in self.words)}"


def pages(root: Path = ROOT) -> list[Path]:
    """The README and every page of ``docs/`` (its index included)."""
    return [root / "README.md", *sorted((root / "docs").glob("*.md"))]


def relative(path: Path, root: Path = ROOT) -> str:
    return str(path.resolve().relative_to(root)) if path.is_absolute() else str(path)


def blocks(text: str, page: str = "<text>") -> list[Block]:
    """The fenced blocks of a markdown text, in order, each with the docs-test marker just before it."""
    found = []
    for match in FENCE.finditer(text):
        indent = match.group("indent")
        body = "".join(line[len(indent):] if line.startswith(indent) else line.lstrip()
                       for line in match.group("body").splitlines(keepends=True))
        before = text[:match.start()].rstrip().splitlines()
        marker = MARKER.fullmatch(before[-1].strip()) if before else None
        found.append(Block(page, text.count("\n", 0, match.start()) + 1, match.group("lang").lower(), body,
                           (marker.group("what"), marker.group("why")) if marker else None))
    return found


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(offset of the first line, the line) with backslash continuations joined."""
    lines, start, pending = [], 0, ""
    for number, line in enumerate(text.splitlines()):
        if not pending:
            start = number
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        lines.append((start, pending + line))
        pending = ""
    if pending:
        lines.append((start, pending))
    return lines


def split_commands(line: str) -> list[tuple[dict[str, str], list[str]]]:
    """A shell line's simple commands: (leading VAR=value assignments, words), redirections dropped."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    tokens = list(lexer)
    commands, words = [], []
    skip_next = False
    for token in tokens + [";"]:
        if skip_next:
            skip_next = False
            continue
        if token in ("&&", "||", ";", "|", "&", ";;"):
            if words:
                env = {}
                while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]) and len(words) > 1:
                    name, _, value = words.pop(0).partition("=")
                    env[name] = value
                commands.append((env, words))
            words = []
        elif token in (">", ">>", "<", "2>", "&>", ">&"):
            skip_next = True
        else:
            words.append(token)
    return commands


def commands(block: Block) -> list[Command]:
    """The commands of a shell or prompted block, each with the output shown under it (prompted blocks)."""
    if block.lang not in SHELL | PROMPTED:
        return []
    prompted = block.lang in PROMPTED or any(line.startswith("$ ") for line in block.text.splitlines())
    found: list[Command] = []
    if prompted:
        lines = block.text.splitlines()
        i = 0
        while i < len(lines):
            if not lines[i].startswith("$ "):
                if found and found[-1].output is not None:
                    found[-1].output.append(lines[i])
                i += 1
                continue
            start, text = i, lines[i][2:]
            while text.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                text = text.rstrip()[:-1] + " " + lines[i].lstrip("> ")
            simple = split_commands(text)
            for k, (env, words) in enumerate(simple):
                last = k == len(simple) - 1
                found.append(Command(block.page, block.line + 1 + start, text, words, env,
                                     [] if last else None, block.marker))
            i += 1
        return found
    for offset, text in _logical_lines(block.text):
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        for env, words in split_commands(text):
            found.append(Command(block.page, block.line + 1 + offset, text, words, env, None, block.marker))
    return found


def page_items(path: Path, root: Path = ROOT) -> tuple[list[Command], list[Block]]:
    """A page's commands (with outputs attached from ``docs-test: output`` blocks) and its python blocks."""
    page = relative(path, root)
    found, python = [], []
    for block in blocks(path.read_text(encoding="utf-8"), page):
        if block.marker and block.marker[0] == "output":
            if not found:
                raise ValueError(f"{page}:{block.line}: an output block with no command before it")
            found[-1].output = block.text.splitlines()
            continue
        if block.lang == "python":
            python.append(block)
        found.extend(commands(block))
    return found, python


# ---- checking a command ------------------------------------------------------------------------------------------
@cache
def parser() -> argparse.ArgumentParser:
    from brainscore.cli import build_parser

    return build_parser()


def _subparsers(p: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def command_parsers(argv: list[str]) -> list[argparse.ArgumentParser]:
    """The parser of ``brainscore`` and of each sub-command ``argv`` walks into (``config set``: three)."""
    chain = [parser()]
    for word in argv:
        if word.startswith("-"):
            continue
        sub = _subparsers(chain[-1])
        if word not in sub:
            break
        chain.append(sub[word])
    return chain


def parse(argv: list[str]) -> tuple[argparse.Namespace | None, str | None]:
    """The namespace the real parser makes of ``argv``, or its error message."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            return parser().parse_args(argv), None
        except SystemExit as stop:
            if stop.code == 0:  # --help, --version
                return None, None
            return None, err.getvalue().strip().splitlines()[-1]


@cache
def registered(kind: str) -> tuple[str, ...]:
    import brainscore

    return tuple(brainscore.list_models() if kind == "model" else brainscore.list_benchmarks())


def _items(value) -> list[str]:
    values = value if isinstance(value, list) else [value]
    return [item.strip() for v in values if isinstance(v, str) for item in v.split(",") if item.strip()]


def identifiers(namespace: argparse.Namespace) -> dict[str, list[str]]:
    """The models and benchmarks a parsed command names (patterns included)."""
    found = {"model": [], "benchmark": []}
    for attribute, kind in (("model", "model"), ("models", "model"), ("benchmark", "benchmark"),
                            ("benchmarks", "benchmark")):
        found[kind] += _items(getattr(namespace, attribute, None))
    return found


def is_placeholder(word: str) -> bool:
    return bool(PLACEHOLDER.match(word)) or word in ("host", "TOKEN")


@cache
def _package_source() -> str:
    return "\n".join(p.read_text(encoding="utf-8", errors="replace") for p in (ROOT / "src").rglob("*.py"))


def check_environment(names) -> list[str]:
    """Environment variables of the package's own (``BRAINSCORE_*``) that the package does not read."""
    return [f"{name} is not an environment variable brainscore reads" for name in names
            if name.startswith("BRAINSCORE_") and f'"{name}"' not in _package_source()
            and f"'{name}'" not in _package_source()]


def check_brainscore(command: Command) -> list[str]:
    """What is wrong with a ``brainscore`` command: the parser's error, an option spelled otherwise, an unknown
    model or benchmark."""
    argv = command.brainscore_argv
    namespace, error = parse(argv)
    if error:
        return [f"the command line refuses it: {error}"]
    problems = []
    chain = command_parsers(argv)
    known = {o for p in chain for a in p._actions for o in a.option_strings}
    for word in argv:
        if word == "--":
            break
        if word.startswith("--"):
            option = word.split("=", 1)[0]
            if option not in known:
                problems.append(f"{option} is not an option of `brainscore {' '.join(p.prog.split()[-1] for p in chain[1:])}`"
                                f" (argparse took it as an abbreviation); spell it out")
    if namespace is None:
        return problems
    if getattr(namespace, "plugin_dir", None) or command.page in PAGE_TESTS or command.brainscore_argv[:1] == ["list"]:
        return problems
    for kind, items in identifiers(namespace).items():
        for item in items:
            if is_placeholder(item) or any(fnmatch.fnmatchcase(name, item) for name in registered(kind)):
                continue
            problems.append(f"no registered {kind} matches {item!r} (`brainscore list {kind}s`)")
    return problems


@cache
def extras() -> frozenset[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return frozenset(project.get("optional-dependencies", {}))


def _check_python(command: Command) -> list[str]:
    words = command.words[1:]
    if not words:
        return ["python without a script"]
    if words[0] == "-m":
        module, rest = words[1], words[2:]
        if module == "pip":
            problems = []
            for word in rest:
                match = re.fullmatch(r"\.\[([\w,-]+)\]", word)
                for extra in (match.group(1).split(",") if match else []):
                    if extra not in extras():
                        problems.append(f"pyproject.toml has no extra {extra!r}")
            return problems
        if module == "pytest":
            return [f"{word} does not exist" for word in rest
                    if not word.startswith("-") and ("/" in word or word.endswith(".py"))
                    and not (ROOT / word.split("::")[0]).exists()]
        return [] if importlib.util.find_spec(module) else [f"no module {module}"]
    if words[0] == "-c":
        return check_python_code(words[1])
    script = ROOT / words[0]
    if not script.is_file():
        return [f"{words[0]} does not exist"]
    text = script.read_text(encoding="utf-8")
    return [f"{words[0]} takes no option {word.split('=')[0]}" for word in words[1:]
            if word.startswith("--") and not re.search(rf"""["']{re.escape(word.split('=')[0])}["']""", text)]


def _submodule(package: str, name: str) -> bool:
    try:
        return importlib.util.find_spec(f"{package}.{name}") is not None
    except ImportError:  # ``package`` is a module, not a package
        return False


def check_python_code(code: str) -> list[str]:
    """Python that a page shows: it compiles, and every name it imports exists."""
    try:
        tree = ast.parse(code)
    except SyntaxError as error:
        return [f"not valid Python: {error}"]
    problems = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            try:
                module = importlib.import_module(node.module)
            except ImportError as error:
                problems.append(f"cannot import {node.module}: {error}")
                continue
            for alias in node.names:
                if alias.name != "*" and not hasattr(module, alias.name) and not _submodule(node.module, alias.name):
                    problems.append(f"{node.module} has no {alias.name}")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if importlib.util.find_spec(alias.name.split(".")[0]) is None:
                    problems.append(f"no module {alias.name}")
    return problems


def check(command: Command) -> list[str]:
    """Everything wrong with a command a page shows (empty: nothing)."""
    problems = check_environment(command.env)
    program = command.words[0]
    if command.brainscore_argv is not None:
        return problems + check_brainscore(command)
    if program in ("python", "python3"):
        return problems + _check_python(command)
    if program == "bash":
        return problems + [f"{w} does not exist" for w in command.words[1:2] if not (ROOT / w).is_file()]
    if program == "export":
        return problems + check_environment(w.split("=")[0] for w in command.words[1:])
    if program == "pip":
        return problems + ["use `python -m pip`, which installs into the Python that runs brainscore"]
    if program not in EXTERNAL_PROGRAMS:
        return problems + [f"unknown program {program!r}: add it to EXTERNAL_PROGRAMS in tests/docs_helpers.py "
                           "with why naming it is enough, or show it another way"]
    for option, value in zip(command.words, command.words[1:]):
        if option == "--preload" and importlib.util.find_spec(value) is None:
            problems.append(f"--preload {value}: no such module")
    return problems


def _pairs(namespace: argparse.Namespace) -> list[tuple[str, str]]:
    named = identifiers(namespace)
    def expand(kind):  # a model of a --plugin-dir folder is not registered here: taken as named
        return [name for item in named[kind]
                for name in ([n for n in registered(kind) if fnmatch.fnmatchcase(n, item)] or [item])]

    models, benchmarks = expand("model"), expand("benchmark")
    return [(m, b) for m in models for b in benchmarks]


def how_checked(command: Command) -> tuple[str, str]:
    """("run", what) for a command the tests run on the real data, else ("parse", a key of REASONS)."""
    if command.marker and command.marker[0] == "no-run":
        return "parse", "marked"
    if command.page in PAGE_TESTS:
        return "parse", "page-test"
    argv = command.brainscore_argv
    if argv is None:
        program = command.words[0]
        if program in ("python", "python3") and command.words[1:3] == ["-m", "pip"]:
            return "parse", "install"
        if program == "bash" and command.words[1:2] in ([".ci/run"], [".ci/nightly"]):
            return "parse", "test-suite"
        if program in ("python", "python3"):
            return "parse", "script"
        return "parse", "external"
    words = set(argv)
    if not argv or argv[0] in ("--version", "--help", "-h") or "--help" in words:
        return "run", "help"
    if argv[0] in ("serve", "submit") or "--server" in words:
        return "parse", "website"
    if words & {"--cluster", "--scheduler"}:
        return "parse", "cluster"
    if any(w.startswith("cuda") for w in argv) or "--device" in words and "cpu" not in words:
        return "parse", "gpu"
    if any(is_placeholder(w) for w in argv):
        return "parse", "placeholder"
    if argv[0] == "data":
        return ("run", "data") if argv[1:2] in (["list"], ["where"]) else ("parse", "own-files")
    plugin_dirs = [v for o, v in zip(argv, argv[1:]) if o == "--plugin-dir"]
    if any(not (ROOT / d).is_dir() for d in plugin_dirs):
        return "parse", "own-files"
    if argv[0] == "layers" and "--benchmark" not in words:
        return "run", "layers"
    if argv[0] in CHEAP_COMMANDS - {"layers"}:
        return "run", argv[0]
    if argv[0] in ("score", "run", "layers"):
        namespace, _ = parse(argv)
        pairs = _pairs(namespace) if namespace else []
        if argv[0] == "score" and pairs and all(any(fnmatch.fnmatchcase(m, mp) and fnmatch.fnmatchcase(b, bp)
                                                    for mp, bp in CHEAP_PAIRS) for m, b in pairs):
            return "run", "score"
    return "parse", "costly"


# ---- comparing what a command printed with what its page shows ---------------------------------------------------
_WILD = [
    (re.compile(r"(?:sqlite:///)?/[^\s,;)\]]+"), r"(?:sqlite:///)?/[^\s,;)\]]+"),  # paths, database URLs
    (re.compile(r"\d{4}-\d\d-\d\d(?: \d\d:\d\d(?::\d\d)?)?"), r"\d{4}-\d\d-\d\d(?: \d\d:\d\d(?::\d\d)?)?"),  # dates
    (re.compile(r"\b\d\d:\d\d:\d\d\b"), r"\d\d:\d\d:\d\d"),  # clock times
    (re.compile(r"\b\d+(?:\.\d+)? s\b"), r"[\d.]+ s"),  # durations
    (re.compile(r"\.\.\.|…"), r".*?"),
]


def line_pattern(line: str) -> re.Pattern:
    """A documented output line as a pattern: paths, dates, clock times, durations and ``...`` match anything of
    their kind; every other character (scores, counts, words) must be as shown; runs of spaces match any run."""
    pieces, position = [], 0
    spans = sorted((m.start(), m.end(), repl) for rx, repl in _WILD for m in rx.finditer(line))
    for start, end, repl in spans:
        if start < position:
            continue
        pieces.append(re.escape(line[position:start]))
        pieces.append(repl)
        position = end
    pieces.append(re.escape(line[position:]))
    return re.compile(re.sub(r"(?:\\ |\\\t)+", r"[ \\t]+", "".join(pieces)))


def compare_output(shown: list[str], stdout: str, stderr: str) -> list[str]:
    """Documented lines missing from what the command printed: in order on stdout, or anywhere on stderr."""
    actual = [line.rstrip() for line in stdout.splitlines()]
    errors = [line.rstrip() for line in stderr.splitlines()]
    missing, position = [], 0
    for line in shown:
        if not line.strip() or line.strip() in ("...", "…"):
            continue
        pattern = line_pattern(line.rstrip())
        for k in range(position, len(actual)):
            if pattern.fullmatch(actual[k]):
                position = k + 1
                break
        else:
            if not any(pattern.fullmatch(e) for e in errors):
                missing.append(line.rstrip())
    return missing


def expected_prints(code: str) -> list[str]:
    """``print(...)  # text`` lines of a python block: the texts, in order."""
    return [match.group(1).strip() for match in re.finditer(r"^\s*print\(.*\)\s+#\s?(.*)$", code, re.M)]


def main() -> int:
    for path in pages():
        found, python = page_items(path)
        for command in found:
            mode, why = how_checked(command)
            print(f"{mode:5} {why:12} {command}")
        for block in python:
            print(f"python       {block.page}:{block.line}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "src"))
    raise SystemExit(main())
