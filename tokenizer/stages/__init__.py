"""The tokenizer stages, one module per stage with its params model: pretokenize, vocab."""
