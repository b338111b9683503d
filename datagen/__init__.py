"""The workshop, not the product: builders and generators of the data the project ships or tests with.

Nothing here is installed with the package (pyproject's `packages.find` lists the product packages only) and no
product module imports it; modules here may import the product (the PII value generator, the readers, the
decontamination index) to build data that the product then reads.

- `datagen.sample`: the embedded default's sample (`pipeline/sample/`), drawn from the shared data.
- `datagen.klue_mrc`: the sample's KLUE-MRC-layout passages (generated: no openly licensed Korean MRC set here).
"""
