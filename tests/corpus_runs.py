"""The bundled corpus under each release the suite holds it to, run beside the rest of the suite.

Each run is `mgradcheck run` over the whole corpus: children and kernel builds that keep a
core busy for a minute or two per release, while the rest of the suite is mostly one
process at a time. Started when the session's tests are collected (only if a corpus test is
among them), one release after another with one job each, in a cache root of their own, the
runs go on beside the other tests instead of after them; each corpus test waits for its run.
A session that ends first stops them.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 900.0  # seconds, for one release's run (a hung entry has a timeout of its own)


@dataclass(frozen=True)
class Finished:
    """One run: its JSON report's path (missing if it wrote none), exit status and stderr."""

    report: Path
    returncode: int
    stderr: str


class CorpusRuns:
    """The corpus under ``releases`` (None: the MLX installed here), one after another, each
    with ``jobs`` children (one beside the other tests; both cores for a run waited for)."""

    def __init__(self, releases: list[str | None], jobs: int = 1) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="mgradcheck-corpus-runs-"))
        self.releases, self.jobs = releases, jobs
        self._done = {release: threading.Event() for release in releases}
        self._finished: dict[str | None, Finished] = {}
        self._running: subprocess.Popen[str] | None = None
        self._stopped = False
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run_all, daemon=True)
        # The environment as the session began: a test's monkeypatch changes os.environ for the
        # whole process while it runs (an offline uv with a cache of fake wheels, say).
        self._env = {**os.environ, "MGRADCHECK_CACHE": str(self.root / "cache")}
        self._env.pop("GITHUB_STEP_SUMMARY", None)  # not the CI job's summary (see conftest.py)

    def start(self) -> None:
        self._thread.start()

    def result(self, release: str | None) -> Finished:
        """``release``'s run, once it has finished."""
        if not self._done[release].wait(TIMEOUT * len(self.releases)):
            raise TimeoutError(f"the corpus run for {release or 'the installed MLX'} never ended")
        return self._finished[release]

    def stop(self) -> None:
        """Stop what still runs, and remove the runs' cache root."""
        with self._lock:
            self._stopped = True
            if self._running is not None and self._running.poll() is None:
                os.killpg(self._running.pid, signal.SIGKILL)
        self._thread.join(timeout=30)
        shutil.rmtree(self.root, ignore_errors=True)

    def _run_all(self) -> None:
        for release in self.releases:
            report = self.root / f"report-{release or 'installed'}.json"
            args = [
                sys.executable,
                "-m",
                "mgradcheck",
                "run",
                f"-j{self.jobs}",
                "-q",
                "--json",
                str(report),
            ]
            with self._lock:
                if self._stopped:
                    break
                self._running = subprocess.Popen(
                    [*args, *(["--mlx", release] if release else [])],
                    env=self._env,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                    text=True,
                    start_new_session=True,  # its children go with it when stopped
                )
            try:
                _, stderr = self._running.communicate(timeout=TIMEOUT)
            except subprocess.TimeoutExpired:
                os.killpg(self._running.pid, signal.SIGKILL)
                _, stderr = self._running.communicate()
            self._finished[release] = Finished(report, self._running.returncode, stderr)
            self._done[release].set()
        for release in self.releases:  # stopped before they ran
            self._finished.setdefault(release, Finished(Path(), -1, "stopped before it ran"))
            self._done[release].set()
