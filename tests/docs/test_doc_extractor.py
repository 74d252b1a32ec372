"""The docs checker itself: it reads pages as a reader does and a broken example fails it.

Each check of ``docs_helpers`` is given a page with a deliberate mistake (an option that no longer exists, an
abbreviation, an unknown benchmark, a script option that is gone, a missing extra, a changed number) and must name
it; the same page without the mistake passes.
"""
from __future__ import annotations

import textwrap

import pytest

import docs_helpers as docs

PAGE = textwrap.dedent("""\
    # A page

    ```bash
    brainscore list benchmarks 'Kiani*'      # a comment
    BRAINSCORE_HOME=/tmp/h brainscore score --model pixels \\
        --benchmark Kiani2007.IT-rdm && brainscore records
    ```

    Some text.

    ```console
    $ brainscore score --model pixels --benchmark Kriegeskorte2008.IT-rdm
    score 0.1123 = raw / ceiling = 0.0583 / 0.5195
    model pixels on Kriegeskorte2008.IT-rdm in 27.2 s
    $ brainscore records
    #1\tpixels\tKriegeskorte2008.IT-rdm v1\t0.1123\t2026-11-25 17:26
    ```

    1. A list:
       ```bash
       brainscore run --models M --benchmarks B --cluster slurm
       ```

    <!-- docs-test: output -->
    ```
    #1  pixels
    ```

    <!-- docs-test: no-run it needs a day -->
    ```bash
    brainscore layers --model efficientnet-lite0
    ```

    ```python
    print(1 + 1)  # 2
    print("x")
    ```
    """)


def _commands(text: str) -> list[docs.Command]:
    return [c for block in docs.blocks(text, "page.md") for c in docs.commands(block)]


def _command(line: str, page: str = "page.md") -> docs.Command:
    (env, words), = docs.split_commands(line)
    return docs.Command(page, 1, line, words, env)


def test_blocks_languages_lines_and_markers():
    found = docs.blocks(PAGE, "page.md")
    assert [(b.lang, b.line) for b in found] == [("bash", 3), ("console", 11), ("bash", 20), ("", 25), ("bash", 30),
                                                ("python", 34)]
    assert found[2].text == "brainscore run --models M --benchmarks B --cluster slurm\n"  # dedented from the list
    assert found[3].marker == ("output", "") and found[4].marker == ("no-run", "it needs a day")


def test_commands_continuations_chains_environment_and_outputs():
    found = _commands(PAGE)
    assert [c.words[:2] for c in found] == [["brainscore", "list"], ["brainscore", "score"], ["brainscore", "records"],
                                            ["brainscore", "score"], ["brainscore", "records"], ["brainscore", "run"],
                                            ["brainscore", "layers"]]
    assert found[0].words == ["brainscore", "list", "benchmarks", "Kiani*"]  # quotes and comment gone
    assert found[1].env == {"BRAINSCORE_HOME": "/tmp/h"}
    assert found[1].brainscore_argv == ["score", "--model", "pixels", "--benchmark", "Kiani2007.IT-rdm"]
    assert found[1].line == found[2].line == 5
    assert found[3].output == ["score 0.1123 = raw / ceiling = 0.0583 / 0.5195",
                               "model pixels on Kriegeskorte2008.IT-rdm in 27.2 s"]
    assert found[4].output[0].startswith("#1\tpixels")
    assert found[0].output is None  # an unprompted bash block shows no output


def test_an_output_block_belongs_to_the_command_before_it(tmp_path):
    page = tmp_path / "page.md"
    page.write_text(PAGE)
    found, python = docs.page_items(page, root=tmp_path)
    run = next(c for c in found if c.brainscore_argv[:1] == ["run"])
    assert run.output == ["#1  pixels"]
    assert [b.line for b in python] == [34]


def test_the_page_as_written_passes_and_is_classified():
    found = _commands(PAGE)
    assert [docs.check(c) for c in found] == [[]] * len(found)
    assert [docs.how_checked(c) for c in found] == [
        ("run", "list"), ("run", "score"), ("run", "records"), ("run", "score"), ("run", "records"),
        ("parse", "cluster"), ("parse", "marked")]


@pytest.mark.parametrize("line, problem", [
    # an option that does not exist (any more): the parser refuses it
    ("brainscore score --model pixels --benchmark Kiani2007.IT-rdm --no-such-option",
     "unrecognized arguments: --no-such-option"),
    # an abbreviation argparse would accept: a renamed option would go unnoticed
    ("brainscore score --model pixels --bench Kiani2007.IT-rdm", "--bench is not an option of `brainscore score`"),
    ("brainscore scroe --model pixels", "invalid choice: 'scroe'"),
    ("brainscore score --model pixels --benchmark Kiani2008.IT-rdm", "no registered benchmark matches 'Kiani2008.IT-rdm'"),
    ("brainscore run --models 'nosuchnet*' --benchmarks '*'", "no registered model matches 'nosuchnet*'"),
    ("brainscore config set data_mirorr ../shared/data", "invalid choice: 'data_mirorr'"),
    ("brainscore list benchmark", "invalid choice: 'benchmark'"),
    ("brainscore score --model pixels", "the following arguments are required: --benchmark"),
    ("python perf/metrics.py --no-such-case", "perf/metrics.py takes no option --no-such-case"),
    ("python perf/no_such_script.py", "perf/no_such_script.py does not exist"),
    ('python -m pip install -e ".[zo]"', "pyproject.toml has no extra 'zo'"),
    ("python -m pytest tests/no_such_test.py", "tests/no_such_test.py does not exist"),
    ("BRAINSCORE_DATA_MIROR=x brainscore list models", "BRAINSCORE_DATA_MIROR is not an environment variable"),
    ("export BRAINSCORE_NO_SUCH=1", "BRAINSCORE_NO_SUCH is not an environment variable"),
    ("dask worker tcp://host:8786 --preload brainscore.runner.no_such_module", "no such module"),
    ("curl http://example.org", "unknown program 'curl'"),
    ("bash .ci/no_such_script", ".ci/no_such_script does not exist"),
    ("python -c 'from brainscore.runner.clusters import no_such_name'", "brainscore.runner.clusters has no no_such_name"),
])
def test_a_broken_command_is_named(line, problem):
    problems = docs.check(_command(line))
    assert any(problem in p for p in problems), problems


