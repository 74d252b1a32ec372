"""Assemblies: averaging over repetitions (order as the reference), alignment, netCDF round trip."""
import numpy as np
import pytest

from brainscore.data import (NeuroidAssembly, align_presentations, average_repetition, presentation_order, read_netcdf,
                             write_netcdf)
from brainscore.errors import AlignmentError, ValidationError


def _assembly(ids, reps, values, first_coord=None):
    coords = {}
    if first_coord is not None:
        coords["zzz_obj"] = ("presentation", first_coord)
    coords.update({"stimulus_id": ("presentation", ids), "repetition": ("presentation", reps),
                   "neuroid_id": ("neuroid", ["n0", "n1"])})
    return NeuroidAssembly(np.asarray(values, float), dims=("presentation", "neuroid"), coords=coords)


def test_average_repetition_by_hand():
    a = _assembly(["b", "a", "b", "a"], [0, 0, 1, 1], [[1, 2], [3, 4], [5, 6], [np.nan, 8]])
    mean = average_repetition(a)
    assert list(mean["stimulus_id"].values) == ["a", "b"]  # sorted, as the reference's groupby
    np.testing.assert_allclose(mean.values, [[3, 6], [3, 4]])  # NaN repeat ignored
    assert "repetition" not in mean.coords and isinstance(mean, NeuroidAssembly)


def test_average_repetition_orders_by_first_coordinate():
    # the reference sorts groups by the tuple of coords in stored order, not by stimulus_id
    a = _assembly(["a", "b", "a", "b"], [0, 0, 1, 1], np.arange(8).reshape(4, 2), first_coord=["z", "y", "z", "y"])
    assert list(average_repetition(a)["stimulus_id"].values) == ["b", "a"]


def test_align_presentations_reorders_and_complains():
    target = _assembly(["a", "b", "c"], [0, 0, 0], np.zeros((3, 2))).drop_vars("repetition")
    source = _assembly(["c", "a", "b", "d"], [0] * 4, [[3, 3], [1, 1], [2, 2], [9, 9]]).drop_vars("repetition")
    aligned, _ = align_presentations(source, target)
    assert list(aligned["stimulus_id"].values) == ["a", "b", "c"]
    np.testing.assert_array_equal(aligned.values[:, 0], [1, 2, 3])
    with pytest.raises(AlignmentError, match="no presentation for 1 stimulus_id"):
        align_presentations(source.isel(presentation=[0, 1]), target)


def test_presentation_order_puts_values_in_the_wanted_order():
    values = np.array(["c", "a", "b", "d"])
    order = presentation_order(values, ["a", "b", "c"])
    assert order.tolist() == [1, 2, 0]  # values[order] == wanted; "d" (not wanted) is left out
    assert presentation_order(values, ["b", "b", "a"]).tolist() == [2, 2, 1]  # a wanted id may repeat
    assert presentation_order(np.arange(5)[::-1], [0, 4]).tolist() == [4, 0]


def test_presentation_order_names_the_missing_ids():
    with pytest.raises(AlignmentError) as error:
        presentation_order(["a", "b"], ["a", "x", "y", "x"], sides=("model", "benchmark"))
    assert str(error.value).startswith("the model has no presentation for 2 stimulus_id values of the benchmark, "
                                       "e.g. ['x', 'y']; both must hold the same stimulus_id values")
    with pytest.raises(AlignmentError, match=r"the target has no presentation for 1 stimulus_id values of the source, "
                                             r"e.g. \['z'\]"):
        presentation_order(["a", "b", "z"], ["b", "a"], complete=True)  # complete: the same set on both sides
    with pytest.raises(AlignmentError, match="numbers .* strings"):
        presentation_order([0, 1], ["0", "1"])  # 0 never equals "0": the type is named, not 2 "missing" ids


