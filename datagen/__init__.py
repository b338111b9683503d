"""The workshop, not the product: builders and generators of the data the project ships or tests with.

No product module (pipeline, corpora, tokenizer, pretrain, finetune) imports it (tests/test_layout.py checks);
modules here may import the product (the PII validators, the readers, the decontamination index) to build data
that the product then reads. It is installed with the package only so that its one user-facing command,
`klue pii gen`, works after `pip install`: the command reaches `klue pii` as an entry point (pyproject's
`klue.commands`), not through an import.

- `datagen.sample`: the embedded default's sample (`pipeline/sample/`), drawn from the shared data.
- `datagen.klue_mrc`: the sample's KLUE-MRC-layout passages (generated: no openly licensed Korean MRC set here).
- `datagen.wos`: synthetic WoS dialogues and ontology (`python -m datagen.wos OUT`), for the DST task.
- `datagen.pii`: the Korean and Japanese PII evaluation sets (`klue pii gen`) and small labelled PII documents.
"""
