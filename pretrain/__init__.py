"""Masked-language-model pretraining of RoBERTa: token shards, packing, masking, the training loop, export."""
