"""End to end in headless Chromium (Playwright for Python, Debian's ``chromium``) against a real
``brainscore serve``, whose submissions run on the Dask LocalCluster it starts (``--workers 1``).

One story, in order: register, log in, upload the tiny network of docs/models.md as a plugin zip, watch its
status reach done (scored on a Dask worker), find its row on the leaderboard with the score
``brainscore score`` gives, open its model page; hostile zips rejected with their reasons; a private
submission of the same network without a ``region_layer_map`` (its V4 layer chosen by layer
selection: the model page plots score vs layer) with a failing benchmark and its log; a second user
who can neither see the private model nor re-run its benchmarks; a form posted without its CSRF
token refused; neither the web process nor the Dask workers ever loaded torch. Screenshots go to the
test's output folder.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from brainscore.web.checks import extract
from brainscore.web.queue import write_entry_point
from browser_helpers import BROWSER_PASSWORD, chromium, register_in_browser, wait_until_serving
from host_helpers import free_port
from web_helpers import csrf, plugin_zip, symlink_zip, traversal_zip, zip_bomb

SRC = Path(__file__).resolve().parents[2] / "src"
BENCHMARK = "Cowley2026.210325.V4-pls"
FAILING = "Kriegeskorte2008.IT-rdm"  # the private net maps IT to a layer it does not have

pytestmark = pytest.mark.slow


server_process: list = [None]


def loaded_torch(pid: int) -> bool:
    """Whether process ``pid`` has torch's shared library mapped (it imported torch)."""
    return "libtorch" in Path(f"/proc/{pid}/maps").read_text()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("web")
    port = free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    log = open(folder / "server.log", "w")
    process = subprocess.Popen([sys.executable, "-m", "brainscore", "serve", "--port", str(port),
                                "--db", f"sqlite:///{folder / 'results.sqlite'}", "--time-limit-s", "600",
                                "--workers", "1"],
                               env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    wait_until_serving(url, process, folder / "server.log")
    server_process[0] = process
    yield url
    process.terminate()
    process.wait(timeout=20)
    log.close()


@pytest.fixture(scope="module")
def browser():
    with chromium() as browser:
        yield browser


def zip_file(name: str, data: bytes) -> dict:
    return {"name": name, "mimeType": "application/zip", "buffer": data}


def submit(page, url: str, name: str, data: bytes, benchmarks: list[str], private: bool = False) -> None:
    page.goto(url + "/submit")
    page.set_input_files("input[name=file]", zip_file(name, data))
    if private:
        page.check("input[value=private]")
    page.click("summary")
    page.select_option("select[name=benchmarks]", benchmarks)
    page.click("button:text('submit')")


UNMAPPED_MODEL = (Path(__file__).resolve().parents[2] / "docs" / "examples" / "my_tiny_net" / "model.py").read_text() \
    .replace('"region_layer_map": {"V4": "3"}, ', '"region_layer_map": {"IT": "9"}, ')  # V4 left to layer selection,
# IT declared on a layer the network lacks (a region with no map and no selection data would be committed by the rule)


def cli_score(tmp_path: Path, model_zip: bytes) -> float:
    """What ``brainscore score --json`` gives for the plugin, run in a process that has it installed."""
    site = tmp_path / "site"
    extract(model_zip, site)
    write_entry_point(site, "my_tiny_net", 0)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(SRC)])}
    out = subprocess.run([sys.executable, "-m", "brainscore", "score", "--model", "my-tiny-net", "--benchmark",
                          BENCHMARK, "--json"], env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])["score"]


