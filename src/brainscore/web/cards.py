"""Model cards: what a model is, from its plugin's ``metadata.yml`` (the reference Brain-Score's fields), its
sources and its recorded scores, read without running any of its code (the web process never imports torch).

``metadata.yml`` as the reference writes it::

    models:
      my-model:
        architecture: DCNN
        model_family: resnet
        total_parameter_count: 11689512
        training_dataset: imagenet
        task_specialization: object classification
        huggingface_link: https://...

Missing fields are taken from elsewhere where they can be known: the submitter and date from the
submission, the framework and weights' sha256 from the recorded provenance, the BibTeX from a literal
``BIBTEX = "..."`` in the plugin's sources (parsed, not run).
"""
from __future__ import annotations

import ast
from pathlib import Path

import brainscore.plugins.models as builtin_model_plugins

FIELDS = (("architecture", "architecture"), ("model_family", "family"), ("total_parameter_count", "parameters"),
          ("trainable_parameter_count", "trainable parameters"), ("total_layers", "layers"),
          ("model_size_mb", "size (MB)"), ("training_dataset", "training data"),
          ("task_specialization", "task"), ("brainscore_link", "link"), ("huggingface_link", "Hugging Face"),
          ("extra_notes", "notes"))
"""The reference's ``metadata.yml`` model fields, in the order the card shows them, with their labels."""


def plugin_folders(model: str, task=None) -> list[Path]:
    """Folders that may hold ``model``'s plugin: its submission's unpacked plugin folders, then the built-ins'."""
    folders: list[Path] = []
    if task is not None and task.folder:
        site = Path(task.folder) / "site"
        folders += sorted(p.parent for p in site.glob("*/__init__.py")) + sorted(site.glob("models/*/"))
    for root in builtin_model_plugins.__path__:
        folders += sorted(p.parent for p in Path(root).glob("*/__init__.py"))
    return folders


def _registers(folder: Path, model: str) -> bool:
    """Whether the plugin in ``folder`` names ``model`` in its ``__init__.py`` (a literal identifier)."""
    try:
        return repr(model)[1:-1] in (folder / "__init__.py").read_text(encoding="utf-8")
    except OSError:
        return False


def metadata(folder: Path, model: str) -> dict:
    """``model``'s entry of ``folder/metadata.yml`` (``models: {model: {...}}``), {} without one.

    A file that is not YAML, or not of that shape, gives {} with its problem under ``"problem"``.
    """
    path = folder / "metadata.yml"
    if not path.is_file():
        return {}
    import yaml

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        entry = (data.get("models") or {}).get(model) or {}
        return dict(entry) if isinstance(entry, dict) else {}
    except (yaml.YAMLError, AttributeError, UnicodeDecodeError) as error:
        return {"problem": f"{path.name} could not be read: {error}"}


def bibtex(folder: Path) -> str:
    """The literal ``BIBTEX = "..."`` of the plugin's sources (the reference's ``model.py`` convention), or ""."""
    for path in sorted(folder.glob("*.py")):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (OSError, SyntaxError, UnicodeDecodeError):
            continue
        for node in tree.body:
            if (isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "BIBTEX" for t in node.targets)
                    and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
                return node.value.value.strip()
    return ""


def model_card(model: str, task=None, owner: str | None = None, scores: list[dict] | None = None) -> dict:
    """The card of ``model``: ``rows`` (label, value) to show, ``bibtex``, ``source`` (where the fields came from).

    Parameters
    ----------
    task : SubmissionTask, optional
        The model's newest submission (its plugin folder, date).
    owner : str, optional
        Its submitter (None: a built-in model).
    scores : list of dict, optional
        Its recorded scores as :func:`brainscore.web.views.model_json` lists them (provenance: framework,
        weights' sha256).
    """
    folder = next((f for f in plugin_folders(model, task) if _registers(f, model)), None)
    declared = metadata(folder, model) if folder is not None else {}
    rows = [(label, declared[key]) for key, label in FIELDS if declared.get(key) not in (None, "")]
    provenance = next((s["provenance"] for s in reversed(scores or []) if isinstance(s.get("provenance"), dict)), {})
    torch = (provenance.get("environment") or {}).get("torch")
    if torch:
        rows.append(("framework", f"PyTorch {torch}"))
    weights = (provenance.get("model") or {}).get("weights_sha256")
    if weights:
        rows.append(("weights sha256", weights))
    rows.append(("submitted by", owner or "built-in model"))
    if task is not None and task.created:
        rows.append(("submitted", task.created.strftime("%Y-%m-%d")))
    return {"rows": rows, "bibtex": declared.get("bibtex") or (bibtex(folder) if folder is not None else ""),
            "source": "metadata.yml" if declared else None, "problem": declared.get("problem")}
