"""What a benchmark is: an experiment on a model, a metric, and the data's ceiling."""
from __future__ import annotations

import contextlib
import functools
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from brainscore import device as _device
from brainscore.caching import Cache, callable_identity, content_key
from brainscore.data.blocks import AssemblyBlocks, NeuroidBlocks
from brainscore.data.stimuli import StimulusSet
from brainscore.errors import ValidationError
from brainscore.metrics.device import computing_on
from brainscore.metrics.device import current as metric_device
from brainscore.metrics.score import Score
from brainscore.models.interface import BrainModel
from brainscore.progress import stage


@dataclass(frozen=True)
class Presentation:
    """One ``look_at`` of a benchmark's experiment, said before the model runs: what the model is set to do
    and the stimuli it is shown, as placed on its screen.

    Attributes
    ----------
    stimuli : StimulusSet
        The stimuli the model looks at (already placed on its screen, or as the files are for a
        benchmark that shows them unplaced).
    number_of_trials : int
    region : str, optional
        Record from this region (``start_recording(region, time_bins)``) ...
    time_bins : sequence of (start, end) ms, optional
    task : str, optional
        ... or answer this task (``start_task(task, fitting_stimuli)``, see
        :class:`~brainscore.models.interface.Task`).
    fitting_stimuli : optional
        The task's argument (e.g. the label set).
    """

    stimuli: StimulusSet
    number_of_trials: int = 1
    region: str | None = None
    time_bins: Any = None
    task: str | None = None
    fitting_stimuli: Any = None

    def show(self, candidate: BrainModel):
        """Set ``candidate`` to record (or to do the task) and let it look at the stimuli; its answer.

        Returns
        -------
        DataAssembly
            What ``candidate.look_at`` returns: ``presentation x neuroid [x time_bin]`` responses, or
            the task's answers.
        """
        if self.region is not None:
            candidate.start_recording(self.region, time_bins=self.time_bins)
        elif self.task is not None:
            candidate.start_task(self.task, self.fitting_stimuli)
        return candidate.look_at(self.stimuli, number_of_trials=self.number_of_trials)

    def show_blocks(self, candidate: BrainModel) -> NeuroidBlocks:
        """A recording's responses as :class:`~brainscore.data.blocks.NeuroidBlocks`, for a per-neuroid analysis.

        Where ``candidate`` can read its recording from its features on disk (``look_at_blocks``,
        e.g. :meth:`~brainscore.models.commitment.ModelCommitment.look_at_blocks`), nothing is loaded
        until a block is read, so a layer larger than memory can be analysed; otherwise the assembly
        of :meth:`show` is wrapped. Either way the values are those :meth:`show` returns.

        Raises
        ------
        ValidationError
            If this presentation is a task, not a recording.
        """
        if self.region is None:
            raise ValidationError("only a recording (a presentation with a region) can be read in neuroid blocks")
        look_at_blocks = getattr(candidate, "look_at_blocks", None)
        if look_at_blocks is not None:
            candidate.start_recording(self.region, time_bins=self.time_bins)
            blocks = look_at_blocks(self.stimuli, number_of_trials=self.number_of_trials)
            if blocks is not None:
                return blocks
        return AssemblyBlocks(self.show(candidate))

    def prepare(self, candidate: BrainModel) -> None:
        """Let ``candidate`` compute (and cache) what :meth:`show` needs, without holding the answer in memory.

        A recording that ``candidate`` can read in blocks (:meth:`show_blocks`) is only extracted
        to its features file; anything else is shown and the answer dropped.
        """
        if self.region is not None and getattr(candidate, "look_at_blocks", None) is not None:
            candidate.start_recording(self.region, time_bins=self.time_bins)
            if candidate.look_at_blocks(self.stimuli, number_of_trials=self.number_of_trials) is not None:
                return
        self.show(candidate)


