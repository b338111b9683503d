"""Korean toxicity tagging: a character n-gram classifier trained on BEEP! (hate / offensive / none), its two
baselines, an evaluation on BEEP! dev, and the stand-off score files of the `toxicity` stage.

Why a tagger beside PII: curation toolkits score every document for toxicity and leave the decision to keep or
drop to a later, configurable step (Dolma's `jigsaw_hatespeech_document_v2` / `..._sentence_v2` taggers write
attributes; its mixer filters on them), so an ablation can compare a filtered and an unfiltered corpus that
share every other byte. See corpora/toxicity/README.md.
"""
