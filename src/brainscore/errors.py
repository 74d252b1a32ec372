"""Exceptions raised by brainscore. Each message says what is wrong and how to fix it."""
from __future__ import annotations


class BrainScoreError(Exception):
    """Base class of every error brainscore raises on purpose."""


class UnknownIdentifierError(BrainScoreError, KeyError):
    """An identifier is not registered. The message lists the closest known identifiers."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class DataNotFoundError(BrainScoreError, FileNotFoundError):
    """A declared data file is in no mirror and could not be downloaded."""


class HashMismatchError(BrainScoreError, ValueError):
    """A file's content hash differs from the declared one (corrupt or wrong file)."""


class NetworkError(BrainScoreError, ConnectionError):
    """A download failed because the remote could not be reached."""


class PermissionDeniedError(BrainScoreError, PermissionError):
    """A remote refused access (wrong or missing credentials)."""


class AlignmentError(BrainScoreError, ValueError):
    """Two assemblies (or an assembly and a stimulus set) do not hold the same stimuli."""


class ValidationError(BrainScoreError, ValueError):
    """A stimulus set or assembly does not follow the data standard."""


#: the one command that installs the optional model zoo (torchvision, timm), quoted in every message
ZOO_INSTALL = 'python -m pip install -e ".[zoo]"'


class HomeUnusableError(BrainScoreError, OSError):
    """``$BRAINSCORE_HOME`` is a file, or a folder that cannot be created or written to."""


class MissingDependencyError(BrainScoreError, ImportError):
    """An optional package is not installed. The message gives the one command that installs it."""


class PluginImportError(BrainScoreError, ImportError):
    """A plugin module failed to import; raised when one of its identifiers is asked for."""


class NoSelectionDataError(BrainScoreError, LookupError):
    """A region has no selection benchmark, so its layer cannot be chosen on data.

    A :class:`~brainscore.models.commitment.ModelCommitment` then commits the region by the
    relative-depth rule (:mod:`brainscore.models.layer_rule`) instead.
    """


class PluginConflictError(BrainScoreError, ValueError):
    """Two plugins declare one identifier (e.g. a plugin folder re-using a built-in model's name); the
    message names both."""


class WeightsChangedWarning(UserWarning):
    """A model's weights differ from those of an earlier build of the same model, in this process or in its records.

    The usual cause is a network initialised at random without a seed (``weights=None``): each build, and
    each process, scores another network under the same name, and scores differ from run to run.
    """


#: How to make an untrained network's weights the same on every build (quoted by :class:`WeightsChangedWarning`).
SEED_HINT = ("seed the network where its plugin builds it (`torch.manual_seed(0)` just before constructing it, as "
             "brainscore's torchvision:<arch>-untrained models do), or load fixed weights from a file with a declared "
             "sha256")
