"""The index of MLX's sources, built from a small MLX-like repository made here: no MLX, no network."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from mgradcheck.sweep import mlx_sources
from mgradcheck.sweep.cpp_source import blank, definitions

HEADER = r"""// Copyright
#pragma once

#define DEFINE_GRADS()                                          \
  std::vector<array> jvp(const std::vector<array>& p) override; \
  std::vector<array> vjp(const std::vector<array>& p) override;

#define DEFINE_INPUT_OUTPUT_SHAPE()                                                \
  std::vector<Shape> output_shapes(const std::vector<array>& inputs) override { \
    return {inputs[0].shape()};                                                  \
  }

namespace mlx::core {

class Primitive {
 public:
  virtual std::vector<array> jvp(const std::vector<array>& p);
  virtual bool is_equivalent(const Primitive& other) const {
    return false;
  }
};

class UnaryPrimitive : public Primitive {};

class AddMM : public UnaryPrimitive {
 public:
  explicit AddMM(Stream s, float alpha) : UnaryPrimitive(s), alpha_(alpha) {}
  DEFINE_GRADS()
  DEFINE_INPUT_OUTPUT_SHAPE()
  std::pair<float, float> state() const {
    return {alpha_, alpha_};
  }

 private:
  float alpha_;
};

class Reshape : public UnaryPrimitive {};

class Sum : public UnaryPrimitive {
 public:
  std::vector<array> vjp(const std::vector<array>& p) override {
    return p;
  }
};

class NotAPrimitive {};

} // namespace mlx::core
"""

PRIMITIVES = r"""#include "mlx/primitives.h"

namespace mlx::core {

namespace {
array helper(const array& x) {
  return x; // "}" in a comment
}
} // namespace

std::vector<array> Primitive::jvp(const std::vector<array>& p) {
  throw std::invalid_argument("[Primitive::jvp] Not implemented {");
}

std::vector<array> AddMM::jvp(
    const std::vector<array>& p) {
  char brace = '}';
  return {p[0]};
}

std::vector<array> AddMM::vjp(const std::vector<array>& p) {
  /* { */ return p;
}

} // namespace mlx::core
"""

OPS = r"""#include "mlx/ops.h"

