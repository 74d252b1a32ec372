"""`brainscore reproduce RECORD_ID`: a record re-run with its recorded settings gives the same bits, and a changed
data file is named.

The record is made by `brainscore score` with the `pixels` model on Kriegeskorte2008.IT-rdm (real data from the
shared mirror, seconds). Data changes happen in a copy of the mirror's kriegeskorte2008 folder under tmp_path;
the shared data are never written.
"""
from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from PIL import Image

import brainscore
from brainscore.caching import file_sha256
from brainscore.cli import main
from brainscore.data.store import Source
from brainscore.results import Database, record
from brainscore.scoring.outcome import Outcome

MODEL, BENCHMARK = "pixels", "Kriegeskorte2008.IT-rdm"
IMAGE = "kriegeskorte2008/images92/img01.png"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A results database holding one score of pixels on Kriegeskorte2008.IT-rdm, recorded by `brainscore score`."""
    url = f"sqlite:///{tmp_path_factory.mktemp('reproduce') / 'results.sqlite'}"
    assert main(["score", "--model", MODEL, "--benchmark", BENCHMARK, "--bootstrap", "50", "--db", url]) == 0
    stored, = Database(url).scores()
    return url, stored


@pytest.fixture
def changed_mirror(tmp_path, shared_data, monkeypatch):
    """A copy of the mirror's kriegeskorte2008 folder with the middle of img01.png inverted, used as the data mirror."""
    mirror = tmp_path / "mirror"
    shutil.copytree(shared_data / "kriegeskorte2008", mirror / "kriegeskorte2008")
    path = mirror / IMAGE
    path.chmod(0o644)
    pixels = np.array(Image.open(path))
    pixels[40:140, 40:140] = 255 - pixels[40:140, 40:140]  # the object, not the grey surround
    Image.fromarray(pixels).save(path)
    monkeypatch.setenv("BRAINSCORE_DATA_MIRROR", str(mirror))
    return path


