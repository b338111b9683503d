"""Korean-aware document filters, one module per family."""
