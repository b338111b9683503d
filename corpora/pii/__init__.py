"""Korean PII detection (presidio-analyzer + Korean recognizers) and replacement."""