def test_the_website_end_to_end(server, browser, tmp_path, shots):
    from playwright.sync_api import expect

    own = tmp_path / "screenshots"  # this walk's pages; its failed submission is docs/submission_failed.png
    own.mkdir()
    alice = browser.new_context(viewport={"width": 1400, "height": 900})
    page = alice.new_page()

    # register, log out, log in
    register_in_browser(page, server, "alice")
    page.click("button:text('log out')")
    page.goto(server + "/login")
    page.fill("input[name=username]", "alice")
    page.fill("input[name=password]", BROWSER_PASSWORD)
    page.click("button:text('log in')")
    page.wait_for_url(server + "/submissions")

    # upload the tiny network of docs/models.md and watch it reach done
    submit(page, server, "my_tiny_net.zip", plugin_zip(), [BENCHMARK])
    page.wait_for_url(f"{server}/submissions/*")
    status = page.locator("#status")
    assert status.text_content() in ("queued", "running", "done")
    # (expect, not wait_for_function: the page's Content-Security-Policy refuses the eval that one polls with)
    expect(page.locator("#status")).to_have_text("done", timeout=300_000)
    log = page.locator("#log").text_content()
    assert re.search(r"=== \[1/1\] my-tiny-net on Cowley2026\.210325\.V4-pls \(Dask worker tcp://127\.0\.0\.1:\d+\)", log)

    # its row on the leaderboard carries the score brainscore score gives
    expected = cli_score(tmp_path, plugin_zip())
    page.goto(server + "/?q=tiny")
    cell = page.locator(f'tr[data-model="my-tiny-net"] td[data-node="{BENCHMARK}"]')
    assert float(cell.get_attribute("data-score")) == pytest.approx(expected, abs=1e-6)
    assert cell.text_content().strip() == f"{expected:.3f}"
    page.goto(server + "/")
    page.screenshot(path=str(own / "leaderboard.png"), full_page=True)
    page.click("a:text('my-tiny-net')")
    page.wait_for_url(server + "/models/my-tiny-net")
    assert page.locator(f'tr[data-benchmark="{BENCHMARK}"] td.score').text_content().strip() == f"{expected:.4f}"
    assert page.locator("h2:text('Layer selection')").count() == 0  # its V4 layer was given, not chosen

    # hostile zips are rejected, each with its reason
    for name, data, reason in (("bomb.zip", zip_bomb(), "times its compressed size (a zip bomb?)"),
                               ("traversal.zip", traversal_zip(), "contains '..' (path traversal)"),
                               ("symlink.zip", symlink_zip(), "'link_net/weights.pt' is a symbolic link")):
        submit(page, server, name, data, [BENCHMARK])
        assert reason in page.locator("#problems").text_content(), name

    # a private model with a failing benchmark: failed, with its log
    private = plugin_zip(identifier="my-private-net", package="my_private_net",
                         extra={"my_private_net/model.py": UNMAPPED_MODEL})
    submit(page, server, "private.zip", private, [BENCHMARK, FAILING], private=True)
    page.wait_for_url(f"{server}/submissions/*")
    private_page = page.url
    expect(page.locator("#status")).to_have_text(re.compile(r"^(done|failed)$"), timeout=300_000)
    assert page.locator("#status").text_content() == "failed"
    assert "no sub-module '9'" in page.locator("#log").text_content()
    assert page.locator(f'tr[data-benchmark="{FAILING}"] button:text("re-run")').count() == 1
    page.screenshot(path=str(shots / "submission_failed.png"), full_page=True)
    assert page.locator(f'tr[data-benchmark="{BENCHMARK}"] .done').count() == 1

    # its V4 layer was chosen by layer selection: the model page plots score against layer, committed layer marked
    page.goto(server + "/models/my-private-net")
    plot = page.locator('img[src="/plots/models/my-private-net/layers/V4.svg"]')
    assert plot.count() == 1 and plot.evaluate("img => img.complete && img.naturalWidth > 0")
    curve = page.request.get(server + "/api/models/my-private-net").json()["layer_selection"]["V4"]
    assert list(curve["scores"]) == ["1", "3", "6"] and curve["layer"] == max(curve["scores"], key=curve["scores"].get)
    assert f"committed {curve['layer']}" in page.locator("figcaption").text_content()
    page.screenshot(path=str(own / "model.png"), full_page=True)
    page.goto(server + "/")
    assert page.locator('tr[data-model="my-private-net"]').count() == 1  # its owner sees it

    # a form posted without its CSRF token is refused
    assert page.request.post(server + "/account/tokens", form={}).status == 403

    # a second user neither sees the private model nor re-runs its benchmarks
    bob = browser.new_context().new_page()
    register_in_browser(bob, server, "bob")
    bob.goto(server + "/")
    assert bob.locator('tr[data-model="my-tiny-net"]').count() == 1
    assert bob.locator('tr[data-model="my-private-net"]').count() == 0
    assert bob.goto(server + "/models/my-private-net").status == 404
    assert bob.goto(private_page).status == 404
    assert "my-private-net" not in bob.request.get(server + "/api/leaderboard").text()
    token = bob.goto(server + "/submit") and bob.locator("input[name=csrf_token]").first.get_attribute("value")
    task_id = private_page.rsplit("/", 1)[1]
    rerun = bob.request.post(f"{server}/submissions/{task_id}/rerun", form={"benchmark": FAILING, "csrf_token": token})
    assert rerun.status == 404

    # its owner re-runs the failed benchmark with one click
    page.goto(private_page)
    page.click(f'tr[data-benchmark="{FAILING}"] button:text("re-run")')
    page.wait_for_url(f"{server}/submissions/*")
    assert page.url != private_page and f"re-run of {task_id}" in page.text_content("main")

    # the web process and its Dask workers never loaded torch: only the scoring children do
    import psutil

    processes = [psutil.Process(server_process[0].pid)] + psutil.Process(server_process[0].pid).children(recursive=True)
    assert len(processes) >= 2  # the server and at least its Dask worker (and its nanny)
    pair = ("brainscore.boundary.server", "brainscore.boundary.scorer")  # a re-run's two processes, not serving
    serving = [p for p in processes if not any(name in " ".join(p.cmdline()) for name in pair)]
    assert [p.cmdline() for p in serving if loaded_torch(p.pid)] == []