class Benchmark(ABC):
    """An experiment run on a :class:`~brainscore.models.BrainModel` that returns a :class:`Score`.

    Attributes
    ----------
    identifier : str
        ``AuthorYear[.session].region-metric``, e.g. ``"Cowley2026.210325.V4-pls"``.
    version : int
        Bumped whenever the score a model gets could change.
    ceiling : Score
        How well the data agree with themselves; the best score a model could expect.
    parent : str
        Node of the leaderboard tree this benchmark sits under (``V1``, ``V2``, ``V4``, ``IT``,
        ``behavior_vision``, ``engineering_vision``, or a family node).
    bibtex : str
        Reference to the data's paper.
    score_range : (float, float)
        The ceiled scores this benchmark can give, ``(low, high)`` (``-inf``/``inf`` for no bound): (0, 1) unless
        a subclass declares another. The results database refuses a score outside it, or one that is not finite
        (:func:`brainscore.results.validity.check_outcome`), so a benchmark whose scores may leave [0, 1] (an
        explained variance over a noisy ceiling, a correlation over its ceiling) must say so.
    """

    identifier: str
    version: int
    parent: str
    bibtex: str
    score_range: tuple[float, float] = (0.0, 1.0)

    @property
    @abstractmethod
    def ceiling(self) -> Score:
        """The ceiling of this benchmark's data."""

    def load_data(self) -> bool:
        """Load what this benchmark scores against (its stimuli and its data, not its ceiling), now.

        A file that is missing or would be downloaded then shows here, not in the middle of a score
        (``brainscore fetch``, ``brainscore list benchmarks --check``). The default loads the
        ``assembly`` and ``stimulus_set`` attributes where the benchmark has them; a benchmark that
        loads its data some other way (lazily, inside ``__call__``) overrides it.

        Returns
        -------
        bool
            Whether it found data to load (False: this benchmark reads its data only when it scores).

        Raises
        ------
        BrainScoreError
            Whatever loading the data raises (e.g. :class:`~brainscore.errors.DataNotFoundError`).
        """
        return load_attributes(self)

    @abstractmethod
    def __call__(self, candidate: BrainModel, device: str | None = None) -> Score:
        """Run the experiment on ``candidate`` and return its (ceiled) score.

        ``device`` (e.g. ``"cuda"``, ``"cpu"`` for torch on the host; None: numpy) is where the
        metric and the ceiling compute; implementations take it with :func:`takes_device`.
        """

    def presentations(self, candidate: BrainModel) -> list[Presentation] | None:
        """What this benchmark will show ``candidate``, in order, without running it: its stimuli placed on the
        model's screen (which reads only ``candidate.visual_degrees()``) and what the model records or does.

        The runner's warm-up shows them to extract (and cache) the features the score then reads, so
        a benchmark whose experiment follows these presentations should return them and run them in
        its ``__call__`` (:meth:`Presentation.show`). The default, None, says "not known": the
        warm-up then leaves the extraction to the score itself.
        """
        return None

    def ceiling_on(self, device: str | None = None) -> Score:
        """The ceiling, computed with the metrics on ``device`` (None: numpy, or the caller's default).

        Raises
        ------
        DeviceError
            From :func:`brainscore.device.resolve`, if torch cannot serve ``device``.
        """
        with _on(device):
            return self.ceiling

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.identifier} v{self.version}>"


def load_data_of(benchmark: Any) -> bool:
    """Load what ``benchmark`` scores against now: its :meth:`Benchmark.load_data`, or for a benchmark of none of
    brainscore's classes its ``assembly`` and ``stimulus_set`` attributes. Returns whether it found data to load
    (False: it reads its data only when it scores); raises what loading raises (``brainscore fetch``,
    ``brainscore list --check``)."""
    load = getattr(benchmark, "load_data", None)
    return bool(load()) if callable(load) else load_attributes(benchmark)


def load_attributes(benchmark: Any) -> bool:
    """Read ``benchmark.assembly`` and ``benchmark.stimulus_set`` (properties that load); whether one was data."""
    loaded = False
    for name in ("assembly", "stimulus_set"):
        try:
            value = getattr(benchmark, name)
        except AttributeError:
            continue
        loaded |= not callable(value) or hasattr(value, "sizes") or hasattr(value, "columns")
    return loaded


def check_metric_call(identifier: str, metric: Any, call: str, positional: int = 0, keywords: Sequence[str] = (),
                      hint: str = "") -> None:
    """Check, when a benchmark is built, that its metric can be called as the benchmark will call it
    (``positional`` arguments, then ``keywords``), so a metric of another kind (a cross-validated ``pls`` given to
    a train/test benchmark, a ``*_split`` metric to a cross-validated one) fails before any model is recorded
    rather than after its activations. A callable whose signature Python cannot read is not checked, nor is None
    (a benchmark built for its data only, never scored).

    Parameters
    ----------
    identifier : str
        The benchmark's, for the message.
    metric : callable
        The benchmark's metric.
    call : str
        How the benchmark calls it, for the message (e.g. ``"metric(features, assembly)"``).
    positional : int
        The number of positional arguments it passes.
    keywords : sequence of str
        The keyword arguments it passes.
    hint : str
        What to use instead (e.g. ``"use load_metric('pls_split')"``).

    Raises
    ------
    ValidationError
        If ``metric`` is not callable or cannot bind those arguments; naming the benchmark, how it calls its metric,
        Python's reason and the hint.
    """
    import inspect

    if metric is None:
        return
    name = getattr(metric, "__qualname__", None) or type(metric).__name__
    if not callable(metric):
        raise ValidationError(f"benchmark {identifier!r}: its metric {metric!r} is not callable; it is called as "
                              f"{call}. {hint}".rstrip())
    try:
        signature = inspect.signature(metric)
    except (TypeError, ValueError):  # a builtin or an extension type: nothing to read
        return
    try:
        signature.bind(*([None] * positional), **{key: None for key in keywords})
    except TypeError as reason:
        raise ValidationError(f"benchmark {identifier!r} calls its metric as {call}, and its metric ({name}{signature}) "
                              f"cannot be called so ({reason}). {hint}".rstrip()) from None