@pytest.mark.parametrize("line", [
    "brainscore score --model pixels --benchmark Kiani2007.IT-rdm",
    "brainscore run --models 'efficientnet-lite*,pixels' --benchmarks '*'",
    "brainscore config set data_mirror ../shared/data",
    "python perf/metrics.py --case Cowley",
    'python -m pip install -e ".[zoo]"',
    "BRAINSCORE_DATA_MIRROR=../shared/data brainscore list models",
    "brainscore score --model my-tiny-net --benchmark Cowley2026.210325.V4-pls --plugin-dir docs/examples/my_tiny_net",
    "brainscore --version",
])
def test_the_same_commands_spelled_right_pass(line):
    assert docs.check(_command(line)) == []


@pytest.mark.parametrize("line, reason", [
    ("brainscore serve --workers 2", "website"),
    ("brainscore submit docs/examples/my_tiny_net --server http://127.0.0.1:8000 --token TOKEN", "website"),
    ("brainscore reproduce 3 --server http://127.0.0.1:8000", "website"),
    ("brainscore run --models pixels --benchmarks '*' --scheduler tcp://host:8786", "cluster"),
    ("brainscore score --model pixels --benchmark Kiani2007.IT-rdm --device cuda", "gpu"),
    ("brainscore run --models M --benchmarks B", "placeholder"),
    ("brainscore data package --stimuli s.csv --stimulus-set-identifier MyLab2026 --assembly a.nc --identifier MyLab2026 --out p/",
     "own-files"),
    ("brainscore score --model efficientnet-lite0 --benchmark '*'", "costly"),
    ('python -m pip install -e ".[zoo]"', "install"),
    ("bash .ci/run", "test-suite"),
])
def test_commands_that_need_what_a_test_lacks_are_parsed_only_and_say_why(line, reason):
    assert docs.how_checked(_command(line)) == ("parse", reason)
    assert reason in docs.REASONS


def test_cheap_commands_run():
    for line in ("brainscore score --model pixels --benchmark 'Kiani*,Mur2013-rdm' --json",
                 "brainscore score --model efficientnet-lite0 --benchmark Cowley2026.210325.V4-pls",
                 "brainscore leaderboard", "brainscore reproduce 2", "brainscore layers --model efficientnet-lite0"):
        assert docs.how_checked(_command(line))[0] == "run", line


def test_a_changed_number_in_the_output_is_caught_and_paths_dates_durations_are_not():
    shown = ["score 0.1123 = raw / ceiling = 0.0583 / 0.5195", "...",
             "model pixels on Kriegeskorte2008.IT-rdm in 27.2 s",
             "recorded as #2 in sqlite:////home/you/.brainscore/results.sqlite",
             "#2\tpixels\tKriegeskorte2008.IT-rdm v1\t0.1123\t2026-11-25 17:26"]
    printed = ("score 0.1123 = raw / ceiling = 0.0583 / 0.5195\nci95  [0.0421, 0.1868]\n"
               "model pixels on Kriegeskorte2008.IT-rdm in 9.8 s\n"
               "recorded as #2 in sqlite:////tmp/pytest-1/results.sqlite\n"
               "#2\tpixels\tKriegeskorte2008.IT-rdm v1\t0.1123\t2027-01-02 03:04\n")
    assert docs.compare_output(shown, printed, "") == []
    assert docs.compare_output(shown, printed.replace("0.0583", "0.0584"), "") == [shown[0]]
    assert docs.compare_output(shown, printed.replace("#2 in", "#3 in"), "") == [shown[3]]
    assert docs.compare_output(shown[:1], "", "warning\nscore 0.1123 = raw / ceiling = 0.0583 / 0.5195\n") == []
    # in order on stdout: a line shown before another must be printed before it
    assert docs.compare_output([shown[2], shown[0]], printed, "") == [shown[0]]


def test_expected_prints_of_a_python_block():
    assert docs.expected_prints('x = 1\nprint(f"{x:.3f}")   # 1.000\nprint("no check")\n') == ["1.000"]


def test_python_code_is_compiled_and_its_imports_checked():
    assert docs.check_python_code("import brainscore\nfrom brainscore.metrics import Score\n") == []
    assert docs.check_python_code("from brainscore.metrics import NoSuchThing\n") == [
        "brainscore.metrics has no NoSuchThing"]
    assert docs.check_python_code("print(") and "not valid Python" in docs.check_python_code("print(")[0]
