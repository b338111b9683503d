"""Masked-language-model pretraining of a stock encoder (KLUE's RoBERTa, ModernBERT, ...): token shards,
packing, masking, the training loop, export."""
