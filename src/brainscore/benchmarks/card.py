"""What a benchmark's card counts in its data: stimuli, neuroids, repetitions, subjects, trials, RDMs.

A benchmark card (issue 25) tells a reader what a benchmark measures; its numbers must be the data's own.
:func:`data_counts` counts them in the loaded data of a built benchmark (its assembly, RDMs or stimulus
set, whichever it has), and ``tools/benchmark_cards.py`` writes them once into each benchmark plugin's
``card_counts.json``, so that the website shows them without loading any data; a test counts again and
compares.
"""
from __future__ import annotations

from typing import Any

__all__ = ["data_counts"]


def _unique(values) -> int:
    import numpy as np

    return int(len(np.unique(np.asarray(values).astype(str))))


def _coord(data, name: str):
    try:
        return data[name].values if name in data.coords else None
    except (AttributeError, KeyError, TypeError):
        return None


def data_counts(benchmark: Any) -> dict:
    """Counts of what ``benchmark``'s data hold (loads its data through its own loaders).

    Parameters
    ----------
    benchmark
        A built benchmark with any of the loaders ``_stimuli_source`` (a StimulusSet), ``_assembly_source``
        (a neural, behavioural or properties assembly) and ``_rdms_source`` (RDMs, ``rdm x presentation x
        presentation_b``).

    Returns
    -------
    dict
        The counts that apply, each an int: ``stimuli`` (distinct ``stimulus_id``), ``neuroids`` (the
        assembly's neuroid dimension: recorded sites, or cells with a published property value),
        ``repetitions_min`` / ``repetitions_max`` (repetitions per stimulus; 1 for repeat-averaged data),
        ``subjects`` (distinct ``subject``), ``trials`` (human trials: presentations of a behavioural
        assembly), ``rdms`` (measured RDMs); ``species`` (the data's ``species`` coordinate, when it has one).

    Raises
    ------
    ValueError
        If ``benchmark`` has none of the loaders.
    """
    loaders = {name: getattr(benchmark, name, None) for name in ("_stimuli_source", "_assembly_source", "_rdms_source")}
    if not any(loaders.values()):
        raise ValueError(f"{getattr(benchmark, 'identifier', benchmark)!r} has no data loader "
                         f"(_stimuli_source, _assembly_source or _rdms_source) to count")
    counts: dict[str, Any] = {}
    if loaders["_stimuli_source"] is not None:
        stimuli = loaders["_stimuli_source"]()
        counts["stimuli"] = _unique(stimuli["stimulus_id"])
    if loaders["_assembly_source"] is not None:
        data = loaders["_assembly_source"]()
        dims = tuple(getattr(data, "dims", ()))
        stimulus_ids = _coord(data, "stimulus_id")
        if "neuroid" in dims:
            counts["neuroids"] = int(data.sizes["neuroid"])
        if stimulus_ids is not None and "presentation" in dims:
            counts.setdefault("stimuli", _unique(stimulus_ids))
            if "neuroid" in dims:  # neural recordings: repetitions of each stimulus
                import numpy as np

                _, per_stimulus = np.unique(np.asarray(stimulus_ids).astype(str), return_counts=True)
                counts["repetitions_min"], counts["repetitions_max"] = int(per_stimulus.min()), int(per_stimulus.max())
            else:  # behaviour: one presentation per human trial
                counts["trials"] = int(data.sizes["presentation"])
        subjects = _coord(data, "subject")
        if subjects is not None:
            counts["subjects"] = _unique(subjects)
    if loaders["_rdms_source"] is not None:
        rdms = loaders["_rdms_source"]()
        counts["rdms"] = int(rdms.sizes["rdm"])
        counts.setdefault("stimuli", int(rdms.sizes["presentation"]))
        for name in ("subject", "species"):
            values = _coord(rdms, name)
            if values is not None:
                if name == "subject":
                    counts["subjects"] = _unique(values)
                else:
                    counts["species"] = ", ".join(sorted({str(v) for v in values}))
    return counts
