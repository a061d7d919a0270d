"""The backends table: what each --backend installs, and what the corpus calls it."""

from __future__ import annotations

from importlib.metadata import metadata

from packaging.requirements import Requirement

from mgradcheck import backends
from mgradcheck.backends import BY_NAME, FAMILIES, NAMES, TABLE


def test_names_and_families() -> None:
    assert NAMES == ("cpu", "cuda", "cuda12", "cuda13", "metal")
    assert FAMILIES == ("cpu", "metal", "cuda")  # the corpus's order
    assert [backends.family(n) for n in ("cuda12", "cuda13", "metal", "?")] == [
        "cuda", "cuda", "metal", "?"
    ]  # fmt: skip
    assert {b.family for b in TABLE} <= set(NAMES)  # each family can be asked for by name


def test_defaults() -> None:
    assert backends.default("Darwin") == "metal"
    assert backends.default("Linux") == backends.default("Windows") == "cpu"


def test_the_family_installed_is_told_by_its_companion() -> None:
    def has(*names: str) -> str:
        return backends.installed_family("Linux", lambda name: name in names)

    assert has("mlx-cuda-13") == has("mlx-cpu", "mlx-cuda") == "cuda"
    assert has("mlx-cpu") == has() == "cpu"
    assert backends.installed_family("Darwin", lambda name: False) == "metal"


def test_every_extra_is_one_of_ours() -> None:
    """`pip install 'mgradcheck[cuda13]'` installs what --backend cuda13 does."""
    extras: dict[str, set[str]] = {}
    for text in metadata("mgradcheck").get_all("Requires-Dist") or []:
        req = Requirement(text)
        for row in TABLE:
            if row.extra and req.marker is not None and req.marker.evaluate({"extra": row.extra}):
                extras.setdefault(row.extra, set()).update(req.extras)
    assert extras == {b.extra: {b.extra} for b in TABLE if b.extra}
    assert all(bool(b.extra) == bool(b.companions) for b in BY_NAME.values())
