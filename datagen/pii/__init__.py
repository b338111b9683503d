"""Synthetic PII documents with gold spans (the workshop's, not the product's).

- `datagen.pii.ko`, `datagen.pii.ja`: the independent evaluation sets of the Korean and the Japanese detector
  (`klue pii gen`, declared as an entry point in `datagen.pii.cli`), on the machinery of `datagen.pii.common`.
- `datagen.pii.synth`: small labelled Korean sentences and documents for tests, benches and the sample.
"""
