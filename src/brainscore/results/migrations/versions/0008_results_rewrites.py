"""results_version.rewrites: a second counter, bumped only by changes that are not a new score

The website keeps the leaderboard and every recorded score in memory and, when the results version
changes, reads only the score rows added since (a new score changes one model's row, not 704). That
is right only if nothing else changed: a score row updated or deleted, a model renamed or deleted, a
benchmark instance's ceiling or version changed (the scores read carry them). Triggers bump
``rewrites`` (and ``version``) in the writer's transaction on exactly those changes, whichever process
or tool writes them; the website reads the whole table again when ``rewrites`` moved.

Not rewrites: a new score or failure (an insert), a model made public or private and the model fields
a score updates when it is recorded (weights hash, visual degrees): the leaderboard's aggregates do
not read them (who may see a model is read per results version).

Like 0006's, these triggers are dropped by a later migration that rebuilds ``scores``, ``models`` or
``benchmark_instances`` on SQLite (``batch_alter_table``): it must call :func:`create_triggers` again
(``tests/results/test_results_version.py`` checks the head schema has them).

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-25
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0008'
down_revision = '0007'
branch_labels = None
depends_on = None

BUMP = "UPDATE results_version SET version = version + 1, rewrites = rewrites + 1 WHERE id = 1"

#: (name, table, event, SQLite condition, PostgreSQL condition): the changes that are not a new score.
TRIGGERS = (("results_rewrite_score_update", "scores", "UPDATE", None, None),
            ("results_rewrite_score_delete", "scores", "DELETE", None, None),
            ("results_rewrite_model_rename", "models", "UPDATE", "OLD.identifier IS NOT NEW.identifier",
             "OLD.identifier IS DISTINCT FROM NEW.identifier"),
            ("results_rewrite_model_delete", "models", "DELETE", None, None),
            ("results_rewrite_instance_insert", "benchmark_instances", "INSERT", None, None),
            ("results_rewrite_instance_update", "benchmark_instances", "UPDATE", None, None),
            ("results_rewrite_instance_delete", "benchmark_instances", "DELETE", None, None))


def create_triggers() -> None:
    """Create (or create again) the triggers that bump ``results_version.rewrites`` (SQLite or PostgreSQL)."""
    drop_triggers()
    if op.get_bind().dialect.name == "postgresql":
        op.execute("CREATE OR REPLACE FUNCTION brainscore_results_rewritten() RETURNS trigger LANGUAGE plpgsql AS "
                   f"$$ BEGIN {BUMP}; RETURN NULL; END $$")
        for name, table, when, _, condition in TRIGGERS:
            level = "ROW" if condition else "STATEMENT"  # a row's condition needs OLD and NEW
            op.execute(f"CREATE TRIGGER {name} AFTER {when} ON {table} FOR EACH {level} "
                       f"{f'WHEN ({condition}) ' if condition else ''}EXECUTE FUNCTION brainscore_results_rewritten()")
    else:
        for name, table, when, condition, _ in TRIGGERS:
            op.execute(f"CREATE TRIGGER {name} AFTER {when} ON {table} FOR EACH ROW "
                       f"{f'WHEN {condition} ' if condition else ''}BEGIN {BUMP}; END")


def drop_triggers() -> None:
    """Drop the triggers of :func:`create_triggers` where they exist."""
    postgres = op.get_bind().dialect.name == "postgresql"
    for name, table, *_ in TRIGGERS:
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if postgres else ""))


def upgrade() -> None:
    op.add_column('results_version', sa.Column('rewrites', sa.BigInteger, nullable=False, server_default='0'))
    create_triggers()


def downgrade() -> None:
    drop_triggers()
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP FUNCTION IF EXISTS brainscore_results_rewritten()")
    # ALTER TABLE ... DROP COLUMN in place (SQLite >= 3.35): a batch rebuild would rename the table under
    # migration 0006's triggers, which SQLite refuses
    op.execute("ALTER TABLE results_version DROP COLUMN rewrites")
