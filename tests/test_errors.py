"""The one error taxonomy: each error's exit status and lines, through the one handler every command uses."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from mgradcheck.cli.common import handle_errors
from mgradcheck.errors import (
    CorpusError,
    EnvironmentFailure,
    HarnessError,
    Interrupted,
    MgradcheckError,
    ReleaseError,
    UsageError,
    WriteError,
)
from mgradcheck.exitcodes import ExitCode
from tests.conftest import MINIMAL


@pytest.mark.parametrize(
    ("error", "status", "lines"),
    [
        (UsageError("no corpus entry with id 'x'"), 2, ["no corpus entry with id 'x'"]),
        (ReleaseError("'-rf' is not an MLX version"), 2, ["'-rf' is not an MLX version"]),
        (WriteError("cannot write r.json: No space left"), 2, ["cannot write r.json: No space left"]),
        (CorpusError([ValueError("a.yaml:3: id: bad"), ValueError("b.yaml:1: x")]), 2,
         ["a.yaml:3: id: bad", "b.yaml:1: x"]),
        (EnvironmentFailure("installing mlx 1.5.0 failed"), 3, ["installing mlx 1.5.0 failed"]),
        (HarnessError("the runner broke"), 4, ["the runner broke"]),
    ],
)  # fmt: skip
def test_each_error_prints_its_lines_and_exits_with_its_status(
    error: MgradcheckError, status: int, lines: list[str]
) -> None:
    @click.command()
    @handle_errors
    def failing() -> None:
        raise error

    result = CliRunner().invoke(failing, [])
    assert result.exit_code == status
    assert result.output.splitlines() == [f"mgradcheck: error: {line}" for line in lines]


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_an_interrupt_exits_128_plus_its_signal(sig: signal.Signals, status: int) -> None:
    assert Interrupted(sig).exit_code == status == ExitCode.for_signal(sig)

    @click.command()
    @handle_errors
    def interrupted() -> None:
        raise Interrupted(sig)

    result = CliRunner().invoke(interrupted, [])
    assert result.exit_code == status
    assert result.output == f"mgradcheck: interrupted by {sig.name}\n"


def test_a_ctrl_c_before_a_command_has_set_its_handlers_exits_130_quietly(tmp_path: Path) -> None:
    """SIGINT while a command is still starting (imports, loading the corpus) is an interrupt too,
    never Click's 'Aborted!' with exit status 1."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for i in range(10_000):  # validating them takes seconds (0.56 s for 3,000 once was too quick)
        (corpus / f"e{i}.yaml").write_text(MINIMAL.format(id=f"e{i}"))
    process = subprocess.Popen(
        [sys.executable, "-m", "mgradcheck", "validate", str(corpus)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    time.sleep(0.3)  # past the interpreter's own start-up, within mgradcheck's imports or loading
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, (out, err)
    assert err == "mgradcheck: interrupted by SIGINT\n", err