def test_presentation_order_repeats_raise_or_take_the_first():
    values = ["a", "b", "a", "c"]
    with pytest.raises(AlignmentError, match=r"the source repeats stimulus_id values \['a'\]; average over "
                                             r"repetitions first"):
        presentation_order(values, ["c", "a"])
    assert presentation_order(values, ["c", "a", "b"], repeats="first").tolist() == [3, 0, 1]
    # "aligned": repetitions pass only when already in the wanted order, position by position
    assert presentation_order(values, values, repeats="aligned").tolist() == [0, 1, 2, 3]
    with pytest.raises(AlignmentError, match="repeats"):
        presentation_order(values, ["b", "a", "a", "c"], repeats="aligned")
    with pytest.raises(AlignmentError, match=r"the target repeats stimulus_id values \['b'\]"):
        presentation_order(["a", "b"], ["b", "b"], wanted_unique=True)
    with pytest.raises(ValueError, match="repeats must be one of"):
        presentation_order(values, values, repeats="last")


def test_align_presentations_rejects_repeats_on_either_side():
    target = _assembly(["a", "b"], [0, 0], np.zeros((2, 2)))
    source = _assembly(["a", "b", "a"], [0, 0, 1], np.zeros((3, 2)))
    with pytest.raises(AlignmentError, match=r"source \(model\) repeats stimulus_id values \['a'\]"):
        align_presentations(source, target)
    with pytest.raises(AlignmentError, match=r"the target repeats stimulus_id values \['a'\]"):
        align_presentations(target, source)


def test_netcdf_round_trip(tmp_path):
    a = _assembly(["a", "b"], [0, 0], [[1.5, 2], [3, 4]])
    a.attrs["identifier"] = "toy"
    back = read_netcdf(write_netcdf(a, tmp_path / "a.nc"))
    np.testing.assert_array_equal(back.values, a.values)
    assert list(back["stimulus_id"].values) == ["a", "b"] and back.attrs["identifier"] == "toy"
    assert not list(tmp_path.glob("*.part"))


def test_validate_names_missing_coordinate():
    a = NeuroidAssembly(np.zeros((2, 2)), dims=("presentation", "neuroid"),
                        coords={"stimulus_id": ("presentation", ["a", "b"])})
    with pytest.raises(ValidationError, match="neuroid_id"):
        a.validate()


def test_dask_is_imported_only_when_used_and_dask_arrays_still_work(tmp_path):
    """Assemblies and netCDF files need no dask; once dask is imported, xarray sees its arrays as before."""
    import json
    import subprocess
    import sys
    import textwrap

    write_netcdf(NeuroidAssembly(np.arange(6.0).reshape(3, 2), dims=("presentation", "neuroid"), coords={
        "stimulus_id": ("presentation", ["a", "b", "c"]), "neuroid_id": ("neuroid", ["n0", "n1"])}), tmp_path / "a.nc")
    script = textwrap.dedent(f"""
        import json, sys
        import numpy as np
        from brainscore.data import NeuroidAssembly, read_netcdf
        a = NeuroidAssembly(np.arange(6.0).reshape(3, 2), dims=("presentation", "neuroid"),
                            coords={{"stimulus_id": ("presentation", ["a", "b", "c"]), "neuroid_id": ("neuroid", ["n0", "n1"])}})
        back = read_netcdf({str(tmp_path / "a.nc")!r})  # writing a file asks dask for its scheduler; reading does not
        before = "dask" in sys.modules
        import dask.array as da
        import xarray as xr
        from xarray.namedarray.utils import is_duck_dask_array
        lazy = xr.DataArray(da.ones((4, 3), chunks=2), dims=("x", "y"))
        print(json.dumps({{"dask_before": before, "equal": bool((back.values == a.values).all()),
                          "chunks": [list(c) for c in lazy.chunks], "is_dask": is_duck_dask_array(lazy.data),
                          "numpy_is_dask": is_duck_dask_array(np.ones(2)), "sum": float((lazy * 2).sum().compute())}}))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout.strip().splitlines()[-1]) == {
        "dask_before": False, "equal": True, "chunks": [[2, 2], [2, 1]], "is_dask": True, "numpy_is_dask": False,
        "sum": 24.0}
