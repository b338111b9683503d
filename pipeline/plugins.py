"""Commands that other installed distributions add to `klue`, found through Python entry points.

The product packages never import the workshop (datagen/) or any other add-on, yet some of the add-on's
commands belong under `klue` (`klue pii gen` writes the PII evaluation set that datagen/ generates). An add-on
declares them in its packaging metadata under the entry-point group `klue.commands`, each named by where it
goes -- `"name"` for `klue name`, `"group.name"` for `klue group name` -- with a `"module:attr"` of a click
command as its value. Listing the names reads only the installed metadata; a command's module is imported when
the command is looked up (run, or listed with its help line), as the built-in subcommands are.
"""

from __future__ import annotations

from importlib.metadata import entry_points

import click

from pipeline.registry import import_target

GROUP = "klue.commands"


def plugin_commands(parent: str = "") -> dict[str, str]:
    """name -> "module:attr" of the commands declared for the group `parent` ("" for `klue` itself, "pii" for
    `klue pii`); a name with a further dot belongs to a group below `parent`, not to it."""
    prefix = f"{parent}." if parent else ""
    out: dict[str, str] = {}
    for ep in entry_points(group=GROUP):
        name = ep.name.removeprefix(prefix) if ep.name.startswith(prefix) else ""
        if name and "." not in name:
            out[name] = ep.value
    return out


def plugin_command(parent: str, name: str) -> click.Command | None:
    """The command declared as `name` under `parent`, imported now; None when none is declared."""
    target = plugin_commands(parent).get(name)
    return None if target is None else import_target(target)


class PluginGroup(click.Group):
    """A click group that also offers the entry-point commands declared under its own name (its commands
    written in code come first: an add-on cannot replace one)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(set(super().list_commands(ctx)) | set(plugin_commands(self.name or "")))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        return super().get_command(ctx, cmd_name) or plugin_command(self.name or "", cmd_name)
