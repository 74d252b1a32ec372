"""web tables: accounts, API tokens, log-in attempts, submission queue

The website (``brainscore serve``) made these tables with ``metadata.create_all`` before this
revision. A database made that way holds them already, with these very columns: each table that
exists is left as it is (and its indexes with it), so upgrading such a database only records the
revision.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0002'
down_revision = '0001'
branch_labels = None
depends_on = None


def _missing(table: str) -> bool:
    """Whether ``table`` has yet to be made (False where the website's old create_all made it)."""
    return table not in sa.inspect(op.get_bind()).get_table_names()


def upgrade() -> None:
    if _missing('web_jobs'):
        op.create_table('web_jobs',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('owner', sa.String(length=40), nullable=False),
        sa.Column('package', sa.String(length=200), nullable=False),
        sa.Column('filename', sa.String(length=300), nullable=False),
        sa.Column('models', sa.JSON(), nullable=False),
        sa.Column('benchmarks', sa.JSON(), nullable=False),
        sa.Column('requirements', sa.JSON(), nullable=False),
        sa.Column('public', sa.Boolean(), nullable=False),
        sa.Column('status', sa.String(length=20), nullable=False),
        sa.Column('current', sa.Integer(), nullable=False),
        sa.Column('results', sa.JSON(), nullable=False),
        sa.Column('error', sa.Text(), nullable=False),
        sa.Column('log', sa.Text(), nullable=False),
        sa.Column('folder', sa.String(length=500), nullable=False),
        sa.Column('rerun_of', sa.Integer(), nullable=True),
        sa.Column('submission_id', sa.Integer(), nullable=True),
        sa.Column('created', sa.DateTime(), nullable=False),
        sa.Column('started', sa.DateTime(), nullable=True),
        sa.Column('finished', sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint('id')
        )
        with op.batch_alter_table('web_jobs', schema=None) as batch_op:
            batch_op.create_index(batch_op.f('ix_web_jobs_owner'), ['owner'], unique=False)
            batch_op.create_index(batch_op.f('ix_web_jobs_status'), ['status'], unique=False)

    if _missing('web_login_attempts'):
        op.create_table('web_login_attempts',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('username', sa.String(length=200), nullable=False),
        sa.Column('address', sa.String(length=100), nullable=False),
        sa.Column('success', sa.Boolean(), nullable=False),
        sa.Column('at', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id')
        )
        with op.batch_alter_table('web_login_attempts', schema=None) as batch_op:
            batch_op.create_index(batch_op.f('ix_web_login_attempts_address'), ['address'], unique=False)
            batch_op.create_index(batch_op.f('ix_web_login_attempts_at'), ['at'], unique=False)
            batch_op.create_index(batch_op.f('ix_web_login_attempts_username'), ['username'], unique=False)

    if _missing('web_users'):
        op.create_table('web_users',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('username', sa.String(length=40), nullable=False),
        sa.Column('password_hash', sa.String(length=200), nullable=False),
        sa.Column('created', sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint('id')
        )
        with op.batch_alter_table('web_users', schema=None) as batch_op:
            batch_op.create_index(batch_op.f('ix_web_users_username'), ['username'], unique=True)

    if _missing('web_tokens'):
        op.create_table('web_tokens',
        sa.Column('id', sa.Integer(), nullable=False),
        sa.Column('user_id', sa.Integer(), nullable=False),
        sa.Column('token_sha256', sa.String(length=64), nullable=False),
        sa.Column('created', sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(['user_id'], ['web_users.id'], ),
        sa.PrimaryKeyConstraint('id')
        )
        with op.batch_alter_table('web_tokens', schema=None) as batch_op:
            batch_op.create_index(batch_op.f('ix_web_tokens_token_sha256'), ['token_sha256'], unique=True)
            batch_op.create_index(batch_op.f('ix_web_tokens_user_id'), ['user_id'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('web_tokens', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_tokens_user_id'))
        batch_op.drop_index(batch_op.f('ix_web_tokens_token_sha256'))

    op.drop_table('web_tokens')
    with op.batch_alter_table('web_users', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_users_username'))

    op.drop_table('web_users')
    with op.batch_alter_table('web_login_attempts', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_login_attempts_username'))
        batch_op.drop_index(batch_op.f('ix_web_login_attempts_at'))
        batch_op.drop_index(batch_op.f('ix_web_login_attempts_address'))

    op.drop_table('web_login_attempts')
    with op.batch_alter_table('web_jobs', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_web_jobs_status'))
        batch_op.drop_index(batch_op.f('ix_web_jobs_owner'))

    op.drop_table('web_jobs')
