"""accounts' e-mail address and its verification; deleted models

``web_users`` gains ``email`` (unique, the normalised address) and ``email_verified`` (when its link
was followed); ``deleted_models`` records each model its owner deleted (the website's "delete my
model"), so that the results version changes when score rows leave. Existing accounts keep working
without an address (they can add one on their account page).

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-25
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0005'
down_revision = '0004'
branch_labels = None
depends_on = None


def _columns(table: str) -> set[str]:
    return {column['name'] for column in sa.inspect(op.get_bind()).get_columns(table)}


def upgrade() -> None:
    # a web_users table the website's old create_all made from a newer ORM has the columns already
    if 'email' not in _columns('web_users'):
        with op.batch_alter_table('web_users', schema=None) as batch_op:
            batch_op.add_column(sa.Column('email', sa.String(length=320), nullable=True))
            batch_op.add_column(sa.Column('email_verified', sa.DateTime(), nullable=True))
            batch_op.create_unique_constraint('uq_web_users_email', ['email'])
    op.create_table('deleted_models',
                    sa.Column('id', sa.Integer(), nullable=False),
                    sa.Column('identifier', sa.String(length=300), nullable=False),
                    sa.Column('owner', sa.String(length=300), nullable=True),
                    sa.Column('scores', sa.Integer(), nullable=False),
                    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
                    sa.PrimaryKeyConstraint('id'))
    op.create_index('ix_deleted_models_identifier', 'deleted_models', ['identifier'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_deleted_models_identifier', table_name='deleted_models')
    op.drop_table('deleted_models')
    with op.batch_alter_table('web_users', schema=None) as batch_op:
        batch_op.drop_constraint('uq_web_users_email', type_='unique')
        batch_op.drop_column('email_verified')
        batch_op.drop_column('email')
