"""Representational similarity metrics: RDM comparison (:mod:`.rdm`) and linear CKA (:mod:`.cka`)."""
