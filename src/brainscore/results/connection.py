"""Opening the results database: where it is (URLs, the journal's name for it), what went wrong when it cannot be
used (the advice for each cause), SQLite's connection settings, and bringing its schema to the newest migration.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Callable

from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, SQLAlchemyError

from brainscore import config
from brainscore.errors import BrainScoreError

__all__ = ["MIGRATIONS", "BUSY_TIMEOUT_MS", "DatabaseError", "DatabaseUnavailable", "identity_of", "default_url",
           "explain", "upgrade", "prepare_sqlite_file", "is_sqlite_file"]

MIGRATIONS = Path(__file__).parent / "migrations"


class DatabaseError(BrainScoreError):
    """The results database cannot be opened or does not hold what was asked for."""


class DatabaseUnavailable(DatabaseError):
    """The results database cannot be opened or written now (corrupt, locked, disk full, server down).

    A later attempt may succeed once the cause is fixed; :func:`brainscore.results.records.record`
    keeps the outcome in the journal meanwhile.
    """


def identity_of(url: str | None) -> str:
    """How the journal names the database at ``url`` (default :func:`default_url`): the URL without its
    password, a SQLite file's path made absolute (so that every working directory names it alike)."""
    url = url or default_url()
    try:
        parsed = make_url(url)
    except ArgumentError:
        return url
    if parsed.get_backend_name() == "sqlite" and parsed.database and parsed.database != ":memory:":
        return f"sqlite:///{Path(parsed.database).expanduser().absolute()}"
    return parsed.render_as_string(hide_password=True)


def default_url() -> str:
    """``$BRAINSCORE_DB_URL``, else ``sqlite:///$BRAINSCORE_HOME/results.sqlite``."""
    url = os.environ.get("BRAINSCORE_DB_URL", "").strip()
    return url or f"sqlite:///{config.home() / 'results.sqlite'}"


#: Milliseconds a SQLite connection waits for another process's write lock before "database is locked".
BUSY_TIMEOUT_MS = 30000


def _sqlite_pragmas(dbapi_connection, _record) -> None:
    """Every SQLite connection: foreign keys enforced, a busy timeout, and write-ahead logging.

    In SQLite's default rollback-journal mode a writer waits until no reader holds the file and readers
    wait while it commits, each retrying with sleeps of up to 100 ms: under the website's load (a
    submission's writes among ~95 page reads a second, each reading the results version) that made an
    upload's p99 580 ms and delayed pages. In WAL mode readers and the one writer do not block each
    other. The mode is stored in the file (the first connection converts it; in-memory databases stay
    in memory mode) and ``synchronous`` stays FULL, so every commit is on disk (the WAL file synced)
    when it returns. WAL needs the file on a local disk (not a network file system), which the
    results database already needs for SQLite's locks.
    """
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute(f"PRAGMA busy_timeout={int(BUSY_TIMEOUT_MS)}")  # several scoring processes may write at once
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=FULL")
    cursor.close()


def explain(error: BaseException, shown_url: str, sqlite_file: Path | None) -> str:
    """What went wrong with the database at ``shown_url`` and the fix, from a SQLAlchemy or OS error.

    A SQLite file that is corrupt, locked by another process or on a full disk each gets its own
    advice (naming the file); a server that cannot be reached gets "check the URL and the server".
    """
    cause = getattr(error, "orig", None) or error
    text = str(cause).strip() or type(cause).__name__
    lowered = text.lower()
    where = f"the SQLite file {sqlite_file}" if sqlite_file is not None else shown_url
    if "is not a database" in lowered or "malformed" in lowered or "file is encrypted" in lowered:
        if sqlite_file is not None and not is_sqlite_file(sqlite_file):  # never advise moving someone else's file
            return (f"{sqlite_file} is not a SQLite database ({text}); it was left as it is. Point --db / "
                    f"BRAINSCORE_DB_URL at the results database (e.g. sqlite:///{config.home() / 'results.sqlite'}) "
                    f"or at a new file")
        return (f"{where} is not a usable results database ({text}): it is a damaged SQLite file. Move it "
                f"aside (mv {sqlite_file or 'FILE'} {sqlite_file or 'FILE'}.broken) and run again to start a new one, "
                f"or point --db / BRAINSCORE_DB_URL at the right database")
    if "locked" in lowered or "busy" in lowered:
        return (f"{where} is locked by another process that has been writing to it for over "
                f"{BUSY_TIMEOUT_MS / 1000:g} s ({text}). Wait for that process to finish (find it with: fuser "
                f"{sqlite_file or 'FILE'}) and run again")
    if "disk is full" in lowered or "no space" in lowered or getattr(cause, "errno", None) == 28:
        return (f"the disk holding {where} is full ({text}). Free some space (df -h {sqlite_file or ''}) and run "
                f"again")
    if "readonly" in lowered or "read-only" in lowered or "permission" in lowered or "unable to open" in lowered:
        return (f"{where} cannot be written ({text}). Make it and its folder writable, or point --db / "
                f"BRAINSCORE_DB_URL (or BRAINSCORE_HOME) at a writable place")
    if sqlite_file is not None:
        return f"{where} cannot be used ({text})"
    return f"cannot use the results database {shown_url}: {text}. Check the URL (--db or BRAINSCORE_DB_URL) and that " \
           f"the server is running"


