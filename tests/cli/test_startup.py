"""Start-up cost: what ``--help`` and a quiet ``run`` import, read from ``-X importtime``.

Timings are not asserted (``bench/run.py`` measures them); what is pinned is the
cause of the slow start-ups the benchmark found: the release, index and build
machinery and Rich imported by commands that install nothing and draw nothing; and
the other commands' modules imported by a run that needs none of them.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from mgradcheck.cli import cli
from tests.conftest import BEHAVIOURS

# Never imported by --help or by a run on this interpreter whose output is piped.
DENIED = (
    "rich",
    "packaging.specifiers",
    "urllib.request",
    "html.parser",
    "mgradcheck.releases",
    "mgradcheck.builds",
    "mgradcheck.envs",
    "mgradcheck.index",
    "click.shell_completion",
)
# The light corner of the release machinery the command line's options read: the choices of
# --regress-on (it imports nothing heavier).
ALLOWED = {"mgradcheck.releases", "mgradcheck.releases.regress"}


def imported(*args: str) -> set[str]:
    """The modules ``mgradcheck ARGS`` imports (itself, not its children), standard output piped
    and no terminal forced (as CI may: then Rich draws)."""
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "mgradcheck", *args],
        capture_output=True, text=True, timeout=120, check=False, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    prefix = "import time:"
    return {
        line.rsplit("|", 1)[1].strip()
        for line in done.stderr.splitlines()
        if line.startswith(prefix) and "imported package" not in line
    }


# Never imported by a quiet run on this interpreter: platformdirs (the cache directory is
# named without it on Linux and macOS), sharding, the other commands.
RUN_DENIED = (
    "platformdirs",
    "mgradcheck.corpus.shard", "mgradcheck.cli.releases", "mgradcheck.cli.sweep",
    "mgradcheck.cli.tests", "mgradcheck.cli.report", "mgradcheck.cli.envs", "mgradcheck.cli.new",
)  # fmt: skip


def denied(modules: set[str], deny: tuple[str, ...] = DENIED) -> list[str]:
    return sorted(
        name
        for name in modules - ALLOWED
        if any(name == d or name.startswith(d + ".") for d in deny)
    )


def test_the_import_log_is_read() -> None:
    modules = imported("--version")
    assert {"click", "mgradcheck.cli"} <= modules


@pytest.mark.parametrize(
    "args",
    [
        ("--help",),
        ("run", "--help"),
        ("list", "--corpus", str(BEHAVIOURS)),
        ("run", "--corpus", str(BEHAVIOURS), "passes", "-q", "-j1"),
    ],
    ids=" ".join,
)
def test_commands_that_install_and_draw_nothing_import_none_of_it(args: tuple[str, ...]) -> None:
    assert denied(imported(*args)) == []


def test_a_quiet_run_imports_only_what_it_runs() -> None:
    args = ("run", "--corpus", str(BEHAVIOURS), "passes", "-q", "-j1")
    assert denied(imported(*args), DENIED + RUN_DENIED) == []


def test_a_run_on_a_terminal_still_draws_with_rich() -> None:
    """The plain table is only for pipes: FORCE_COLOR asks Rich for a terminal's output."""
    done = subprocess.run(
        [sys.executable, "-m", "mgradcheck", "run", "--corpus", str(BEHAVIOURS), "passes", "-q"],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "FORCE_COLOR": "1"},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "\x1b[" in done.stdout


def test_a_run_that_installs_nothing_reads_no_index_settings() -> None:
    """Bad installer settings are refused by what installs (``run --mlx``), not by every run."""
    env = {"UV_NO_INDEX": "1", "PIP_INDEX_URL": "ftp://x"}
    result = CliRunner().invoke(cli, ["run", "--corpus", str(BEHAVIOURS), "passes", "-q"], env=env)
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(
        cli, ["run", "--corpus", str(BEHAVIOURS), "--mlx", "1.1.0"], env=env
    )
    assert result.exit_code == 2
    assert "without an index, give --find-links DIR" in result.output
