"""What a matrix's report shows (:class:`~mgradcheck.reports.matrix.MatrixView`), made from a
:class:`~mgradcheck.releases.release_matrix.Matrix`.

The judging stays here, above the report: which cells are a flip or unknown, how an entry
that never flips is summed up, and what the corpus records about a flip.
"""

from __future__ import annotations

from collections.abc import Iterable

from mgradcheck.backends import family
from mgradcheck.corpus.entry import Entry
from mgradcheck.releases.regress import Judged, RegressOn, State, recorded
from mgradcheck.releases.release_matrix import Flip, Matrix
from mgradcheck.releases.store import Runnable
from mgradcheck.reports.matrix import Cell, FlipLine, Item, MatrixView


def matrix_view(matrix: Matrix) -> MatrixView:
    """The report's values: every entry's cells on every release, and its flips worded."""
    return MatrixView(
        matrix.target,
        matrix.regress_on.meaning,
        tuple(str(v) for v in matrix.versions),
        tuple(_item(matrix, entry) for entry in matrix.entries),
        matrix.interrupted,
    )


def _item(matrix: Matrix, entry: Runnable) -> Item:
    flipped = matrix.flip_versions(entry.id)
    judged = {v: matrix.cell(entry.id, v) for v in matrix.versions}
    cells = tuple(
        Cell(
            "n/a" if cell.outcome == "unavailable" else cell.outcome,
            cell.state.colour,
            flip=version in flipped,
            unknown=cell.state is State.UNKNOWN,
            state=cell.state.label,
            reason=cell.reason,
            seconds=cell.seconds,
        )
        for version, cell in judged.items()
    )
    flips = tuple(
        FlipLine(flip.sentence(), flip.compare_url, _recorded(matrix, entry, flip), str(flip.after))
        for flip in matrix.flips(entry.id)
    )
    tags = entry.tags if isinstance(entry, Entry) else ()
    steady = "" if flips else _steady(judged.values())
    return Item(entry.id, cells, flips, steady, entry.title, tags)


def _steady(cells: Iterable[Judged]) -> str:
    """An entry that never flips, summed up."""
    states = {cell.state for cell in cells} - {State.UNKNOWN}
    return states.pop().label + " on every release judged" if len(states) == 1 else "nothing judged"


def _recorded(matrix: Matrix, entry: Runnable, flip: Flip) -> str:
    """The corpus's record of this flip, as a note after it: the fix or the introduction."""
    if matrix.regress_on is not RegressOn.SIGNATURE or not isinstance(entry, Entry):
        return ""
    found = recorded(entry, family(matrix.backend), flip.now is State.GOOD, flip.before, flip.after)
    if found is None:
        return ""
    change = entry.bug.fixed_by if flip.now is State.GOOD else entry.bug.introduced_by
    by = f", by {change.describe()}" if change is not None and found.agrees else ""
    return (
        f" (corpus: {found.key} {found.version}{by}{'' if found.agrees else ', which disagrees'})"
    )


__all__ = ["matrix_view"]
