"""One self-contained module per KLUE task."""
