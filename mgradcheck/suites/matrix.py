"""``tests --matrix``: a suite's tests on each release, and the release where each one flips.

The corpus's matrix machinery runs it (:func:`mgradcheck.releases.release_matrix.matrix_of`):
releases from the index, each in its cached environment, every test's runs
kept in the results store by the test's source hash, release, backend and
platform, so nothing runs twice. A test is bad on a release when it does
not pass (fail, error or crash: ``--regress-on non-pass``), good when it
passes; a skip, a timeout or a release that cannot be installed says nothing.
Releases run one after another; ``-j`` is the children within each.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Sequence

from packaging.version import Version

from mgradcheck.releases.matrix_report import matrix_view
from mgradcheck.releases.regress import RegressOn, State
from mgradcheck.releases.release_matrix import Matrix, matrix_of
from mgradcheck.releases.settings import Settings
from mgradcheck.reports.matrix import render_markdown
from mgradcheck.run.display import Progress
from mgradcheck.suites.collect import SuiteTest
from mgradcheck.suites.suite_runs import SuiteOptions, execute_for_release

REGRESS_ON = RegressOn.NON_PASS
SUBJECT = "a test suite"


def suite_matrix(
    tests: Sequence[SuiteTest],
    settings: Settings,
    version_range: str | None,
    options: SuiteOptions,
    progress: Progress,
) -> Matrix:
    """Every test on every release in ``version_range`` (stored runs reused).

    Runs of several tests per child are not stored: a test's outcome among others in one
    interpreter is not its own alone (MLX has tests that pass only after others ran).
    """
    settings = dataclasses.replace(settings, record=options.per_child == 1)
    execute = execute_for_release(options)
    return matrix_of(
        tests, settings, version_range, REGRESS_ON, None, 1, progress, execute=execute, noun="test"
    )


def outcome_counts(matrix: Matrix) -> dict[Version, Counter[str]]:
    """How many tests ended how on each release (``fail``, ``pass``, ``unavailable``...)."""
    counts: dict[Version, Counter[str]] = {v: Counter() for v in matrix.versions}
    for entry in matrix.entries:
        for version in matrix.versions:
            counts[version][matrix.cell(entry.id, version).outcome.split(" ")[0]] += 1
    return counts


def changes(matrix: Matrix) -> dict[tuple[Version, State], list[str]]:
    """The tests that start passing (GOOD) or failing (BAD) on each release, by release."""
    found: dict[tuple[Version, State], list[str]] = defaultdict(list)
    for entry in matrix.entries:
        for flip in matrix.flips(entry.id):
            found[(flip.after, flip.now)].append(entry.id)
    return dict(sorted(found.items(), key=lambda item: (item[0][0], item[0][1].label)))


def summary_lines(matrix: Matrix, markdown: bool = False) -> list[str]:
    """Outcomes per release, then which tests start passing or failing where."""
    lines = []
    for version, counts in outcome_counts(matrix).items():
        text = ", ".join(f"{n} {label}" for label, n in counts.most_common())
        lines.append(f"- mlx {version}: {text}")
    for (version, state), ids in changes(matrix).items():
        verb = "start passing" if state is State.GOOD else "start failing"
        names = ", ".join(f"`{i}`" if markdown else i for i in ids)
        lines.append(f"- {len(ids)} {verb} on {version}: {names}")
    return lines


def markdown(matrix: Matrix) -> str:
    """The matrix as Markdown, tests down and releases across, then the summary lines."""
    text = render_markdown(matrix_view(matrix), by_item=True, subject=SUBJECT)
    return text + "\n" + "\n".join(summary_lines(matrix, markdown=True)) + "\n"


__all__ = ["REGRESS_ON", "SUBJECT", "changes", "markdown", "outcome_counts", "suite_matrix",
           "summary_lines"]  # fmt: skip