namespace mlx::core {

array reshape(const array& a, Shape shape, StreamOrDevice s /* = {} */) {
  return array(shape, a.dtype(), std::make_shared<Reshape>(to_stream(s)), {a});
}

array sum(const array& a, StreamOrDevice s = {}) {
  return array({}, a.dtype(), std::make_shared<Sum>(to_stream(s)), {a});
}

array addmm(array c, array a, array b, float alpha, StreamOrDevice s /* = {} */) {
  auto out = array(
      c.shape(), c.dtype(), std::make_shared<AddMM>(to_stream(s), alpha), {c, a, b});
  return reshape(out, {2, 2}, s);
}

array trace(const array& a, StreamOrDevice s) {
  return sum(a, s);
}

array outer(const array& a) {
  return trace(a, {});
}

array unknown(const array& a) {
  return array({}, a.dtype(), std::make_shared<NotAPrimitive>(), {a});
}

} // namespace mlx::core
"""

BINDINGS = r"""void init_ops(nb::module_& m) {
  m.def(
      "sum_of_diagonal",
      [](const mx::array& a, mx::StreamOrDevice s) {
        return mx::trace(mx::astype(a, mx::float32), s);
      },
      "a"_a,
      R"pbdoc(
        A binding whose Python name is not the C++ one; ) and { in its docs.
      )pbdoc");
}
"""

COMPILE = """namespace mlx::core {
namespace detail {

void compile_simplify(std::vector<array>& tape) {
  tape.clear();
}

} // namespace detail
} // namespace mlx::core
"""

FILES = {
    "mlx/primitives.h": HEADER,
    "mlx/primitives.cpp": PRIMITIVES,
    "mlx/ops.cpp": OPS,
    "python/src/ops.cpp": BINDINGS,
    "mlx/compile.cpp": COMPILE,
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
        check=True, capture_output=True,
    )  # fmt: skip


def line(path: str, needle: str) -> str:
    """``path:line`` of the first line of ``FILES[path]`` that holds ``needle``."""
    lines = FILES[path].splitlines()
    return f"{path}:{next(i for i, text in enumerate(lines, 1) if needle in text)}"


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """FILES, committed and tagged v9.9.9, then ops.cpp changed in the work tree only."""
    repo = tmp_path_factory.mktemp("mlx")
    git(repo, "init", "-q")
    for path, text in FILES.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Start")
    git(repo, "tag", "v9.9.9")
    (repo / "mlx" / "ops.cpp").write_text("// later\n" + OPS, encoding="utf-8")  # not at the tag
    return repo


@pytest.fixture(scope="module")
def index(repo: Path) -> dict[str, Any]:
    return mlx_sources.build(repo, "v9.9.9")


def test_operations_name_the_primitives_they_build_nearest_first(index: dict[str, Any]) -> None:
    functions = index["functions"]
    assert functions["addmm"] == [["AddMM"], ["Reshape"]]
    assert functions["sum"] == [["Sum"]]
    assert functions["trace"] == [[], ["Sum"]]  # through the function it calls
    assert functions["outer"] == [[], [], ["Sum"]]  # and one call further
    assert functions["sum_of_diagonal"] == [[], ["Sum"]]  # a binding: the C++ function it calls
    assert "unknown" not in functions  # builds nothing derived from Primitive
    assert "helper" not in functions


def test_primitives_say_where_each_transform_is_defined(index: dict[str, Any]) -> None:
    addmm = index["primitives"]["AddMM"]
    assert addmm == {
        "declared": line("mlx/primitives.h", "class AddMM"),
        "bases": ["UnaryPrimitive"],
        "jvp": line("mlx/primitives.cpp", "AddMM::jvp("),
        "vjp": line("mlx/primitives.cpp", "AddMM::vjp("),
        "output_shapes": line("mlx/primitives.h", "  DEFINE_INPUT_OUTPUT_SHAPE()"),
    }  # DEFINE_GRADS() only declares: jvp and vjp are where the .cpp defines them
    assert index["primitives"]["Sum"]["vjp"] == line("mlx/primitives.h", "vjp(const std::vector<array>& p) override {")  # fmt: skip
    base = index["primitives"]["Primitive"]
    assert base["jvp"] == line("mlx/primitives.cpp", "Primitive::jvp(")
    assert base["is_equivalent"] == line("mlx/primitives.h", "virtual bool is_equivalent")
    assert "NotAPrimitive" not in index["primitives"]


def test_the_index_records_its_ref_and_the_compile_sources(index: dict[str, Any]) -> None:
    assert index["ref"] == "v9.9.9" and len(index["commit"]) == 40
    simplify = int(line("mlx/compile.cpp", "compile_simplify(").split(":")[1])
    assert index["compile"] == {"mlx/compile.cpp": {"detail::compile_simplify": simplify}}


def test_the_written_index_is_the_same_bytes_every_time(repo: Path, tmp_path: Path) -> None:
    outputs = [tmp_path / "a.json", tmp_path / "b" / "b.json"]
    for output in outputs:
        args = ["--mlx-repo", str(repo), "--ref", "v9.9.9", "-o", str(output)]
        assert mlx_sources.main(args) == 0
    text = outputs[0].read_text(encoding="utf-8")
    assert text == outputs[1].read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), indent=1, sort_keys=True) + "\n"
    assert "return" not in text  # no source text


def test_definitions_skip_comments_strings_and_default_arguments() -> None:
    text = blank(
        'namespace mlx::core::fft {\nMLX_API array f(int n, Shape s = {});\n'
        'inline array g(const char* x = "{", int y = 1\'000) {\n  return f(1);\n}\n'
        "struct Options {\n  int n;\n};\n"
        "const std::vector<std::function<int(int)>> steps = {nullptr};\n}\n"
    )  # fmt: skip
    found = [(d.kind, d.name, d.line) for d in definitions(text)]
    assert found == [("function", "fft::g", 3), ("class", "fft::Options", 6)]  # no `int`