def presentations_of(benchmark: Any, candidate: BrainModel) -> list[Presentation] | None:
    """``benchmark.presentations(candidate)`` where they are what its ``__call__`` shows, else None.

    A subclass that overrides ``__call__`` below the class that says the presentations (a plugin's
    own experiment on top of a built-in benchmark) may show something else: its presentations are
    then not known. Anything that is no :class:`Benchmark` (a reference-style object) says nothing.
    """
    if not isinstance(benchmark, Benchmark):
        return None
    mro = type(benchmark).__mro__

    def defining(name: str) -> int:
        return next(index for index, cls in enumerate(mro) if name in vars(cls))

    if defining("__call__") < defining("presentations"):
        return None
    return benchmark.presentations(candidate)


class BenchmarkBase(Benchmark):
    """Common state of benchmarks: identifier, version, parent, bibtex, and a cached ceiling.

    Parameters
    ----------
    identifier : str
    version : int
    ceiling_func : callable () -> Score, or None
        Computes the ceiling; None means the benchmark has none (ceiling 1, e.g. engineering).
    parent : str
    bibtex : str
    ceiling_key : callable () -> dict, optional
        Content the ceiling depends on (e.g. the data's values), added to its cache key so a cached
        ceiling is never served for other data under the same name.
    ceiling_identity : str, optional
        Names the ceiling computation in the cache key (default: ``ceiling_func``'s module, qualified
        name and line), so two ceilings of the same data never share a cached value.
    ceiling_code : sequence of callables or module names, optional
        The code that computes the ceiling, when ``ceiling_func`` is a wrapper around it: the source
        of these (and of the modules they import) is hashed into the cache key
        (:func:`brainscore.caching.code_hash`), so an edited ceiling is never served stale.
    """

    def __init__(self, identifier: str, version: int, ceiling_func: Callable[[], Score] | None,
                 parent: str, bibtex: str, ceiling_key: Callable[[], dict[str, Any]] | None = None,
                 ceiling_identity: str | None = None, ceiling_code: Sequence[Any] = ()):
        self.identifier = identifier
        self.version = version
        self.parent = parent
        self.bibtex = bibtex
        self._ceiling_func = ceiling_func
        self._ceiling_key = ceiling_key
        self._ceiling_identity = ceiling_identity or (callable_identity(ceiling_func) if ceiling_func else None)
        self._ceiling_code = [c for c in (ceiling_func, *ceiling_code) if c is not None]
        self._ceilings: dict[str | None, Score] = {}  # per metric device (None: numpy)

    @property
    def ceiling(self) -> Score:
        """The ceiling, computed once and cached on disk by content (identifier, version, data).

        Inside :func:`brainscore.metrics.device.computing_on` a device, the ceiling is computed there
        and cached under a key of its own (equal to the numpy value to rounding, not bit for bit).
        """
        device = metric_device()
        if device not in self._ceilings:
            if self._ceiling_func is None:
                ceiling = Score.of(1.0, error=0.0, note="no ceiling: scores are not normalised")
            else:
                extra = self._ceiling_key() if self._ceiling_key else {}
                if device is not None:  # absent on the numpy path: its keys are unchanged
                    extra = {**extra, "metric_device": device}
                key = content_key(kind="ceiling", benchmark=self.identifier, version=self.version,
                                  ceiling=self._ceiling_identity, **extra)
                # keyed on the code of the ceiling function's module and what it imports
                with stage(f"ceiling of {self.identifier}"):  # silent when cached
                    ceiling = Cache("ceilings", code=self._ceiling_code).get_or_compute(key, self._ceiling_func)
            self._ceilings[device] = ceiling
        return self._ceilings[device]


def _on(device: str | None) -> contextlib.AbstractContextManager:
    """The metrics' context for ``device`` (checked); nothing for None (the caller's default stays)."""
    if device is None:
        return contextlib.nullcontext()
    return computing_on(_device.resolve(device))


def takes_device(method: Callable[..., Any]) -> Callable[..., Any]:
    """Give a benchmark method (``__call__``, ``bootstrap``) a keyword ``device``, where its metrics compute.

    A benchmark builds its metric and ceiling once, without a device; called with ``device=`` (checked
    by :func:`brainscore.device.resolve`), the method runs inside
    :func:`brainscore.metrics.device.computing_on` that device, so every metric and ceiling left at
    ``device=None`` computes there (torch, results back as numpy) and the ceiling is cached apart
    from the numpy one. ``device=None`` leaves the default (numpy) unchanged.

    Raises
    ------
    DeviceError
        From :func:`brainscore.device.resolve`, before the method runs.
    """
    @functools.wraps(method)
    def on_device(self, *args: Any, device: str | None = None, **kwargs: Any) -> Any:
        with _on(device):
            return method(self, *args, **kwargs)

    return on_device
