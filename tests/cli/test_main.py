"""The command's entry point: --version, and a start-up light enough for --help and list."""
from __future__ import annotations

import subprocess
import sys
from importlib.metadata import version

from brainscore.cli import main


def test_version(capsys):
    try:
        main(["--version"])
    except SystemExit as exit_:
        assert exit_.code == 0
    assert capsys.readouterr().out.strip() == f"brainscore {version('brainscore')}"


HEAVY = ("torch", "sklearn", "xarray", "pandas", "matplotlib", "scipy")


def test_help_and_list_import_no_heavy_package():
    """Start-up cost is the imports: --help and list must not pay for the scientific stack."""
    code = ("import sys; from brainscore.cli import main\n"
            "for argv in (['list', 'benchmarks'], ['list', 'models'], ['config', 'show']): main(argv)\n"
            "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "[]"


def test_lazy_package_keeps_every_documented_name():
    import brainscore

    for name in brainscore.__all__:
        assert getattr(brainscore, name) is not None, name
    assert callable(brainscore.score) and brainscore.Score.__name__ == "Score"
    assert "score" in dir(brainscore)
