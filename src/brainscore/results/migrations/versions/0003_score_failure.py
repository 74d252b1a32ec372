"""scores.comment -> scores.failure: a failed score's message has one name

Until this revision a failed score kept its message in ``comment``, while ``error`` is the bootstrap
standard error of a score; the column is renamed so that a failure is called ``failure`` everywhere
(database, runner, command line). The rows are kept as they are.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25
"""
from __future__ import annotations

from alembic import op


revision = '0003'
down_revision = '0002'
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.alter_column('comment', new_column_name='failure')


def downgrade() -> None:
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.alter_column('failure', new_column_name='comment')