def test_a_record_reproduces_bit_for_bit_and_is_not_recorded_again(recorded, capsys):
    url, stored = recorded
    capsys.readouterr()
    assert main(["reproduce", str(stored.id), "--db", url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["matches"] is True and report["record"] == stored.id
    values = {v["name"]: v for v in report["values"]}
    assert values["score"]["rerun_hex"] == float(stored.score).hex() == values["score"]["recorded_hex"]
    assert values["raw"]["rerun_hex"] == float(stored.raw).hex()
    assert values["ceiling"]["rerun_hex"] == float(stored.ceiling).hex()
    assert values["error"]["rerun_hex"] == float(stored.error).hex()
    assert (values["ci95_low"]["rerun"], values["ci95_high"]["rerun"]) == stored.ci95
    assert report["settings"]["bootstrap"] == 50 and report["settings"]["bootstrap_seed"] == 0
    assert report["settings"]["cache"].startswith("bypassed")
    # every data file the record names was read again and hashed: 92 images and 2 .mat files
    assert report["data_files_checked"] == len(stored.provenance["benchmark"]["data_files"]) == 94
    assert report["changed_data_files"] == []
    assert not [c for c in report["provenance_changes"] if c["item"].startswith(("benchmark", "model", "environment"))]
    assert [s.id for s in Database(url).scores(include_failed=True)] == [stored.id]  # nothing new recorded


def test_the_text_report_says_matches_with_the_bits(recorded, capsys):
    url, stored = recorded
    capsys.readouterr()
    assert main(["reproduce", str(stored.id), "--db", url]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"record #{stored.id}: {MODEL} on {BENCHMARK} (benchmark version 1)")
    assert "bootstrap 50 resamples, seed 0" in out[1] and "layer IT -> pixels (declared)" in out[1]
    assert out[2] == "data files: 94 of 94 recorded files read again and hashed, all unchanged"
    assert out[3].startswith(f"MATCHES bit for bit: score {float(stored.score).hex()} ({stored.score!r})")


def test_a_changed_data_file_is_named_with_both_hashes(recorded, changed_mirror, capsys):
    url, stored = recorded
    recorded_sha = stored.provenance["benchmark"]["data_files"][IMAGE]
    now_sha = file_sha256(changed_mirror)
    assert now_sha != recorded_sha
    capsys.readouterr()
    assert main(["reproduce", str(stored.id), "--db", url]) == 1
    out = capsys.readouterr().out
    assert (f"data file {IMAGE} changed since the record: recorded sha256 {recorded_sha}, {changed_mirror} now has "
            f"sha256 {now_sha}") in out
    assert "94 of 94 recorded files read again and hashed, 1 changed since the record" in out
    assert "the rerun failed: HashMismatchError" in out  # the store refuses the file: its declared hash is the old one
    assert out.splitlines()[-1] == (f"DIFFERS from record #{stored.id}: the rerun failed and gives no score: 1 data "
                                    f"file changed since the record ({IMAGE})")


def test_data_republished_with_a_new_hash_gives_other_numbers_and_names_the_file(recorded, changed_mirror, monkeypatch,
                                                                                 capsys):
    """The data plugin now declares the changed image (a new release): the rerun runs and its numbers differ."""
    from brainscore.plugins.data import kriegeskorte2008

    url, stored = recorded
    now_sha = file_sha256(changed_mirror)
    monkeypatch.setitem(kriegeskorte2008.IMAGE_SOURCES, "img01.png", Source(IMAGE, now_sha, None))
    capsys.readouterr()
    assert main(["reproduce", str(stored.id), "--db", url, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["matches"] is False and report["rerun_failure"] is None
    values = {v["name"]: v for v in report["values"]}
    assert not values["score"]["equal"] and values["score"]["recorded"] == stored.score
    assert values["score"]["difference"] == values["score"]["rerun"] - stored.score != 0
    assert values["ceiling"]["equal"]  # the ceiling depends on the brain RDMs only, which did not change
    changes = {c["item"]: c for c in report["provenance_changes"]}
    item = f"benchmark.data_files[{IMAGE}]"
    assert changes[item]["recorded"] == stored.provenance["benchmark"]["data_files"][IMAGE]
    assert changes[item]["now"] == now_sha
    assert [c["item"] for c in report["provenance_changes"] if c["item"].startswith("benchmark")] == [item]

    capsys.readouterr()
    assert main(["reproduce", str(stored.id), "--db", url]) == 1
    out = capsys.readouterr().out
    assert f"DIFFERS from record #{stored.id}:" in out and "  score     recorded " in out
    assert f"  {item}: recorded {stored.provenance['benchmark']['data_files'][IMAGE]}, now {now_sha}" in out


def test_record_writes_the_rerun_as_a_new_row_naming_the_original(recorded, tmp_path, capsys):
    url, stored = recorded
    copy = tmp_path / "copy.sqlite"
    shutil.copy(url.removeprefix("sqlite:///"), copy)
    assert main(["reproduce", str(stored.id), "--db", f"sqlite:///{copy}", "--record"]) == 0
    first, rerun = Database(f"sqlite:///{copy}").scores()
    assert first.id == stored.id and rerun.provenance["reproduction_of"] == stored.id
    assert float(rerun.score).hex() == float(stored.score).hex()
    assert rerun.provenance_key == stored.provenance_key  # the same computation: reproduction_of is not in the key
    assert f"the rerun was recorded as #{rerun.id}" in capsys.readouterr().out


def test_an_unknown_record_id_is_bad_input_naming_how_to_list_records(recorded, capsys):
    url, stored = recorded
    assert main(["reproduce", "999", "--db", url]) == 2
    err = capsys.readouterr().err
    assert "no score is recorded as #999" in err and "brainscore records" in err
    assert main(["records", "--db", url]) == 0
    assert capsys.readouterr().out.startswith(f"#{stored.id}\t{MODEL}\t{BENCHMARK} v1\t{stored.score:.4f}\t")


def test_a_record_without_provenance_cannot_be_reproduced(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    typed = brainscore.Score.of(0.5, model_identifier=MODEL, benchmark_identifier=BENCHMARK, benchmark_version=1)
    row = record(Outcome.from_score(typed), url)
    assert main(["reproduce", str(row), "--db", url]) == 2
    assert f"record #{row} ({MODEL} on {BENCHMARK}) has no provenance" in capsys.readouterr().err


def test_a_layer_committed_by_the_rule_is_pinned_and_reproduces(tmp_path, capsys):
    """tiny-seeded-unmapped has no IT layer and IT no selection data: the rule commits `features`; the rerun pins it."""
    import runner_helpers

    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    assert main(["score", "--model", runner_helpers.UNMAPPED, "--benchmark", BENCHMARK, "--bootstrap", "20",
                 "--db", url]) == 0
    stored, = Database(url).scores()
    assert stored.provenance["model"]["commitment"]["method"] == "rule"
    capsys.readouterr()
    assert main(["reproduce", str(stored.id), "--db", url, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"]["pinned"] == {"IT": "features"}
    assert report["settings"]["model_kwargs"] == {"region_layer_map": {"IT": "features"}}
    assert report["matches"] and all(v["equal"] for v in report["values"])
    # pinning turns the method into 'declared' by construction: only the committed layer is compared
    assert not [c for c in report["provenance_changes"] if c["item"].startswith("model")]


def test_a_recorded_failure_without_settings_says_how_to_see_whether_it_still_fails(tmp_path, capsys):
    url = f"sqlite:///{tmp_path / 'r.sqlite'}"
    row = record(Outcome.from_failure(MODEL, BENCHMARK, RuntimeError("out of memory")), url)
    assert main(["reproduce", str(row), "--db", url]) == 2
    err = capsys.readouterr().err
    assert f"record #{row} is a failure of {MODEL} on {BENCHMARK} (RuntimeError: out of memory)" in err
    assert f"brainscore score --model {MODEL} --benchmark {BENCHMARK} --no-record" in err


def test_use_cache_reuses_verified_entries_and_still_matches(recorded, capsys):
    url, stored = recorded
    capsys.readouterr()
    assert main(["reproduce", str(stored.id), "--db", url, "--use-cache", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["settings"]["cache"] == "reused, each entry verified on read" and report["matches"]
