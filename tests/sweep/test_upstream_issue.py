"""From a finding to an upstream issue: the standalone script, the releases, the Markdown."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from mgradcheck.corpus.entry import Bug, Entry, FoundBy, Upstream
from mgradcheck.outcomes import Outcome
from mgradcheck.releases.regress import Judged, State
from mgradcheck.run.observation import Observation
from mgradcheck.sweep import script as scripts
from mgradcheck.sweep import upstream_issue as upstream
from tests.conftest import environment


def entry(**fields: Any) -> Entry:
    base: dict[str, Any] = dict(
        id="sweep-x", title="sweep: x: wrong-value in jvp", summary="s.", upstream=Upstream(None),
        bug=Bug((Outcome.FAIL,)), path="x.yaml", line=1,
        found_by=FoundBy("mgradcheck sweep", "0.31.1", "2026-11-22", "cpu", "x"),
    )  # fmt: skip
    return Entry(**{**base, **fields})


def test_default_releases_are_the_newest_of_each_recent_series_and_the_finder() -> None:
    versions = [Version(v) for v in ("0.29.4", "0.30.0", "0.30.6", "0.31.0", "0.31.1", "0.31.2", "0.32.0", "0.32.4")]  # fmt: skip
    chosen = upstream.default_releases(versions, entry())
    assert [str(v) for v in chosen] == ["0.30.6", "0.31.1", "0.31.2", "0.32.4"]


def test_a_code_entry_becomes_a_script_with_only_the_helpers_it_uses() -> None:
    code = "x = mx.array([1.0])\nassert_close(x * 2, [3.0], what='double')\n"
    text = upstream.code_script(entry(code=code))
    assert "def assert_close" in text and "class CheckFailed" in text
    assert "def assert_dtype" not in text and text.rstrip().endswith("what='double')")
    assert "mgradcheck" not in text.split("\n", 2)[2]  # standalone: MLX and NumPy only


def test_the_issue_names_the_releases_where_it_reproduces() -> None:
    run = Observation(Outcome.FAIL, 0.1, stdout="mlx 0.32.4 Device(cpu, 0)\nobserved [1]\nexpected [2]\n",
                      exc_type="AssertionError", message="jvp vs finite differences")  # fmt: skip
    cells = (
        Judged(Version("0.31.2"), State.BAD, "fail", "r"),
        Judged(Version("0.32.4"), State.GOOD, "pass", "passes"),
    )
    found = upstream.Issue(entry(), "print(1)\n", run, environment(), cells)
    text = upstream.render(found)
    assert text.startswith("## x: wrong-value in jvp\n") and "```python\nprint(1)\n```" in text
    assert "observed [1]\nexpected [2]\nAssertionError: jvp vs finite differences" in text
    assert "| 0.31.2 | reproduces: fail |" in text and "| 0.32.4 | good: pass |" in text
    assert "found by mgradcheck sweep on mlx 0.31.1" in text


def test_the_issue_says_where_to_look_in_mlx_and_what_was_checked() -> None:
    from mgradcheck.corpus.files import bundled_corpus
    from mgradcheck.corpus.loader import load

    (addmm,) = (e for e in load([bundled_corpus()]) if e.id == "addmm-jvp-alpha-beta")
    run = Observation(
        Outcome.FAIL, 0.1, stdout="mlx 0.32.4 Device(cpu, 0)\n", message="jvp of addmm"
    )
    cells = (Judged(Version("0.32.4"), State.BAD, "fail", "r"),)
    text = upstream.render(upstream.Issue(addmm, "print(1)\n", run, environment(), cells))
    releases, where, env = (text.index(f"### {h}") for h in ("Releases", "Where to look in MLX", "Environment"))  # fmt: skip
    assert releases < where < env
    assert re.search(r"^- `AddMM::jvp` in mlx/primitives\.cpp:\d+ \(`mx\.addmm`\)$", text, re.M)
    assert "Checked on cpu: the script above reproduces on mlx 0.32.4. " in text


HOSTILE = "```\n## Heading\n@maintainer ![image](http://x/i.png) [link](http://x) <b>bold</b>\n````"


def test_what_the_child_and_the_corpus_wrote_is_shown_never_rendered() -> None:
    from markdown_it import MarkdownIt

    run = Observation(Outcome.FAIL, 0.1, stdout=HOSTILE + "\n", message=HOSTILE)
    env = dataclasses.replace(environment(), device=f"Device({HOSTILE})", platform="@org/team")
    cells = (Judged(Version("0.32.4"), State.BAD, HOSTILE, "r"),)
    found = upstream.Issue(
        entry(title=f"x {HOSTILE}".replace("\n", " "), summary=HOSTILE),
        "# ```` in the script\n@mx.compile\ndef f(x):\n    return x\n",
        run, env, cells,
    )  # fmt: skip
    text = upstream.render(found)
    html = MarkdownIt("commonmark").enable("table").render(text)
    for rendered in ("<h2>Heading", "<img", "<a href", "<b>"):
        assert rendered not in html, rendered
    blocks = re.findall(r"<pre><code[^>]*>(.*?)</code></pre>", html, flags=re.S)
    assert len(blocks) == 2 and "\n@mx.compile\n" in blocks[0]  # the script runs as written
    assert "@maintainer ![image](http://x/i.png)" in blocks[1]  # observed: shown as printed
    outside = re.sub(r"<pre>.*?</pre>", "", html, flags=re.S)
    assert "@maintainer" not in outside and "@org" not in outside  # no @mention
    assert "@\u200dmaintainer" in outside and "![image](http://x/i.png)" in outside


def run_script(tmp_path: Path, text: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "repro.py"
    path.write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)


@pytest.mark.mlx
def test_a_standalone_script_compares_both_parts_of_a_complex_value(tmp_path: Path) -> None:
    pytest.importorskip("mlx.core")
    # What the child's assert_close does: a value wrong in its imaginary part alone is wrong.
    code = "assert_close(mx.array([1 + 2j]), np.array([1 + {}j]), what='the imaginary part')\n"
    failed = run_script(tmp_path, upstream.code_script(entry(code=code.format(3))))
    assert failed.returncode == 1 and "CheckFailed: the imaginary part" in failed.stderr, (
        failed.stderr
    )
    assert "(1+2j)" in failed.stderr and "(1+3j)" in failed.stderr
    passed = run_script(tmp_path, upstream.code_script(entry(code=code.format(2))))
    assert passed.returncode == 0 and "Warning" not in passed.stderr, passed.stderr


def script_of(fn_text: str, fn: Any, inputs: list[dict[str, Any]], checks: list[str]) -> str:
    from mgradcheck.child.gradcheck import Arg, check
    from mgradcheck.sweep.findings import arg_names

    result = check(fn, [Arg.from_spec(i) for i in inputs], checks=checks, points=1)
    assert result.findings, result.report()
    spec = {"fn": fn_text, "inputs": inputs, "dtypes": ["float32"]}
    return scripts.render(spec, asdict(result.findings[0]), arg_names(fn_text), "a title")


@pytest.mark.mlx
def test_a_script_fails_on_a_wrong_derivative_and_passes_on_a_right_one(tmp_path: Path) -> None:
    mx = pytest.importorskip("mlx.core")
    inputs = [{"shape": [2], "range": [0.5, 1.5]}]
    # stop_gradient's jvp is zero by design, which finite differences do not see: a wrong
    # derivative as far as the oracle can tell, and the script must say so on its own.
    wrong = "lambda x: mx.stop_gradient(x) * x"
    text = script_of(wrong, eval(wrong, {"mx": mx}), inputs, ["jvp"])
    failed = run_script(tmp_path, text)
    assert failed.returncode == 1 and "AssertionError" in failed.stderr, failed.stderr
    assert "expected" in failed.stdout and "import mgradcheck" not in text
    assert run_script(tmp_path, text.replace(wrong, "lambda x: x * x")).returncode == 0


@pytest.mark.mlx
def test_transform_scripts_replay_the_combination_that_failed(tmp_path: Path) -> None:
    mx = pytest.importorskip("mlx.core")
    # Findings from functions that misbehave on purpose, replayed on MLX's own operations,
    # which are right: each script runs standalone and passes.
    baked = "lambda x: x * x.shape[0]"  # a shape written into the graph
    text = script_of("lambda x: mx.sin(x) * 3.0", eval(baked, {"mx": mx}), [{"shape": [3]}], ["shapeless"])  # fmt: skip
    assert "mx.compile(fn, shapeless=True)" in text and "called at another shape" in text
    done = run_script(tmp_path, text)
    assert done.returncode == 0, done.stderr
    from tests.child.test_gradcheck import with_vmap_rule  # a batch rule that reverses the batch

    inputs = [{"shape": [3], "range": [0.5, 2.0]}] * 2
    text = script_of("lambda a, b: a * b", with_vmap_rule(True), inputs, ["vmap"])
    assert "mx.vmap(fa, in_axes, out_axes)" in text
    done = run_script(tmp_path, text)
    assert done.returncode == 0, done.stderr


@pytest.mark.mlx
@pytest.mark.parametrize("constant", [True, False])
def test_special_value_scripts_pass_the_other_arguments_in_as_the_check_does(
    constant: bool, tmp_path: Path
) -> None:
    spec = {"fn": "lambda x, w, y: x * w + y", "dtypes": ["float32"],
            "inputs": [{"shape": [3]}, {"shape": [3]}, {"shape": [], "const": True}]}  # fmt: skip
    repro = {"argument": "x", "special": "nan", "constant": constant, "shape": [], "path": "vjp"}
    finding = {"check": "specials", "traced": ["x", "w"], "dtype": "float32", "repro": repro,
               "values": [[0.5, 1.0, -1.0], [1.5, -0.5, 2.0], 0.25]}  # fmt: skip
    text = scripts.render(spec, finding, ["x", "w", "y"], "a title")
    inputs = "w, y" if constant else "x, w, y"  # y untraced, a size-1 argument: passed in too
    assert f"def path({inputs}, *c):" in text
    done = run_script(tmp_path, text)
    assert done.returncode == 0, done.stderr
