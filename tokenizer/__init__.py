"""MeCab morpheme pre-tokenization and subword vocabularies exported as MeCab-free transformers tokenizers."""
