"""The corpus stages, one module per stage (named as the stage), each with its params model:
collect, filter, dedup, decontaminate, pii_detect, pii. `common` holds what the shard-by-shard curation
stages share (per-shard reports, samples)."""
