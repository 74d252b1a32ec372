"""web_jobs.error -> web_jobs.failure, and each failed pair's "error" -> "failure" in web_jobs.results

A website submission task kept its failure message in ``error`` and each failed pair's message as
``results["model|benchmark"]["error"]``, while ``error`` is otherwise the bootstrap standard error
of a score; both are renamed ``failure``, as in ``scores`` (revision 0003). The rows are kept, their
messages moved to the new key.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-25
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0004'
down_revision = '0003'
branch_labels = None
depends_on = None


def _rename_result_key(old: str, new: str) -> None:
    """In every task's ``results``, move each failed pair's message from ``old`` to ``new``."""
    tasks = sa.table('web_jobs', sa.column('id', sa.Integer), sa.column('results', sa.JSON))
    connection = op.get_bind()
    for task_id, results in connection.execute(sa.select(tasks.c.id, tasks.c.results)).all():
        if not isinstance(results, dict):
            continue
        changed = {pair: ({**{k: v for k, v in entry.items() if k != old}, new: entry[old]}
                          if isinstance(entry, dict) and old in entry else entry)
                   for pair, entry in results.items()}
        if changed != results:
            connection.execute(tasks.update().where(tasks.c.id == task_id).values(results=changed))


def _columns() -> set[str]:
    return {column['name'] for column in sa.inspect(op.get_bind()).get_columns('web_jobs')}


def upgrade() -> None:
    if 'error' in _columns():  # a table the website's old create_all made from a newer ORM has failure already
        with op.batch_alter_table('web_jobs', schema=None) as batch_op:
            batch_op.alter_column('error', new_column_name='failure')
    _rename_result_key('error', 'failure')


def downgrade() -> None:
    _rename_result_key('failure', 'error')
    if 'failure' in _columns():
        with op.batch_alter_table('web_jobs', schema=None) as batch_op:
            batch_op.alter_column('failure', new_column_name='error')
