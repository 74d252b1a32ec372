"""results_version: a counter the database bumps whenever what the leaderboard shows may change

The website caches the leaderboard and the pages anonymous visitors see per *results version*. It
was the largest score row id (then plus the largest ``deleted_models`` id), which misses a model made
private and a score changed or deleted by any other way than ``Database.delete_model``. Triggers now bump ``results_version.version`` in the same transaction as any
insert, update or delete of a score, any update or delete of a model, and the insert of a private
model, whichever process or tool writes it (a new public model without scores changes no page, so
submissions do not empty the caches). Reading it is one primary-key lookup.

A later migration that rebuilds ``scores`` or ``models`` on SQLite (``batch_alter_table``) drops
their triggers: it must call :func:`create_triggers` again
(``tests/results/test_results_version.py`` checks the head schema has them).

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-25
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0006'
down_revision = '0005'
branch_labels = None
depends_on = None

BUMP = "UPDATE results_version SET version = version + 1 WHERE id = 1"

#: (name, table, event, condition): the changes that bump the version.
TRIGGERS = (("results_version_score_insert", "scores", "INSERT", None),
            ("results_version_score_update", "scores", "UPDATE", None),
            ("results_version_score_delete", "scores", "DELETE", None),
            ("results_version_model_update", "models", "UPDATE", None),
            ("results_version_model_delete", "models", "DELETE", None),
            ("results_version_private_model", "models", "INSERT", "NOT NEW.public"))


def create_triggers() -> None:
    """Create (or create again) the triggers that bump ``results_version`` (SQLite or PostgreSQL)."""
    drop_triggers()
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE OR REPLACE FUNCTION brainscore_results_changed() RETURNS trigger LANGUAGE plpgsql AS "
                   f"$$ BEGIN {BUMP}; RETURN NULL; END $$")
        for name, table, when, condition in TRIGGERS:
            # scores: once per statement (a bulk insert bumps once); models: per row, for the condition
            level = "ROW" if condition else "STATEMENT"
            op.execute(f"CREATE TRIGGER {name} AFTER {when} ON {table} FOR EACH {level} "
                       f"{f'WHEN ({condition}) ' if condition else ''}EXECUTE FUNCTION brainscore_results_changed()")
    else:
        for name, table, when, condition in TRIGGERS:
            op.execute(f"CREATE TRIGGER {name} AFTER {when} ON {table} FOR EACH ROW "
                       f"{f'WHEN {condition} ' if condition else ''}BEGIN {BUMP}; END")


def drop_triggers() -> None:
    """Drop the triggers of :func:`create_triggers` where they exist."""
    postgres = op.get_bind().dialect.name == "postgresql"
    for name, table, _, _ in TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if postgres else ""))


def upgrade() -> None:
    op.create_table('results_version',
                    sa.Column('id', sa.Integer, primary_key=True, autoincrement=False),
                    sa.Column('version', sa.BigInteger, nullable=False))
    op.execute("INSERT INTO results_version (id, version) VALUES (1, 1)")
    create_triggers()


def downgrade() -> None:
    drop_triggers()
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS brainscore_results_changed()")
    op.drop_table('results_version')
