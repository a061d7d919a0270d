"""MLX's history between two ends, over the fake history of tests/fake_commits.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from mgradcheck.builds import commits, sources
from mgradcheck.errors import UsageError
from tests.fake_commits import HISTORY, FakeHistory, git


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> FakeHistory:
    from tests.fake_commits import make_history

    return make_history(tmp_path_factory.mktemp("history") / "mlx")


def repo(history: FakeHistory) -> Path:
    return sources.repository(history.path)


def test_the_range_is_the_first_parent_history_oldest_first(history: FakeHistory) -> None:
    found = commits.first_parent_range(repo(history), history.shas[0], history.shas[-1])
    assert [c.sha for c in found] == list(history.shas)
    assert [c.subject for c in found] == [change.subject for change in HISTORY]
    assert found[4].pull_request == 104 and found[0].pull_request is None
    assert found[4].url == f"https://github.com/ml-explore/mlx/commit/{history.shas[4]}"
    assert found[4].pull_url == "https://github.com/ml-explore/mlx/pull/104"
    assert found[4].author == "Fake Maintainer" and found[4].date[:2] == "20"


def test_a_merged_side_branch_is_walked_by_its_merge_commit(tmp_path: Path) -> None:
    work = tmp_path / "merges"
    work.mkdir()
    git(work, "init", "--quiet", "--initial-branch=main")
    for key, value in (("user.name", "t"), ("user.email", "t@example.invalid")):
        git(work, "config", key, value)
    git(work, "commit", "--quiet", "--allow-empty", "-m", "start")
    git(work, "switch", "--quiet", "-c", "topic")
    git(work, "commit", "--quiet", "--allow-empty", "-m", "inside the pull request")
    git(work, "switch", "--quiet", "main")
    git(work, "merge", "--quiet", "--no-ff", "-m", "Merge pull request #7 from x/topic", "topic")
    found = commits.first_parent_range(
        sources.repository(work), git(work, "rev-parse", "main~1"), git(work, "rev-parse", "main")
    )
    assert [c.subject for c in found] == ["start", "Merge pull request #7 from x/topic"]
    assert found[1].pull_request == 7
    side = git(work, "rev-parse", "topic")
    with pytest.raises(UsageError, match="not on the first-parent history"):
        commits.first_parent_range(sources.repository(work), side, git(work, "rev-parse", "main"))


def test_ends_must_lie_on_one_history(history: FakeHistory) -> None:
    with pytest.raises(UsageError, match="not an ancestor"):
        commits.first_parent_range(repo(history), history.shas[5], history.shas[2])
    with pytest.raises(UsageError, match="both ends"):
        commits.first_parent_range(repo(history), history.shas[2], history.shas[2])


def test_releases_tags_and_hashes_name_commits(history: FakeHistory) -> None:
    where = repo(history)
    assert commits.resolve_ref(where, "1.2.0") == history.shas[0]  # a release: its tag
    assert commits.resolve_ref(where, "v1.3.0") == history.shas[-1]
    assert commits.resolve_ref(where, history.shas[4][:9]) == history.shas[4]
    with pytest.raises(UsageError, match=r"no tag v9\.9\.9 for mlx 9\.9\.9"):
        commits.resolve_ref(where, "9.9.9")
    with pytest.raises(UsageError, match="no commit"):
        commits.resolve_ref(where, "abcdef0")


def test_a_commit_follows_the_newest_release_it_descends_from(history: FakeHistory) -> None:
    releases = [Version("1.2.0"), Version("1.3.0"), Version("1.4.0")]  # 1.4.0 has no tag
    assert commits.follows(repo(history), history.shas[4], releases) == (Version("1.2.0"), 4)
    assert commits.follows(repo(history), history.shas[-1], releases) == (Version("1.3.0"), 0)
    assert commits.follows(repo(history), history.shas[4], [Version("1.3.0")]) == (None, 0)


def test_what_names_a_commit() -> None:
    assert commits.is_commit("6335c834c") and commits.is_commit("a" * 40)
    assert (
        not commits.is_commit("0.32.0")
        and not commits.is_commit("abc12")
        and not commits.is_commit("A" * 7)
    )
    assert commits.version_commit(Version("0.32.0.dev20260101+6335c834c")) == "6335c834c"
    assert commits.version_commit(Version("0.30.0.dev20250101+g1234abcd")) == "1234abcd"
    assert commits.version_commit(Version("0.32.0")) is None
    assert commits.version_commit(Version("0.32.0+cpu")) is None
