"""accounts' display name

``web_users`` gains ``display_name`` (nullable): the name the website shows for an account's models and
submissions (its model pages, the models index); None shows the user name.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0009'
down_revision = '0008'
branch_labels = None
depends_on = None


def upgrade() -> None:
    # a web_users table the website's old create_all made from a newer ORM may have the column already
    if 'display_name' not in {c['name'] for c in sa.inspect(op.get_bind()).get_columns('web_users')}:
        with op.batch_alter_table('web_users', schema=None) as batch_op:
            batch_op.add_column(sa.Column('display_name', sa.String(length=80), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table('web_users', schema=None) as batch_op:
        batch_op.drop_column('display_name')
