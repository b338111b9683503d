"""Corpus curation: readers, normalization, Korean-aware filters, dedup, decontamination and PII replacement."""
