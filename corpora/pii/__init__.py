"""PII detection (presidio-analyzer + per-language recognizers: Korean, Japanese) and replacement."""
