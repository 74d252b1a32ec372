"""Alembic environment of the results database: runs on the connection :class:`Database` passes in."""
from __future__ import annotations

from alembic import context
from sqlalchemy import create_engine

from brainscore.results.schema import Base

config = context.config
target_metadata = Base.metadata


def _run(connection) -> None:
    context.configure(connection=connection, target_metadata=target_metadata,
                      render_as_batch=connection.dialect.name == "sqlite")
    with context.begin_transaction():
        context.run_migrations()


connection = config.attributes.get("connection")
if connection is not None:
    _run(connection)
else:  # the alembic command line: `alembic -x url=... upgrade head`
    url = context.get_x_argument(as_dictionary=True).get("url") or config.get_main_option("sqlalchemy.url")
    with create_engine(url).connect() as connection:
        _run(connection)
