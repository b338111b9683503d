"""The README's two set-up commands, read from README.md itself, so CI runs exactly what a new user types.

    python .ci/readme_commands.py run|test [--steps]

prints the first (`run`: install + the embedded default) or the second (`test`: install + the test suite)
fenced bash block of the README's "## Quick start" section; `--steps` prints its `&&`-joined steps one per
line, so CI can time the install apart from the tests. Anything else in that section's shape (not exactly two
blocks, a block of more than one line) is an error: the README must keep two one-line commands.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
WHICH = ("run", "test")


def quick_start_commands(readme: Path = README) -> dict[str, str]:
    """{"run": first command, "test": second command} from the Quick start section's bash blocks."""
    text = readme.read_text(encoding="utf-8")
    m = re.search(r"^## Quick start.*?(?=^## )", text, flags=re.M | re.S)
    if m is None:
        raise ValueError(f"{readme}: no '## Quick start' section")
    blocks = re.findall(r"^```bash\n(.*?)^```", m.group(0), flags=re.M | re.S)
    if len(blocks) != 2:
        raise ValueError(f"{readme}: Quick start has {len(blocks)} bash blocks, expected 2 (run, test)")
    out = {}
    for name, block in zip(WHICH, blocks, strict=True):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if len(lines) != 1:
            raise ValueError(f"{readme}: Quick start's {name} block has {len(lines)} lines, expected one command")
        out[name] = lines[0].strip()
    return out


def steps(command: str) -> list[str]:
    """The `&&`-joined steps of a command, in order."""
    return [s.strip() for s in command.split("&&")]


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in WHICH or argv[1:] not in ([], ["--steps"]):
        print(__doc__, file=sys.stderr)
        return 2
    cmd = quick_start_commands()[argv[0]]
    print("\n".join(steps(cmd)) if argv[1:] else cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
