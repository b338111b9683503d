"""Installed versions of the libraries whose upgrade can change an output: part of a stage's key
(`Stage.fingerprint`) and what a Ray worker must match (`pipeline.parallel`). A leaf, so both can use it.
"""

from __future__ import annotations

from importlib import metadata


def package_versions(*dists: str) -> dict[str, str]:
    """Installed versions of distributions ("missing" when absent), for a stage's `fingerprint`: code outside
    this project whose upgrade can change the stage's output (MeCab's dictionary, `tokenizers`)."""
    out = {}
    for d in dists:
        try:
            out[d] = metadata.version(d)
        except metadata.PackageNotFoundError:
            out[d] = "missing"
    return out
