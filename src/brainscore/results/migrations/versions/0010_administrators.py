"""the website's administrators

``web_administrators`` names the accounts that administer the website (approve and withdraw trusted plugins, see
every submission). Administrators are made on the server's command line only (``brainscore admin add NAME``), never
by a user name: before, ``brainscore serve --admin NAME`` trusted whichever account held NAME, and anyone could
register it first (issue 36).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-29
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0010'
down_revision = '0009'
branch_labels = None
depends_on = None


def upgrade() -> None:
    if 'web_administrators' in sa.inspect(op.get_bind()).get_table_names():
        return
    op.create_table('web_administrators',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('user_id', sa.Integer(), nullable=False),
    sa.Column('added', sa.DateTime(), nullable=False),
    sa.Column('added_by', sa.String(length=200), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['web_users.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('web_administrators', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_web_administrators_user_id'), ['user_id'], unique=True)


def downgrade() -> None:
    op.drop_table('web_administrators')
