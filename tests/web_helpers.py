"""Zips for the website's tests: the README's example plugin and hostile archives."""
from __future__ import annotations

import io
import stat
import zipfile
from pathlib import Path

EXAMPLE_PLUGIN = Path(__file__).resolve().parent.parent / "docs" / "examples" / "my_tiny_net"


def plugin_zip(identifier: str = "my-tiny-net", package: str = "my_tiny_net", extra: dict | None = None) -> bytes:
    """The README's tiny network as a plugin zip, registering ``identifier`` in folder ``package``."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(EXAMPLE_PLUGIN.iterdir()):
            if path.is_file() and f"{package}/{path.name}" not in (extra or {}):
                text = path.read_text()
                if path.name == "__init__.py":
                    text = text.replace('"my-tiny-net"', repr(identifier).replace("'", '"'))
                archive.writestr(f"{package}/{path.name}", text)
        for name, content in (extra or {}).items():
            archive.writestr(name, content)
    return buffer.getvalue()


def zip_bomb(megabytes: int = 20) -> bytes:
    """A valid plugin plus one entry of zeros that deflates about 1000-fold."""
    buffer = io.BytesIO(plugin_zip(identifier="bomb-net", package="bomb_net"))
    with zipfile.ZipFile(buffer, "a", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bomb_net/weights.bin", b"\0" * (megabytes * 2**20))
    return buffer.getvalue()


def traversal_zip() -> bytes:
    """A plugin with an entry that climbs out of its folder."""
    return plugin_zip(identifier="evil-net", package="evil_net", extra={"evil_net/../../evil.py": "print('owned')"})


def symlink_zip() -> bytes:
    """A plugin with a symbolic link to /etc/passwd."""
    buffer = io.BytesIO(plugin_zip(identifier="link-net", package="link_net"))
    with zipfile.ZipFile(buffer, "a") as archive:
        info = zipfile.ZipInfo("link_net/weights.pt")
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        archive.writestr(info, "/etc/passwd")
    return buffer.getvalue()
