"""The bundled corpus judged against the report of a real CUDA run.

docs/evidence/run-0.31.1-cuda.json is `mgradcheck run` of the corpus of the
time on an NVIDIA H100 with mlx-cuda-13 0.31.1. No GPU is needed to hold the
corpus to it: each recorded run is judged again with today's entries, so an
edit of `affects`, `fixed_in` or a signature that contradicts what CUDA showed
fails here.
"""

from __future__ import annotations

import json
from pathlib import Path

from mgradcheck.corpus.files import bundled_corpus
from mgradcheck.corpus.loader import load
from mgradcheck.outcomes import Verdict
from mgradcheck.run.observation import Environment, Observation
from mgradcheck.run.verdict import classify

REPORT = Path(__file__).parent.parent / "docs" / "evidence" / "run-0.31.1-cuda.json"
# The guard crashes on CUDA 0.31.1 through compiled-reversed-slice's bug (its
# compiled y[::-1] += x case), which is not the bug it guards against.
EXPLAINED = {"stop-gradient-aliasing": Verdict.UNEXPECTED}


def test_every_recorded_cuda_run_is_judged_as_the_corpus_says() -> None:
    report = json.loads(REPORT.read_text())
    (environment,) = report["environments"]
    env = Environment.from_json(environment)
    assert env.backend == "cuda" and env.mlx == "0.31.1"
    entries = {entry.id: entry for entry in load([bundled_corpus()])}
    verdicts = {}
    for result in report["results"]:
        runs = [Observation.from_json(run) for run in result["runs"]]
        verdicts[result["id"]] = classify(entries[result["id"]], runs, env).verdict
    expected = {name: EXPLAINED.get(name, Verdict.AS_EXPECTED) for name in verdicts}
    assert verdicts == expected
    # The two entries whose CUDA rows come from this run, not from upstream.
    assert {"compiled-reversed-slice", "compiled-nan-constant"} <= verdicts.keys()
