"""``brainscore submit``, ``serve`` and ``leaderboard`` say clearly what went wrong and print what they hold
whole (issue 25 #3, #7, #12)."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import brainscore
from brainscore.cli import main
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome

SRC = Path(__file__).resolve().parents[2] / "src"
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: nothing listens there


def test_submit_to_a_server_that_is_not_there_says_so(tmp_path, capsys):
    """#3: a raw httpx.ConnectError traceback before."""
    plugin = tmp_path / "p.zip"
    plugin.write_bytes(b"PK\x05\x06" + b"\0" * 18)
    server = f"http://127.0.0.1:{_closed_port()}"
    assert main(["submit", str(plugin), "--server", server, "--token", "t"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: could not reach {server} (ConnectError: ")
    assert "is `brainscore serve` running there, and is the address right?" in err and "Traceback" not in err


def test_serve_on_a_busy_port_fails_before_printing_its_url(tmp_path):
    """#12: it printed "brainscore website on http://..." and then failed to bind."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run([sys.executable, "-m", "brainscore", "serve", "--port", str(port), "--db",
                               f"sqlite:///{tmp_path / 'r.sqlite'}"], env={**ENV, "BRAINSCORE_HOME": str(tmp_path)},
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"error: cannot serve on 127.0.0.1:{port}: Address already in use; another program listens "
                           f"on port {port}; choose another with --port\n")


def test_leaderboard_table_names_the_database_and_keeps_long_model_names(tmp_path):
    """#7: the caption showed ``<Database sqlite:////...>`` and model names were cut (``efficien…``) at 80
    columns and when piped."""
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    db = Database(url)
    models = ["efficientnet-lite0-with-a-rather-long-identifier", "resnet18-untrained-and-another-long-name"]
    for i, model in enumerate(models):
        record(Outcome.from_score(brainscore.Score.of(0.3 + 0.1 * i, model_identifier=model,
                                                      benchmark_identifier="Mur2013-rdm", benchmark_version=1,
                                                      raw=brainscore.Score.of(0.3))), db)
    for columns in ("80", "200"):
        out = subprocess.run([sys.executable, "-m", "brainscore", "leaderboard", "--db", url],  # piped
                             env={**ENV, "COLUMNS": columns}, capture_output=True, text=True, timeout=120,
                             check=True).stdout
        for model in models:
            assert model in out, (columns, out)
        assert "(k): benchmarks without a score" in out and f"scores from {url}\n" in out and "<Database" not in out


def test_leaderboard_caption_hides_a_password():
    from brainscore.cli.leaderboard import _where

    class Stored:
        url = "postgresql://alice:s3cret@db.example.org/brainscore"

    assert _where(Stored()) == "postgresql://alice:***@db.example.org/brainscore"


def test_serve_page_max_age_defaults_to_one_second_and_refuses_a_negative(capsys):
    """`brainscore serve --page-max-age-s S`: the shared pages lag new scores by at most S seconds (1 by default)."""
    import pytest

    from brainscore.cli import build_parser
    from brainscore.cli.serve import _app_arguments

    assert _app_arguments(build_parser().parse_args(["serve"]))["page_max_age"] == 1.0
    assert _app_arguments(build_parser().parse_args(["serve", "--page-max-age-s", "0"]))["page_max_age"] == 0.0
    for bad in ("-1", "nan", "soon"):
        with pytest.raises(SystemExit) as exit_:
            build_parser().parse_args(["serve", "--page-max-age-s", bad])
        assert exit_.value.code == 2
    assert "--page-max-age-s" in capsys.readouterr().err
