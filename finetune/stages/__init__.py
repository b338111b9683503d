"""Pipeline stages of the fine-tuning suite (`finetune`)."""