def test_brainscore_submit_from_the_command_line(server, tmp_path):
    import re

    with httpx.Client(base_url=server) as client:
        client.post("/register", data={"username": "carol", "password": "correct horse", "email": "carol@example.org",
                                       "csrf_token": csrf(client, "/register")})
        page = client.post("/account/tokens", data={"csrf_token": csrf(client, "/account")}).text
        token = re.search(r'id="token">([^<]+)<', page).group(1)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    command = [sys.executable, "-m", "brainscore", "submit", "--server", server, "--token", token,
               "--benchmarks", BENCHMARK]
    evil = tmp_path / "evil.zip"
    evil.write_bytes(traversal_zip())
    rejected = subprocess.run(command + [str(evil)], env=env, capture_output=True, text=True)
    assert rejected.returncode == 1
    assert "'evil_net/../../evil.py' contains '..' (path traversal)" in rejected.stderr
    folder = tmp_path / "carol_net"
    extract(plugin_zip(identifier="carol-net", package="carol_net"), tmp_path)
    accepted = subprocess.run(command + [str(folder), "--private"], env=env, capture_output=True, text=True)
    assert accepted.returncode == 0, accepted.stderr
    assert re.fullmatch(rf"submission ([\w-]{{22}}): queued \({re.escape(server)}/submissions/\1\)\n", accepted.stdout)
    wrong = subprocess.run(command[:-4] + ["--token", "not-a-token", str(folder)], env=env, capture_output=True, text=True)
    assert wrong.returncode == 2 and "401" in wrong.stderr


NO_MAP_MODEL = (Path(__file__).resolve().parents[2] / "docs" / "examples" / "my_tiny_net" / "model.py").read_text() \
    .replace('"region_layer_map": {"V4": "3"}, ', "")  # no region_layer_map at all
RULE_BENCHMARKS = ["Kriegeskorte2008.IT-rdm", "Kiani2007.IT-rdm"]  # IT: no map and no selection data -> the rule


def test_a_model_without_a_layer_map_scores_and_its_rule_layers_are_marked(server, browser, tmp_path):
    """Issue 22: a submission with no region_layer_map scores on every benchmark it asks for (IT committed by the
    relative-depth rule), the leaderboard marks those scores with the rule's symbol and legend and can hide them,
    and the model page's commitment table says how the layer was chosen."""
    from playwright.sync_api import expect

    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    register_in_browser(page, server, "dora")
    zipped = plugin_zip(identifier="no-map-net", package="no_map_net", extra={"no_map_net/model.py": NO_MAP_MODEL})
    submit(page, server, "no_map.zip", zipped, RULE_BENCHMARKS)
    page.wait_for_url(f"{server}/submissions/*")
    expect(page.locator("#status")).to_have_text(re.compile(r"^(done|failed)$"), timeout=300_000)
    assert page.locator("#status").text_content() == "done", page.locator("#log").text_content()

    page.goto(server + "/?q=no-map")
    row = page.locator('tr[data-model="no-map-net"]')
    for benchmark in RULE_BENCHMARKS:
        cell = row.locator(f'td[data-node="{benchmark}"]')
        assert cell.get_attribute("data-score") != "" and cell.locator(".rule-mark").text_content() == "†"
        assert "layer committed by the rule" in cell.get_attribute("title")
    assert row.locator('td[data-node="IT"] .rule-mark').text_content() == "†2"
    legend = page.locator("#rule-legend")
    assert legend.is_visible() and "relative-depth rule" in legend.text_content()
    page.screenshot(path=str(tmp_path / "rule_marker.png"), full_page=True)
    page.check("input[name=norule]")
    page.click("button:text('filter')")
    page.wait_for_url(f"{server}/?*norule=1*")
    assert page.locator('tr[data-model="no-map-net"]').count() == 0

    page.goto(server + "/models/no-map-net")
    it = page.locator('#commitments tr[data-region="IT"]')
    assert it.get_attribute("data-method") == "rule"
    assert it.locator("code").text_content() == "6"  # candidates 1, 3, 6: round(0.809 * 2) = 2
    assert "relative depth 0.809 -> candidate 3 of 3" in it.text_content()
