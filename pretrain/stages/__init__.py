"""The pretraining stages, one module per stage with its params model: encode, pretrain.

Kept light at import time (no torch): the runner imports stage classes to validate recipes and compute keys.
"""
