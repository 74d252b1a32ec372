"""initial schema: references, benchmark tree, instances, models, submissions, scores

Revision ID: 0001
Revises: 
Create Date: 2026-11-23
"""
from __future__ import annotations

from alembic import op
import sqlalchemy as sa


revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table('references',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('author', sa.String(length=500), nullable=True),
    sa.Column('year', sa.Integer(), nullable=True),
    sa.Column('url', sa.String(length=1000), nullable=True),
    sa.Column('bibtex', sa.Text(), nullable=False),
    sa.PrimaryKeyConstraint('id')
    )
    op.create_table('submissions',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('owner', sa.String(length=300), nullable=True),
    sa.Column('created', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated', sa.DateTime(timezone=True), nullable=True),
    sa.Column('status', sa.String(length=50), nullable=False),
    sa.Column('models', sa.JSON(), nullable=True),
    sa.Column('benchmarks', sa.JSON(), nullable=True),
    sa.Column('log', sa.Text(), nullable=False),
    sa.Column('meta', sa.JSON(), nullable=True),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_submissions_owner'), ['owner'], unique=False)

    op.create_table('benchmark_types',
    sa.Column('identifier', sa.String(length=300), nullable=False),
    sa.Column('parent_id', sa.String(length=300), nullable=True),
    sa.Column('reference_id', sa.Integer(), nullable=True),
    sa.Column('order', sa.Integer(), nullable=False),
    sa.Column('visible', sa.Boolean(), nullable=False),
    sa.Column('engineering', sa.Boolean(), nullable=False),
    sa.Column('domain', sa.String(length=50), nullable=False),
    sa.ForeignKeyConstraint(['parent_id'], ['benchmark_types.identifier'], ),
    sa.ForeignKeyConstraint(['reference_id'], ['references.id'], ),
    sa.PrimaryKeyConstraint('identifier')
    )
    with op.batch_alter_table('benchmark_types', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_benchmark_types_parent_id'), ['parent_id'], unique=False)

    op.create_table('models',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('identifier', sa.String(length=300), nullable=False),
    sa.Column('weights_hash', sa.String(length=64), nullable=True),
    sa.Column('owner', sa.String(length=300), nullable=True),
    sa.Column('public', sa.Boolean(), nullable=False),
    sa.Column('visual_degrees', sa.Float(), nullable=True),
    sa.Column('domain', sa.String(length=50), nullable=False),
    sa.Column('reference_id', sa.Integer(), nullable=True),
    sa.Column('submission_id', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['reference_id'], ['references.id'], ),
    sa.ForeignKeyConstraint(['submission_id'], ['submissions.id'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('identifier')
    )
    op.create_table('benchmark_instances',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_type_id', sa.String(length=300), nullable=False),
    sa.Column('version', sa.Integer(), nullable=False),
    sa.Column('ceiling', sa.Float(), nullable=True),
    sa.Column('ceiling_error', sa.Float(), nullable=True),
    sa.Column('meta', sa.JSON(), nullable=True),
    sa.ForeignKeyConstraint(['benchmark_type_id'], ['benchmark_types.identifier'], ),
    sa.PrimaryKeyConstraint('id'),
    sa.UniqueConstraint('benchmark_type_id', 'version', name='uq_benchmark_version')
    )
    with op.batch_alter_table('benchmark_instances', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_benchmark_instances_benchmark_type_id'), ['benchmark_type_id'], unique=False)

    op.create_table('scores',
    sa.Column('id', sa.Integer(), nullable=False),
    sa.Column('benchmark_instance_id', sa.Integer(), nullable=False),
    sa.Column('model_id', sa.Integer(), nullable=False),
    sa.Column('submission_id', sa.Integer(), nullable=True),
    sa.Column('status', sa.String(length=20), nullable=False),
    sa.Column('score_raw', sa.Float(), nullable=True),
    sa.Column('score_ceiled', sa.Float(), nullable=True),
    sa.Column('error', sa.Float(), nullable=True),
    sa.Column('ci95_low', sa.Float(), nullable=True),
    sa.Column('ci95_high', sa.Float(), nullable=True),
    sa.Column('layers', sa.JSON(), nullable=True),
    sa.Column('provenance', sa.JSON(), nullable=True),
    sa.Column('provenance_key', sa.String(length=64), nullable=True),
    sa.Column('start_timestamp', sa.DateTime(timezone=True), nullable=True),
    sa.Column('end_timestamp', sa.DateTime(timezone=True), nullable=True),
    sa.Column('comment', sa.Text(), nullable=True),
    sa.Column('log', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['benchmark_instance_id'], ['benchmark_instances.id'], ),
    sa.ForeignKeyConstraint(['model_id'], ['models.id'], ),
    sa.ForeignKeyConstraint(['submission_id'], ['submissions.id'], ),
    sa.PrimaryKeyConstraint('id')
    )
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.create_index(batch_op.f('ix_scores_benchmark_instance_id'), ['benchmark_instance_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_scores_model_id'), ['model_id'], unique=False)
        batch_op.create_index(batch_op.f('ix_scores_provenance_key'), ['provenance_key'], unique=False)



def downgrade() -> None:
    with op.batch_alter_table('scores', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_scores_provenance_key'))
        batch_op.drop_index(batch_op.f('ix_scores_model_id'))
        batch_op.drop_index(batch_op.f('ix_scores_benchmark_instance_id'))

    op.drop_table('scores')
    with op.batch_alter_table('benchmark_instances', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_benchmark_instances_benchmark_type_id'))

    op.drop_table('benchmark_instances')
    op.drop_table('models')
    with op.batch_alter_table('benchmark_types', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_benchmark_types_parent_id'))

    op.drop_table('benchmark_types')
    with op.batch_alter_table('submissions', schema=None) as batch_op:
        batch_op.drop_index(batch_op.f('ix_submissions_owner'))

    op.drop_table('submissions')
    op.drop_table('references')
