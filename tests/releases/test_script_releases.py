"""``mgradcheck new`` says what it will install, runs the newest release of each minor
series, and bisects where the outcome flips, over fake releases with patch releases; the
bug's signature read off runs, and the bounds its flips give."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from mgradcheck.corpus.loader import load
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.regress import State
from mgradcheck.releases.release_matrix import Flip
from mgradcheck.releases.script_releases import boundaries, signature
from mgradcheck.run.observation import Observation
from tests import fake_mlx
from tests.builders import mgradcheck
from tests.releases.test_entry_from_script import WRONG_GRAD

# The fake grad is halved on every 1.2.x and 1.3.x release.
PATCHED = ("1.1.0", "1.1.1", "1.2.0", "1.2.1", "1.3.0", "1.3.1", "1.4.0", "1.4.1")


@pytest.fixture
def patch_wheels(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in PATCHED:
        fake_mlx.write_fake_mlx(wheels, version)
    fake_mlx.repack_numpy(wheels)
    monkeypatch.setenv("UV_OFFLINE", "1")
    monkeypatch.setenv("UV_CACHE_DIR", str(tmp_path / "uv-cache"))
    return wheels


def test_new_says_what_it_installs_and_bisects_the_flips(
    patch_wheels: Path, tmp_path: Path
) -> None:
    script = tmp_path / "halved_grad.py"
    script.write_text(WRONG_GRAD)
    corpus = tmp_path / "corpus"
    source = ["--no-index", "--find-links", str(patch_wheels), "--backend", "cpu"]
    done = mgradcheck("new", str(script), "--corpus", str(corpus), *source)
    assert done.returncode == 0, done.stderr
    sizes = sum(p.stat().st_size for p in patch_wheels.glob("mlx*-1.[1-4].1-*.whl"))
    assert (
        "mgradcheck: new: 4 releases (the newest of each minor series; --versions RANGE for "
        f"more): 4 to install (about {round(sizes / 1000)} kB); a bisect where the outcome "
        "flips installs a few more"
    ) in done.stderr
    assert "new: judging halved_grad.py on 4 releases" in done.stderr
    assert "matrix:" not in done.stderr
    (entry,) = load([corpus])
    # Only the flips were bisected: 1.2.0 and 1.4.0 probed, 1.1.0 and 1.3.0 never installed.
    assert entry.bug.introduced_in["cpu"] == Version("1.2.0")
    assert entry.bug.fixed_in["cpu"] == Version("1.4.0")
    ran = [line.split(":")[0] for line in done.stdout.splitlines() if line.startswith("mlx ")]
    assert ran == ["mlx 1.1.1", "mlx 1.2.0", "mlx 1.2.1", "mlx 1.3.1", "mlx 1.4.0", "mlx 1.4.1"]

    again = mgradcheck(
        "new", str(script), "--corpus", str(corpus), "--id", "again", "--versions", ">=1.3",
        *source,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "new: 4 releases: 1 to install" in again.stderr  # 1.3.0 only
    assert "3 already installed (they cost nothing)" in again.stderr


def _run(outcome: Outcome, message: str = "", exc_type: str | None = None) -> Observation:
    return Observation(outcome, 0.1, exc_type=exc_type, message=message)


def test_the_signature_is_the_newest_misbehaviour_and_its_kin() -> None:
    old_api = _run(Outcome.ERROR, "module has no attribute 'vmap'", "AttributeError")
    found = signature(
        [
            [old_api],
            [_run(Outcome.CRASH, "killed by SIGSEGV (segmentation fault)")],
            [_run(Outcome.FAIL, "jvp of f: observed [1, 2], expected [1, 3]")],
            [_run(Outcome.FAIL, "jvp of f: observed [1, 7], expected [1, 3]")],
            [_run(Outcome.PASS)],
        ]
    )
    assert found is not None and found.outcomes == (Outcome.FAIL, Outcome.CRASH)
    assert found.match == r"jvp of f: observed|killed by SIGSEGV \(segmentation fault\)"
    raised = signature([[old_api], [_run(Outcome.ERROR, "Not implemented for Sort", "ValueError")]])
    assert raised is not None and raised.outcomes == (Outcome.ERROR,)
    assert (
        raised.match == "ValueError: Not implemented for Sort"
    )  # the old API error is not the bug
    vague = signature([[_run(Outcome.FAIL, "x: 3")], [_run(Outcome.FAIL, "y: 4")]])
    assert vague is not None and vague.match is None
    assert signature([[_run(Outcome.PASS)], [_run(Outcome.TIMEOUT, "timed out")]]) is None


def test_boundaries() -> None:
    def flip(before: str, after: str, now: State) -> Flip:
        was = State.GOOD if now is State.BAD else State.BAD
        return Flip("x", Version(before), Version(after), was, now)

    v = Version
    assert boundaries([]) == (None, None, None)
    assert boundaries([flip("1.0", "1.1", State.GOOD)]) == (None, v("1.1"), None)
    assert boundaries([flip("1.0", "1.1", State.BAD)]) == (v("1.1"), None, None)
    both = [flip("1.0", "1.1", State.BAD), flip("1.2", "1.3", State.GOOD)]
    assert boundaries(both) == (v("1.1"), v("1.3"), None)
    twice = [flip("1.0", "1.1", State.GOOD), flip("1.1", "1.2", State.BAD)]
    introduced, fixed, why = boundaries(twice)
    assert introduced is None and fixed is None and why is not None and "flips 2 times" in why