_CHECKED: set[tuple[str, int]] = set()
"""(path, inode) of the SQLite files this process found to be brainscore's: checked once, not at every open."""


def prepare_sqlite_file(path: Path, make_folder: bool) -> None:
    """Check the SQLite file ``path`` before anything connects to it (a connection converts the file to WAL
    mode, a write): its folder exists (made when ``make_folder``), and an existing file is a SQLite database
    that is empty or holds brainscore's tables (``alembic_version``), never another file or application's
    database, which is left untouched.

    Raises
    ------
    DatabaseUnavailable
        If the folder is missing (and not to be made) or cannot be made, or the file is not a SQLite database.
    DatabaseError
        If it is another application's SQLite database.
    """
    import sqlite3

    folder = path.parent
    if not folder.is_dir():
        if folder.exists():
            raise DatabaseUnavailable(f"the folder of the results database {path} is a file, not a folder; point "
                                      f"--db / BRAINSCORE_DB_URL, or BRAINSCORE_HOME, at a folder")
        if not make_folder:
            raise DatabaseUnavailable(f"the folder {folder} of the results database {path} does not exist; create "
                                      f"it (mkdir -p {folder}) or point --db / BRAINSCORE_DB_URL at an existing folder")
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise DatabaseUnavailable(f"cannot create the folder of the results database {path} "
                                      f"({error.strerror or error}); point --db / BRAINSCORE_DB_URL, or "
                                      f"BRAINSCORE_HOME, at a writable folder") from None
    try:
        stat = path.stat()
    except OSError:
        return  # a new database
    if not path.is_file() or stat.st_size == 0 or (str(path), stat.st_ino) in _CHECKED:
        return  # a new database (or a folder at its place, which SQLite reports), or one this process checked
    if not is_sqlite_file(path):
        raise DatabaseUnavailable(f"{path} is not a SQLite database; it was left as it is. Point --db / "
                                  f"BRAINSCORE_DB_URL at the results database (e.g. sqlite:///"
                                  f"{config.home() / 'results.sqlite'}) or at a new file")
    try:
        reader = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            tables = [row[0] for row in reader.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        finally:
            reader.close()
    except sqlite3.Error:
        return  # damaged or busy: opening it says which, with the advice for each
    if tables and "alembic_version" not in tables:
        shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
        raise DatabaseError(f"{path} is a SQLite database of something else (its tables: {shown}), not a brainscore "
                            f"results database; it was left as it is. Point --db / BRAINSCORE_DB_URL at the results "
                            f"database, or at a new file")
    _CHECKED.add((str(path), stat.st_ino))


def is_sqlite_file(path: Path) -> bool:
    """Whether ``path`` starts with SQLite's header (``SQLite format 3``): a SQLite database, damaged or not."""
    try:
        with open(path, "rb") as handle:
            return handle.read(16) == b"SQLite format 3\x00"
    except OSError:
        return False


_REVISION = re.compile(r"^(revision|down_revision)\s*(?::[^=\n]*)?=\s*(.+?)\s*$", re.MULTILINE)


@lru_cache(maxsize=1)
def _migration_heads() -> frozenset[str] | None:
    """Head revisions of the migration scripts, read from their ``revision``/``down_revision`` lines.

    None when a script cannot be read so (then Alembic decides). Heads are the revisions no other
    script names as its ``down_revision``.
    """
    import ast

    revisions: set[str] = set()
    parents: set[str] = set()
    for script in sorted((MIGRATIONS / "versions").glob("*.py")):
        found = dict(_REVISION.findall(script.read_text(encoding="utf-8")))
        try:
            revision, down = ast.literal_eval(found["revision"]), ast.literal_eval(found["down_revision"])
        except (KeyError, ValueError, SyntaxError):
            return None
        if not isinstance(revision, str):
            return None
        revisions.add(revision)
        for parent in (down if isinstance(down, (tuple, list)) else [down]):
            if parent is not None:
                parents.add(str(parent))
    return frozenset(revisions - parents) or None


def upgrade(engine: Engine, fail: Callable[[BaseException], Exception]) -> None:
    """Bring the schema of the database of ``engine`` to the newest migration (a no-op when it is current);
    ``fail`` turns a database error into the exception raised.

    A database already at the newest revision is recognised by reading its ``alembic_version``
    table against the revisions declared in the migration files, without importing Alembic
    (0.3 s of every ``brainscore score``); anything else goes through Alembic.
    """
    heads = _migration_heads()
    if heads is not None:
        from sqlalchemy import text

        try:
            with engine.connect() as connection:
                current = {row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version"))}
            if current == heads:
                return
        except SQLAlchemyError as error:  # no version table yet, or cannot connect: Alembic says which
            if "locked" in str(error).lower():
                _after_creation(engine, heads, error, fail)  # returns when another process has just created it
                return
    with _creation_lock(engine, fail):
        _migrate(engine, fail)


def _creation_lock(engine: Engine, fail: Callable[[BaseException], Exception]):
    """For a SQLite file, ``<file>.lock`` (:mod:`filelock`) held while the schema is created or migrated: processes
    opening a new file at once wait for each other here, however long the first takes under load, instead of
    relying on SQLite's busy timeout (a brand-new file's switch to WAL mode and Alembic's first read could still
    answer 'database is locked' at once). Other databases: no lock (PostgreSQL's DDL is transactional)."""
    from contextlib import contextmanager, nullcontext

    database = engine.url.database if engine.dialect.name == "sqlite" else None
    if database in (None, "", ":memory:") or str(database).startswith("file:"):
        return nullcontext()
    from filelock import FileLock, Timeout

    seconds = 4 * BUSY_TIMEOUT_MS / 1000

    @contextmanager
    def held():
        try:
            lock = FileLock(f"{database}.lock", timeout=seconds)
            lock.acquire()
        except Timeout:
            raise fail(TimeoutError(f"database is locked: {database}.lock has been held for over {seconds:.0f} s by "
                                    f"another process creating or migrating the database")) from None
        try:
            yield
        finally:
            lock.release()

    return held()


def _after_creation(engine: Engine, heads: frozenset, error: BaseException,
                    fail: Callable[[BaseException], Exception]) -> None:
    """The first read found the file locked: wait for a creation in progress (its lock), read again once; still
    locked means another process has been writing for the whole busy timeout, and that is the error."""
    from sqlalchemy import text

    with _creation_lock(engine, fail):
        try:
            with engine.connect() as connection:
                current = {row[0] for row in connection.execute(text("SELECT version_num FROM alembic_version"))}
        except SQLAlchemyError as again:
            if "locked" in str(again).lower():  # already waited BUSY_TIMEOUT_MS twice: not a third time in Alembic
                raise fail(again) from None
            current = set()
        if current != heads:
            _migrate(engine, fail)


def _migrate(engine: Engine, fail: Callable[[BaseException], Exception]) -> None:
    """Alembic's upgrade to head, in one transaction that holds SQLite's write lock from its start."""
    from alembic import command
    from alembic.config import Config
    from alembic.runtime.migration import MigrationContext
    from alembic.script import ScriptDirectory

    alembic_config = Config()
    alembic_config.set_main_option("script_location", str(MIGRATIONS))
    heads = set(ScriptDirectory.from_config(alembic_config).get_heads())
    try:
        with engine.begin() as connection:
            if connection.dialect.name == "sqlite":
                # SQLite's write lock before the version is read, and the whole migration in that transaction:
                # processes creating one file at once wait for each other (busy_timeout) and the later ones find it
                # made; without it each created the tables ('table "references" already exists'), and a killed
                # creation left half a schema (pysqlite commits each CREATE TABLE on its own)
                connection.exec_driver_sql("BEGIN IMMEDIATE")
            if set(MigrationContext.configure(connection).get_current_heads()) == heads:
                return
            alembic_config.attributes["connection"] = connection
            command.upgrade(alembic_config, "head")
    except (SQLAlchemyError, OSError) as error:
        raise fail(error) from None

