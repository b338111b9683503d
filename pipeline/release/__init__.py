"""What a run publishes, assembled in one place: the model card (`README.md` beside a model folder's weights) and
the dataset card of a corpus export, in the Hub's format, from what the run's stage folders recorded.

The data facts (funnel, PII, decontamination, licences) are read from the stage folders' manifests by generic
readers (facts.py, licenses.py); what a stage knows of its own outputs it contributes through the
`Stage.card_facts` hook (pipeline/stage.py), asked of every stage class the registry names, as the report asks
`Stage.report_section` and `Stage.verdict`: the pretrain stage its training facts, the finetune stage the KLUE
table and `model-index`. `card.write_model_card` is the one writer of a model card: the pretrain stage's
`final/README.md`, `klue export-checkpoint` and `klue export` (export.py) all call it.

  licenses.py      the licence a card can state, from the recipe's sources
  facts.py         `CardFacts` / `CorpusFacts`: what a card states, gathered
  sections.py      the model card's markdown sections
  card.py          metadata, `ModelCard`, the offline check, `write_model_card`
  dataset_card.py  the dataset card of `klue export --corpus`
  export.py        `klue export`'s model folder (`export_run`)
"""
