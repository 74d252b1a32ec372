"""Reading and writing assemblies and stimulus sets, including the reference's packaged format.

- Assemblies are stored as netCDF 4 (h5netcdf engine), the data variable ``data`` compressed with
  zlib level 9, as the reference packages them; plain coordinates only (no MultiIndex).
- Stimulus sets in the reference's packaged format are a CSV with a ``filename`` column plus a zip
  of the image files; :func:`load_packaged_stimulus_set` reads that layout.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Callable, Type

import numpy as np
import pandas as pd
import xarray as xr

from brainscore.data.assemblies import DataAssembly, NeuroidAssembly
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import DataNotFoundError, ValidationError


def write_netcdf(assembly: xr.DataArray, path: str | Path, compress: bool = True) -> Path:
    """Write ``assembly`` to ``path`` as netCDF, atomically (temporary file, then rename).

    MultiIndexes are reset to plain coordinates; attributes that netCDF cannot hold (DataFrames,
    arrays of objects, None) are dropped; object coordinates are stored as strings.

    Returns
    -------
    Path
        ``path``.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    da = xr.DataArray(assembly)
    indexes = [name for name, index in da.indexes.items() if isinstance(index, pd.MultiIndex)]
    if indexes:
        da = da.reset_index(indexes)
    da.attrs = {k: v for k, v in da.attrs.items() if isinstance(v, (str, int, float, np.number, list, tuple))
                and not isinstance(v, bool)}
    for name, coord in list(da.coords.items()):
        if coord.dtype == object:
            da = da.assign_coords({name: (coord.dims, coord.values.astype(str))})
    dataset = da.to_dataset(name="data")
    encoding = {"data": {"zlib": True, "complevel": 9}} if compress else {}
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    os.fchmod(fd, 0o644)  # a data file, readable by all like any other (mkstemp makes 0600): sandboxed scorers read it
    os.close(fd)
    try:
        dataset.to_netcdf(tmp, engine="h5netcdf", encoding=encoding)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_netcdf(path: str | Path, cls: Type[DataAssembly] = NeuroidAssembly) -> DataAssembly:
    """Read an assembly written by :func:`write_netcdf` or by the reference (variable ``data``).

    The values are loaded into memory and the file is closed.

    Raises
    ------
    DataNotFoundError
        If the file does not exist.
    ValidationError
        If the file is not netCDF 4 / HDF5 (garbage, truncated, another format), or holds no data
        variable; the message names the file.
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError(f"assembly file {path} does not exist{' (it is a folder)' if path.is_dir() else ''}; "
                                f"give the path of a netCDF (.nc) file")
    try:
        with xr.open_dataset(path, engine="h5netcdf") as dataset:
            names = list(dataset.data_vars)
            if not names:
                raise ValidationError(f"{path} holds no data variable; an assembly file has a variable 'data'")
            da = dataset["data" if "data" in names else names[0]].load()
    except (OSError, ValueError, KeyError, TypeError) as error:
        if isinstance(error, ValidationError):
            raise
        size = path.stat().st_size if path.exists() else 0
        raise ValidationError(f"{path} is not a readable netCDF 4 file ({size:,} bytes; {type(error).__name__}: "
                              f"{error}); write the assembly with brainscore.data.io.write_netcdf or xarray's "
                              f"to_netcdf(engine='h5netcdf')") from error
    # the reference stores stimulus ids under image_id in old files
    if "image_id" in da.coords and "stimulus_id" not in da.coords:
        da = da.assign_coords(stimulus_id=da["image_id"])
    return cls(da)


def load_packaged_stimulus_set(csv_path: str | Path, image_dir: str | Path,
                               identifier: str | None = None) -> StimulusSet:
    """Load a stimulus set packaged as the reference does: a CSV with ``filename`` + a folder of images.

    Parameters
    ----------
    csv_path : path
        CSV with a ``stimulus_id`` (or legacy ``image_id``) and a ``filename`` column.
    image_dir : path
        Folder the zip was extracted to; ``filename`` is relative to it.
    identifier : str, optional
        Name of the stimulus set.

    Raises
    ------
    ValidationError
        If a column is missing or a file does not exist.
    """
    frame = pd.read_csv(csv_path, dtype={"stimulus_id": str, "image_id": str})  # ids like '0001' stay text
    if "stimulus_id" not in frame and "image_id" in frame:
        frame["stimulus_id"] = frame["image_id"]
    for column in ("stimulus_id", "filename"):
        if column not in frame:
            raise ValidationError(f"{csv_path} has no {column!r} column; columns: {list(frame.columns)}")
    frame["stimulus_id"] = frame["stimulus_id"].astype(str)
    image_dir = Path(image_dir)
    paths = {sid: image_dir / name for sid, name in zip(frame["stimulus_id"], frame["filename"])}
    return StimulusSet(frame, identifier=identifier, stimulus_paths=paths).validate()


def load_cached_assembly(cache: Any, key: str, cls: type) -> Any | None:
    """The assembly cached under ``key`` in ``cache`` (a :class:`brainscore.caching.Cache`) as ``cls``, or None."""
    return cache.read(key, "nc", lambda path: read_netcdf(path, cls))


def save_cached_assembly(cache: Any, key: str, assembly: Any) -> Path:
    """Store ``assembly`` under ``key`` in ``cache`` as uncompressed netCDF (checksummed, atomic); returns its path."""
    return cache.write(key, "nc", lambda path: write_netcdf(assembly, path, compress=False))


def cached_assembly(cache: Any, key: str, cls: type, build: Callable[[], Any]) -> Any:
    """The assembly cached under ``key``, or ``build()``'s, stored; built under the entry's inter-process lock.

    A second process asking for the same entry waits for the first and reads its file; an entry
    that fails verification is reported, deleted and built again (see :mod:`brainscore.caching`).
    A freshly built assembly is returned as read back from its entry, so the first run sees exactly
    what every later run reads (memory layout and coordinate dtypes included: a transposed array
    summed in another order moved a PLS score by 1e-13 between a first and a cached run).
    """
    built = []

    def build_and_note():
        built.append(build())
        return built[-1]

    reader = lambda path: read_netcdf(path, cls)  # noqa: E731
    value = cache.read_or_write(key, "nc", reader, build_and_note,
                                lambda assembly, path: write_netcdf(assembly, path, compress=False))
    if built:  # built here: hand out what later runs will read
        stored = cache.read(key, "nc", reader)
        return value if stored is None else stored
    return value
