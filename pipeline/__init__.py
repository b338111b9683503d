"""klue-pipeline: the stage runner, recipes, the `klue` CLI and the reports."""

__version__ = "0.1.0"
