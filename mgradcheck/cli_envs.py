"""``mgradcheck envs``: the cached environments that hold real MLX releases."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from mgradcheck.cli_common import user_errors
from mgradcheck.cli_releases import (
    interruptible,
    parse_version_option,
    release_options,
    settings_from,
)

if TYPE_CHECKING:
    from packaging.version import Version


@click.group()
def envs() -> None:
    """The cached environments that hold real MLX releases (one per release, backend and Python)."""


@envs.command(name="list")
def envs_list() -> None:
    """List the cached environments: release, backend, Python, state, directory."""
    from mgradcheck import envs as environments

    ours, foreign = environments.scan()
    if not ours:
        click.echo(f"no environments in {environments.envs_root()}")
    for env in ours:
        spec = env.spec
        where = spec.get("index") or "no index"
        links = f" + {spec['find_links']}" if spec.get("find_links") else ""
        line = f"{env.version:<12} {spec.get('backend', '?'):<6} py{spec.get('python', '?'):<6} {env.state.value:<11} {env.path}"
        click.echo(f"{line}  ({spec.get('installer', '?')}, {where}{links})")
    for path in foreign:
        click.echo(f"{'-':<12} {'':<6} {'':<8} {'not ours':<11} {path}  (left alone)")


@envs.command(name="releases")
@release_options
@user_errors
def envs_releases(**options: Any) -> None:
    """List the MLX releases installable here, oldest first."""
    from mgradcheck.index import list_releases

    settings = settings_from(options)
    listing = list_releases(settings.source, settings.target, options["pre"], options["yanked"])
    if not listing.releases:
        raise click.ClickException(listing.empty_reason())
    for release in listing.releases:
        click.echo(f"{release.version}{'  (yanked)' if release.yanked else ''}")


@envs.command(name="path")
@click.argument("version", callback=parse_version_option)
@release_options
@click.option("-q", "--quiet", is_flag=True, help="No progress while installing.")
@user_errors
@interruptible
def envs_path(version: Version, quiet: bool, **options: Any) -> None:
    """Print the virtual environment holding mlx VERSION, installing it first if needed."""
    from mgradcheck import envs as environments
    from mgradcheck.index import list_releases
    from mgradcheck.release_progress import choose

    settings = settings_from(options)
    spec = settings.spec(version)
    progress = choose(quiet)
    if environments.needs_install(spec, settings.retry_failed):
        list_releases(settings.source, settings.target, pre=True, yanked=True).require(version)
        progress.start(f"installing mlx {version}")
    try:
        with environments.using(
            spec,
            settings.retry_failed,
            on_wait=lambda: progress.status("waiting for another mgradcheck"),
        ) as env:
            click.echo(env.path / "venv")
    finally:
        progress.stop()


@envs.command(name="prune")
@click.option(
    "--all",
    "everything",
    is_flag=True,
    help="Remove every environment mgradcheck made, ready ones too.",
)
@click.option("--dry-run", is_flag=True, help="Say what would be removed, remove nothing.")
def envs_prune(everything: bool, dry_run: bool) -> None:
    """Remove failed and half-built environments (all with --all); never a directory mgradcheck did not make."""
    from mgradcheck import envs as environments

    removed = environments.prune(everything, dry_run)
    verb = "would remove" if dry_run else "removed"
    for env in removed:
        click.echo(f"{verb} {env.path} ({env.version}, {env.state.value})")
    click.echo(f"{verb} {len(removed)} environment{'s' if len(removed) != 1 else ''}")
