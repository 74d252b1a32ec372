"""web_jobs.key (a random public identifier for each submission task) and web_sessions (server-side log-ins)

The website's submission pages were addressed by the task's row number (``/submissions/7``), so anyone
could count through them; each task now gets a random 22-character ``key`` (existing rows get one
here), and the pages and the API use only that. ``web_sessions`` holds the sha256 of each logged-in
browser session's id: a session cookie authenticates only while its row exists, so logging out ends it
everywhere and a cookie from before a log-in is worth nothing after it.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-25
"""
from __future__ import annotations

import secrets

from alembic import op
import sqlalchemy as sa


revision = '0007'
down_revision = '0006'
branch_labels = None
depends_on = None


def _columns(table: str) -> set[str]:
    return {column['name'] for column in sa.inspect(op.get_bind()).get_columns(table)}


def _tables() -> set[str]:
    return set(sa.inspect(op.get_bind()).get_table_names())


def upgrade() -> None:
    if 'key' not in _columns('web_jobs'):  # a table the website's old create_all made from a newer ORM has it
        with op.batch_alter_table('web_jobs', schema=None) as batch_op:
            batch_op.add_column(sa.Column('key', sa.String(length=32), nullable=True))
        tasks = sa.table('web_jobs', sa.column('id', sa.Integer), sa.column('key', sa.String))
        connection = op.get_bind()
        for (task_id,) in connection.execute(sa.select(tasks.c.id).where(tasks.c.key.is_(None))).all():
            connection.execute(tasks.update().where(tasks.c.id == task_id).values(key=secrets.token_urlsafe(16)))
        with op.batch_alter_table('web_jobs', schema=None) as batch_op:
            batch_op.alter_column('key', existing_type=sa.String(length=32), nullable=False)
            batch_op.create_index(batch_op.f('ix_web_jobs_key'), ['key'], unique=True)
    if 'web_sessions' not in _tables():
        op.create_table('web_sessions',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('sid_sha256', sa.String(length=64), nullable=False),
        sa.Column('created', sa.DateTime(), nullable=False),
        sa.Column('expires', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['web_users.id'], ),
        sa.PrimaryKeyConstraint('id')
        )
        with op.batch_alter_table('web_sessions', schema=None) as batch_op:
            batch_op.create_index(batch_op.f('ix_web_sessions_expires'), ['expires'], unique=False)
            batch_op.create_index(batch_op.f('ix_web_sessions_sid_sha256'), ['sid_sha256'], unique=True)
            batch_op.create_index(batch_op.f('ix_web_sessions_user_id'), ['user_id'], unique=False)


def downgrade() -> None:
    if 'web_sessions' in _tables():
        op.drop_table('web_sessions')
    if 'key' in _columns('web_jobs'):
        with op.batch_alter_table('web_jobs', schema=None) as batch_op:
            batch_op.drop_index(batch_op.f('ix_web_jobs_key'))
            batch_op.drop_column('key')
