"""Shell completion: ``mgradcheck completion SHELL`` prints the script; entry ids, tags and
release versions complete from what is here, never from the network.

Release versions come from the cached environments and from the last listing
``mgradcheck envs releases`` printed (remembered under the cache root), so a
Tab never waits on a package index.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # the completion machinery: only when completing, not at every start
    from click.shell_completion import CompletionItem

from mgradcheck.exitcodes import describe

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VARIABLE = "_MGRADCHECK_COMPLETE"


def _entries(ctx: click.Context) -> list[Any]:
    """The corpus the command line names so far (``--corpus``), else the bundled one; [] on any problem."""
    from mgradcheck.errors import MgradcheckError
    from mgradcheck.run import stages

    paths = [Path(p) for p in (ctx.params.get("corpus_paths") or ())]
    try:
        return stages.load_corpus(paths)
    except (MgradcheckError, OSError):
        return []


def _matching(
    values: Iterable[str], incomplete: str, help_of: dict[str, str] | None = None
) -> list[CompletionItem]:
    from click.shell_completion import CompletionItem

    seen = sorted({v for v in values if v.startswith(incomplete)})
    return [CompletionItem(v, help=(help_of or {}).get(v)) for v in seen]


def entry_ids(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    entries = _entries(ctx)
    return _matching((e.id for e in entries), incomplete, {e.id: e.title for e in entries})


def tags(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[CompletionItem]:
    return _matching((t for e in _entries(ctx) for t in e.tags), incomplete)


def _listing_file() -> Path:
    from mgradcheck.paths import cache_root

    return cache_root() / "completion-releases.json"


def remember_releases(versions: Iterable[str]) -> None:
    """Keep the versions ``envs releases`` listed, for completing ``--mlx``, ``--good``, ``--bad``."""
    import json

    from mgradcheck.atomic import write_text
    from mgradcheck.errors import WriteError

    # Completion is a convenience: never fail a command over it.
    with contextlib.suppress(WriteError, OSError):
        write_text(_listing_file(), json.dumps(sorted(set(versions))) + "\n")


def known_releases() -> set[str]:
    """Versions in the cached environments and in the last remembered listing."""
    import json

    versions: set[str] = set()
    try:
        data = json.loads(_listing_file().read_text(encoding="utf-8"))
        versions.update(v for v in data if isinstance(v, str))
    except (OSError, ValueError, TypeError):
        pass
    try:
        from mgradcheck.envs import inventory

        ours, _ = inventory.scan()
        versions.update(str(env.version) for env in ours)
    except Exception:  # noqa: BLE001 - a broken cache must not break the user's shell
        pass
    return versions


def release_versions(
    ctx: click.Context, param: click.Parameter, incomplete: str
) -> list[CompletionItem]:
    from packaging.version import InvalidVersion, Version

    def key(text: str) -> tuple[int, Version | None, str]:
        try:
            return (0, Version(text), text)
        except InvalidVersion:
            return (1, None, text)

    from click.shell_completion import CompletionItem

    found = sorted((v for v in known_releases() if v.startswith(incomplete)), key=key)
    return [CompletionItem(v) for v in found]


@click.command(
    short_help="Print the shell completion script for bash, zsh or fish.",
    epilog=describe("printed", environment=False),
)
@click.argument("shell", type=click.Choice(SHELLS))
def completion(shell: str) -> None:
    """Print the completion script for SHELL; entry ids, tags and release versions complete too.

    \b
    bash:  eval "$(mgradcheck completion bash)"      (in ~/.bashrc)
    zsh:   eval "$(mgradcheck completion zsh)"       (in ~/.zshrc)
    fish:  mgradcheck completion fish > ~/.config/fish/completions/mgradcheck.fish
    """
    from click.shell_completion import get_completion_class

    root = click.get_current_context().find_root().command
    kind = get_completion_class(shell)
    assert kind is not None  # every name in SHELLS is one Click knows
    click.echo(kind(root, {}, "mgradcheck", COMPLETE_VARIABLE).source())
