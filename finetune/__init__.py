"""The KLUE fine-tuning suite: one module per task, a shared trainer, official metrics, scoring and reports."""
