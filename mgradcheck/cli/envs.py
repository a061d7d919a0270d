"""``mgradcheck envs``: the cached environments that hold real MLX releases."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from mgradcheck.cli.common import handle_errors
from mgradcheck.cli.completion import release_versions, remember_releases
from mgradcheck.cli.release_options import release_options, version_option
from mgradcheck.errors import UsageError
from mgradcheck.exitcodes import describe

if TYPE_CHECKING:
    from packaging.version import Version

    from mgradcheck.releases.settings import Settings


@click.group(short_help="The cached environments that hold real MLX releases.")
def envs() -> None:
    """The cached environments that hold real MLX releases (one per release, backend and Python)."""


@envs.command(name="list", epilog=describe("listed", environment=False))
@handle_errors
def envs_list() -> None:
    """List the cached environments: release, backend, Python, installer, state, directory,
    and where the release came from.

    One release has one environment per installer (uv, pip) and package source: each
    is built and kept on its own, and both are listed.
    """
    from collections import Counter

    from mgradcheck.envs import inventory, venvs

    ours, foreign = inventory.scan()
    if not ours:
        click.echo(f"no environments in {venvs.envs_root()}")
    for env in ours:
        spec = env.spec
        where = spec.get("index") or "no index"
        links = f" + {spec['find_links']}" if spec.get("find_links") else ""
        line = (
            f"{env.version:<12} {spec.get('backend', '?'):<6} py{spec.get('python', '?'):<6} "
            f"{spec.get('installer', '?'):<4} {env.state.value:<11} {env.path}"
        )
        click.echo(f"{line}  ({where}{links})")
    for path in foreign:
        click.echo(f"{'-':<12} {'':<6} {'':<8} {'':<4} {'not ours':<11} {path}  (left alone)")
    same = Counter((e.version, e.spec.get("backend"), e.spec.get("python")) for e in ours)
    for (version, backend, python), n in same.items():
        if n > 1:
            click.echo(
                f"note: mlx {version} ({backend}, py{python}) has {n} environments: one per "
                "installer and package source, each built and kept on its own"
            )


@envs.command(name="releases", epilog=describe("listed"))
@handle_errors
@release_options
def envs_releases(settings: Settings) -> None:
    """List the MLX releases installable here, oldest first."""
    from mgradcheck.index.installable import list_releases

    listing = list_releases(settings.source, settings.target, settings.pre, settings.yanked)
    if not listing.releases:
        raise UsageError(listing.empty_reason())
    for release in listing.releases:
        click.echo(f"{release.version}{'  (yanked)' if release.yanked else ''}")
    remember_releases(str(r.version) for r in listing.releases)


@envs.command(name="path", epilog=describe("printed"))
@handle_errors
@click.argument("version", callback=version_option, shell_complete=release_versions)
@release_options
@click.option("-q", "--quiet", is_flag=True, help="No progress while installing.")
def envs_path(version: Version, settings: Settings, quiet: bool) -> None:
    """Print the virtual environment holding mlx VERSION, installing it first if needed."""
    from mgradcheck.envs import venvs
    from mgradcheck.index.installable import list_releases
    from mgradcheck.run.display import choose

    spec = settings.spec(version)
    progress = choose(quiet)
    if venvs.needs_install(spec, settings.retry_failed):
        list_releases(settings.source, settings.target, pre=True, yanked=True).require(version)
        progress.start(settings.installing(version))
    try:
        with venvs.using(
            spec,
            settings.retry_failed,
            on_wait=lambda: progress.status("waiting for another mgradcheck"),
        ) as env:
            click.echo(env.path / "venv")
    finally:
        progress.stop()


@envs.command(name="prune", epilog=describe("pruned", environment=False))
@handle_errors
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Remove every environment mgradcheck made, ready ones too.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be removed, remove nothing.")
def envs_prune(everything: bool, dry_run: bool) -> None:
    """Remove failed, damaged and half-built environments (all with --all); never a directory
    mgradcheck did not make, nor one in use."""
    from mgradcheck.envs import inventory

    pruned = inventory.prune(everything, dry_run)
    verb = "would remove" if dry_run else "removed"
    for env in pruned.removed:
        click.echo(f"{verb} {env.path} ({env.version}, {env.state.value})")
    for env in pruned.in_use:
        click.echo(
            f"left {env.path} ({env.version}): in use by another mgradcheck; prune again when it ends"
        )
    count = len(pruned.removed)
    click.echo(f"{verb} {count} environment{'s' if count != 1 else ''}")
