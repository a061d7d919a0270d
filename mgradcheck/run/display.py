"""Progress while a command works: one protocol; Rich on a terminal, plain lines elsewhere, or nothing.

Every long command (``run``, ``bisect``, ``matrix``, ``sweep``, ``envs path``,
``run --mlx`` while it installs) reports through :class:`Progress`: a title
(with a total when it is known), the step in progress, the items running now
(each from ``item_started`` to ``item_finished``), a ``result`` line per
finished item (a log's record of it: on a terminal the table at the end
shows it), other lines (``line``), the count of finished items. Implementations are
safe to call from worker threads: entries and releases run in parallel.
"""

from __future__ import annotations

import builtins
import os
import re
import sys
import threading
import time
from typing import IO, TYPE_CHECKING, Any, Protocol

# Rich is imported where it draws: --help and a run whose output is piped never load it
# (tests/cli/test_startup.py).
if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

# What a terminal would act on instead of showing: C0 controls but newline and tab (an
# escape sequence can retitle the terminal, forge a link, move the cursor), DEL, C1
# controls, the bidirectional overrides, line and paragraph separators, and the lone
# surrogates a child's undecodable output becomes.
_CONTROL = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)


def escape_character(match: re.Match[str]) -> str:
    """A matched character as the escape Python would write: ``\\x1b``, ``\\u202e``."""
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` safe to show on a terminal: every control character written as an escape.

    Text a child or a corpus controls (messages, tracebacks, output tails, titles)
    goes through this before any display; newlines and tabs are kept.
    """
    return _CONTROL.sub(escape_character, text)


def markup_safe(text: str) -> str:
    """``text`` for a Rich string that holds markup of ours: printable, its brackets escaped."""
    from rich.markup import escape

    return escape(printable(text))


class Progress(Protocol):
    def start(self, title: str, total: int | None = None) -> None: ...
    def status(self, text: str) -> None: ...
    def item_started(self, item: str) -> None: ...
    def item_finished(self, item: str) -> None: ...
    def line(self, text: str, style: str = "") -> None: ...
    def result(self, text: str, style: str = "", mark: str = "") -> None: ...
    def advance(self, count: int = 1) -> None: ...
    def stop(self) -> None: ...


class Silent:
    """Shows nothing: for runs inside other runs (bisect probes, sweep batches, pytest items)."""

    def start(self, title: str, total: int | None = None) -> None:
        pass

    def status(self, text: str) -> None:
        pass

    def item_started(self, item: str) -> None:
        pass

    def item_finished(self, item: str) -> None:
        pass

    def line(self, text: str, style: str = "") -> None:
        pass

    def result(self, text: str, style: str = "", mark: str = "") -> None:
        pass

    def advance(self, count: int = 1) -> None:
        pass

    def stop(self) -> None:
        pass


MARKS_PER_LINE = 60


class PlainProgress:
    """For CI logs and pipes: a line per event, ``[3/9] text`` when the total is known; a
    finished item that has a mark (``.``, ``R``, ``s``...) is that one character, as pytest
    prints its dots, :data:`MARKS_PER_LINE` to a line that ends in how far the run is."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream or sys.stderr
        self.total: int | None = None
        self.done = 0
        self.marks = 0  # marks on the line being written; 0 when none is open
        self._lock = threading.Lock()

    def _print(self, text: str) -> None:
        self._end_marks()
        print(printable(text), file=self.stream, flush=True)

    def _end_marks(self) -> None:
        """Close a line of marks with the count so far, before any other line is printed."""
        if not self.marks:
            return
        pad = " " * (MARKS_PER_LINE - self.marks + 1)
        total = f"/{self.total}" if self.total is not None else ""
        width = len(str(self.total)) if self.total is not None else 0
        print(f"{pad}[{self.done:>{width}}{total}]", file=self.stream, flush=True)
        self.marks = 0

    def start(self, title: str, total: int | None = None) -> None:
        with self._lock:
            self.total, self.done = total, 0
            self._print(title)

    def status(self, text: str) -> None:
        with self._lock:
            self._print(f"  ... {text}")

    # A log gets one line per finished item (with its time), not one per start too.
    def item_started(self, item: str) -> None:
        pass

    def item_finished(self, item: str) -> None:
        pass

    def line(self, text: str, style: str = "") -> None:
        with self._lock:
            if self.total is None:
                self._print(f"  {text}")
                return
            width = len(str(self.total))
            self._print(f"[{min(self.done + 1, self.total):>{width}}/{self.total}] {text}")

    def result(self, text: str, style: str = "", mark: str = "") -> None:
        """A finished item: its mark, or without one its line."""
        if not mark:
            self.line(text, style)
            return
        with self._lock:
            print(mark, end="", file=self.stream, flush=True)
            self.marks += 1

    def advance(self, count: int = 1) -> None:
        with self._lock:
            self.done += count
            if self.marks >= MARKS_PER_LINE:  # after the count, so the line ends with its own
                self._end_marks()

    def stop(self) -> None:
        with self._lock:
            self._end_marks()


FIXED_COLUMNS = 44  # spinner, bar, count and elapsed time, with the spaces between them


def running_text(started: dict[str, float], now: float, width: int) -> str:
    """``running: a 41s, b 3s, +2 more``: the items running now, longest first, within ``width``."""
    items = sorted(started.items(), key=lambda kv: kv[1])
    parts = [f"{item} {now - since:.0f}s" for item, since in items]
    for shown in range(len(parts), 0, -1):
        rest = len(parts) - shown
        text = "running: " + ", ".join(parts[:shown]) + (f", +{rest} more" if rest else "")
        if len(text) <= width:
            return text
    if not items:
        return ""
    # Not even the first fits whole: cut its name, keep its time and how many more run.
    item, since = items[0]
    tail = f" {now - since:.0f}s" + (f", +{len(items) - 1} more" if len(items) > 1 else "")
    room = width - len("running: ") - len(tail)
    if room < 2:
        return cut("running: " + item + tail, width)
    return "running: " + cut(item, room) + tail


def cut(text: str, width: int) -> str:
    """``text`` within ``width`` characters, ending in an ellipsis when it had to be cut."""
    return text if len(text) <= width else text[: max(width - 1, 0)] + "\N{HORIZONTAL ELLIPSIS}"


class RichProgress:
    """A spinner, a bar when the total is known, the current step or what is running and for
    how long, and finished lines above them."""

    def __init__(self, console: Console) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            ProgressColumn,
            SpinnerColumn,
            TaskID,
            TimeElapsedColumn,
        )
        from rich.table import Column
        from rich.text import Text

        self.console = console
        self.running: dict[str, float] = {}  # item -> when it started (monotonic)
        self._lock = threading.Lock()
        owner = self

        class Running(ProgressColumn):
            """The items running now, re-drawn as their times grow; else the step in progress
            (which a log shows as its own line: the bar already counts what finished)."""

            def render(self, task: Any) -> Text:
                with owner._lock:
                    running = dict(owner.running)
                if not running:
                    return Text(task.description)
                width = max(owner.console.width - FIXED_COLUMNS, 20)
                return Text(running_text(running, time.monotonic(), width), style="dim")

        # The title goes on a line of its own above: the bar's line keeps its width for
        # what is running, so that at 80 columns nothing is cut.
        self.progress = Progress(
            SpinnerColumn(),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            Running(table_column=Column(no_wrap=True)),
            console=console,
            transient=True,
        )
        self.task: TaskID | None = None

    def start(self, title: str, total: int | None = None) -> None:
        from rich.text import Text

        self.console.print(Text(printable(title), style="bold"), highlight=False)
        if self.task is not None:  # started again for the next stage (a sweep's shrinking)
            self.progress.remove_task(self.task)
        with self._lock:
            self.running.clear()
        self.progress.start()
        self.task = self.progress.add_task("", total=total)

    def status(self, text: str) -> None:
        if self.task is not None:
            self.progress.update(self.task, description=printable(text))

    def item_started(self, item: str) -> None:
        with self._lock:
            self.running[printable(item)] = time.monotonic()

    def item_finished(self, item: str) -> None:
        with self._lock:
            self.running.pop(printable(item), None)

    def line(self, text: str, style: str = "") -> None:
        from rich.text import Text

        self.progress.console.print(Text(f"  {printable(text)}", style=style), highlight=False)

    def result(self, text: str, style: str = "", mark: str = "") -> None:
        """Nothing: on a terminal the bar counts what finished, and the end shows what matters."""

    def advance(self, count: int = 1) -> None:
        if self.task is not None:
            self.progress.update(self.task, advance=count)

    def stop(self) -> None:
        self.progress.stop()


def choose(quiet: bool, stream: IO[str] | None = None) -> Progress:
    """Rich on an interactive terminal, plain lines otherwise, nothing when ``quiet``."""
    out = stream or sys.stderr
    if quiet:
        return Silent()
    if out.isatty():
        from rich.console import Console

        return RichProgress(Console(file=out))
    return PlainProgress(out)


PIPE_WIDTH = 100  # what reports and tables fit where neither $COLUMNS nor a terminal says


# struct winsize holds a terminal's columns and rows as unsigned shorts: no terminal is larger.
MAX_TERMINAL_SIZE = 0xFFFF


def terminal_size_variable(name: str) -> int | None:
    """``$COLUMNS`` or ``$LINES`` when it is a size a terminal can have (1 to 65535), else None."""
    value = os.environ.get(name, "").strip()
    if not (value.isascii() and value.isdigit() and len(value) <= len(str(MAX_TERMINAL_SIZE))):
        return None  # '²' is a digit to isdigit() and not to int(); 5,000 digits are no size
    return int(value) if 0 < int(value) <= MAX_TERMINAL_SIZE else None


def drop_bad_terminal_sizes() -> None:
    """Remove a ``$COLUMNS`` or ``$LINES`` that no terminal could have (``abc``, ``-5``, 5,000
    digits), as most tools ignore one: Rich, Click and :func:`output_width` then use their
    defaults, where Rich would have raised at ``int()``."""
    for name in ("COLUMNS", "LINES"):
        if name in os.environ and terminal_size_variable(name) is None:
            del os.environ[name]


def output_width(stream: IO[str] | None = None) -> int:
    """The columns a table or listing on ``stream`` fits: :func:`known_width`, else
    :data:`PIPE_WIDTH`."""
    return known_width(stream) or PIPE_WIDTH


def known_width(stream: IO[str] | None = None) -> int | None:
    """The columns of what ``stream`` shows: ``$COLUMNS`` when it is a terminal's size (as Rich
    and Click read it), else the terminal's width; None in a pipe or a file, where prose keeps
    its lines whole rather than guess a width (a CI log wraps them itself)."""
    columns = terminal_size_variable("COLUMNS")
    if columns is not None:
        return columns
    stream = stream or sys.stdout
    try:
        if stream.isatty():
            return os.get_terminal_size(stream.fileno()).columns or None
    except (OSError, ValueError, AttributeError):  # closed, or a stream with no descriptor
        pass
    return None


def plain_stream(stream: IO[str]) -> bool:
    """Whether Rich would print plain text on ``stream``: no terminal, none forced (Rich reads
    FORCE_COLOR and TTY_COMPATIBLE), UTF-8 (else Rich draws boxes in ASCII), no Jupyter. Then
    a report may print that text itself and leave Rich unimported."""
    if os.environ.get("FORCE_COLOR") is not None or os.environ.get("TTY_COMPATIBLE"):
        return False
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower()
    if not encoding.startswith("utf") or hasattr(builtins, "get_ipython"):
        return False
    try:
        return not stream.isatty()
    except ValueError:  # closed: left to Rich, as before
        return False


def report_console(stderr: bool = False) -> Console:
    """The console reports and tables print on, as wide as :func:`output_width` says.

    ``stderr`` when standard output carries a report (``--json -``), so the two never mix.
    """
    from rich.console import Console

    console = Console(highlight=False, stderr=stderr)
    if not console.is_terminal:
        width = output_width(sys.stderr if stderr else sys.stdout)
        console = Console(highlight=False, width=width, stderr=stderr)
    return console
