"""The reproducers of findings in transforms: vmap, views, special values, shapeless, custom_function."""

from __future__ import annotations

from mgradcheck.sweep.script_derivatives import SPECIAL, Script

VIEWS = {
    "transposed": "mx.swapaxes(like(x, np.ascontiguousarray(np.swapaxes(as_np(x), -1, -2))), -1, -2)",
    "reversed": "like(x, np.ascontiguousarray(as_np(x)[::-1]))[::-1]",
    "stepped": "like(x, np.repeat(as_np(x), 2, axis=0))[::2]",
    "broadcast": "mx.broadcast_to(x[:1], x.shape)",
}


class TransformScript(Script):
    def _names(self, indices: list[int]) -> str:
        return ", ".join(self.names[i] for i in indices)

    def _inner(self, traced: str) -> str:
        """``f`` as a function of ``traced``, the other arguments as they are."""
        return f"lambda {traced}: listed(f({self.all_args}))"

    # -- vmap -----------------------------------------------------------------
    def _vmap(self) -> str:
        r = self.repro
        path = str(r.get("path", "vmap"))
        axes = tuple(r.get("in_axes", [0] * len(self.names)))
        out = int(r.get("out_axes", 0))
        traced = [self.names.index(n) for n in self.traced]
        n, tr = len(self.names), self._names(traced)
        lines = [
            f"in_axes, out_axes = {axes!r}, {out}",
            f"slices = {r.get('slices')!r}  # per argument, the values of each slice",
            f"args = [{self.all_args}]",
            "each = [[like(x, s[k]) if a is not None else x for x, s, a in zip(args, slices, in_axes)] for k in range(len(slices[0]))]",
            "batched = [mx.stack([e[i] for e in each], axis=a) if a is not None else x for i, (x, a) in enumerate(zip(args, in_axes))]",
            "fa = lambda *xs: listed(f(*xs))",
        ]  # fmt: skip
        if path == "vmap":
            lines += [
                "expected = [np.stack([as_np(fa(*e)[k]) for e in each], axis=out_axes) for k in range(len(fa(*each[0])))]  # a loop",
                "observed = must_not_raise('mx.vmap', lambda: mx.vmap(fa, in_axes, out_axes)(*batched))",
            ]  # fmt: skip
            return "\n".join(
                [*lines, self.check_line(f"mx.vmap({axes}, {out}) vs a loop over slices")]
            )
        lines += [
            f"traced = {traced!r}",
            "def merged(xs, tr):  # the arguments with the traced ones replaced",
            "    xs = list(xs)",
            "    for i, x in zip(traced, tr):",
            "        xs[i] = x",
            "    return xs",
            "floats = lambda outs: [o for o in outs if o.dtype in (mx.float16, mx.bfloat16, mx.float32, mx.float64)]",
        ]  # fmt: skip
        if "jvp" in path:
            lines += [
                "tangents = [[like(e[i], rng.standard_normal(e[i].shape)) for i in traced] for e in each]",
                "tangents = [t if in_axes[i] is not None else tangents[0][j] for j, (i, t) in enumerate(zip(traced, zip(*tangents)))]",
                "per_slice = [[t[k] if isinstance(t, tuple) else t for t in tangents] for k in range(len(each))]",
                "batched_t = [mx.stack(list(t), axis=in_axes[i]) if isinstance(t, tuple) else t for i, t in zip(traced, tangents)]",
                "loop = [floats(mx.jvp(lambda *tr: fa(*merged(e, tr)), [e[i] for i in traced], t)[1]) for e, t in zip(each, per_slice)]",
                "expected = [np.stack([as_np(l[k]) for l in loop], axis=out_axes) for k in range(len(loop[0]))]  # a loop of jvp",
            ]  # fmt: skip
            if path == "vmap(jvp)":
                lines.append(
                    f"observed = must_not_raise('vmap of jvp', lambda: floats(mx.vmap(lambda *xs: list(mx.jvp(lambda *tr: fa(*merged(xs[:{n}], tr)), "
                    f"[xs[i] for i in traced], list(xs[{n}:]))[1]), in_axes + tuple(in_axes[i] for i in traced), out_axes)(*batched, *batched_t)))"
                )  # fmt: skip
            else:
                lines.append(
                    "observed = must_not_raise('jvp of vmap', lambda: floats(mx.jvp(lambda *tr: listed(mx.vmap(fa, in_axes, out_axes)(*merged(batched, tr))), "
                    "[batched[i] for i in traced], batched_t)[1]))"
                )  # fmt: skip
            return "\n".join(
                [
                    *lines,
                    self.check_line(
                        f"{path} ({axes}, {out}) with ({tr}) traced vs a loop over slices"
                    ),
                ]
            )
        lines += [
            "outs = fa(*each[0])",
            "cots = [[like(o, rng.standard_normal(o.shape)) if o.dtype in (mx.float16, mx.bfloat16, mx.float32, mx.float64) else mx.zeros_like(o) for o in outs] for _ in each]",
            "batched_c = [mx.stack([c[k] for c in cots], axis=out_axes) for k in range(len(outs))]",
            "loop = [mx.vjp(lambda *tr: fa(*merged(e, tr)), [e[i] for i in traced], c)[1] for e, c in zip(each, cots)]",
        ]  # fmt: skip
        if path == "vmap(vjp)":
            lines += [
                "expected = [np.stack([as_np(l[j]) for l in loop], axis=out_axes) for j in range(len(traced))]  # a loop of vjp",
                f"observed = must_not_raise('vmap of vjp', lambda: mx.vmap(lambda *xs: list(mx.vjp(lambda *tr: fa(*merged(xs[:{n}], tr)), "
                f"[xs[i] for i in traced], list(xs[{n}:]))[1]), in_axes + (out_axes,) * len(outs), out_axes)(*batched, *batched_c))",
            ]  # fmt: skip
        else:
            lines += [
                "expected = [np.stack([as_np(l[j]) for l in loop], axis=in_axes[i]) if in_axes[i] is not None else sum(as_np(l[j]) for l in loop)"
                " for j, i in enumerate(traced)]  # a loop of vjp (summed where not mapped)",
                "observed = must_not_raise('vjp of vmap', lambda: mx.vjp(lambda *tr: listed(mx.vmap(fa, in_axes, out_axes)(*merged(batched, tr))), "
                "[batched[i] for i in traced], batched_c)[1])",
            ]  # fmt: skip
        return "\n".join(
            [
                *lines,
                self.check_line(f"{path} ({axes}, {out}) with ({tr}) traced vs a loop over slices"),
            ]
        )

    # -- compile on views -----------------------------------------------------
    def _views(self) -> str:
        r = self.repro
        layout = str(r.get("layout", "reversed"))
        viewed = [int(i) for i in r.get("viewed", [])]
        compiled = bool(r.get("compiled"))
        lines = [f"def view(x):  # {layout}", f"    return {VIEWS[layout]}"]
        if (
            layout == "broadcast"
        ):  # a broadcast holds other values: the contiguous copy holds them too
            lines += [f"{n} = like({n}, as_np(view({n})))" for n in self._names(viewed).split(", ")]
        lines += [
            f"contiguous = [{self.all_args}]",
            f"views = [view(x) if i in {viewed!r} else x for i, x in enumerate(contiguous)]",
        ]
        if r.get("path") == "vjp":
            lines += [
                self.cotangents(f"listed(f({self.all_args}))"),
                f"def fn({self.all_args}):",
                f"    return listed(mx.vjp({self._inner(self.traced_args)}, [{self.traced_args}], c)[1])",
            ]
        else:
            lines += [f"def fn({self.all_args}):", f"    return listed(f({self.all_args}))"]
        lines.append("expected = fn(*contiguous)  # eager, contiguous")
        if compiled:
            lines += ["cfn = mx.compile(fn)", "cfn(*contiguous)  # traced on contiguous arguments first",
                      "observed = must_not_raise('compiled on views', lambda: cfn(*views))"]  # fmt: skip
        else:
            lines.append("observed = must_not_raise('eager on views', lambda: fn(*views))")
        how = "compiled" if compiled else "eager"
        return "\n".join([*lines, self.check_line(f"{how} {r.get('path')} on {layout} views vs eager on contiguous copies")])  # fmt: skip

    # -- special values -------------------------------------------------------
    def _specials(self) -> str:
        r = self.repro
        arg = str(r.get("argument"))
        special = str(r.get("special"))
        # Every argument but a captured one is passed in, as the check passes it: captured, a
        # size-1 one would be a constant of the kernel too.
        if r.get("constant"):
            shape = tuple(r.get("shape", []))
            others = ", ".join(n for n in self.names if n != arg)
            lines = [
                f"{arg} = like({arg}, np.full({shape!r}, {SPECIAL[special]}))  # captured as a constant"
            ]
        else:
            others = self.all_args
            lines = [
                "def with_specials(v):  # NaN, inf, -inf, -0.0 in turn, every fifth element left as it was",
                "    out = np.array(v, dtype=np.float64)",
                "    flat = out.reshape(-1)",
                "    for j in range(0, flat.size, 5):",
                "        flat[j : j + 4] = [np.nan, np.inf, -np.inf, -0.0][: min(4, flat.size - j)]",
                "    return out",
                f"{arg} = like({arg}, with_specials(as_np({arg})))",
            ]
        traced = ", ".join(n for n in self.traced if n != arg or not r.get("constant"))
        lines += [f"def h({others}):", f"    return listed(f({self.all_args}))"]
        call = others
        if r.get("path") == "vjp":
            lines += [
                f"c = [mx.ones_like(o) if o.dtype in (mx.float16, mx.bfloat16, mx.float32, mx.float64) else mx.zeros_like(o) for o in h({others})]",
                f"def path({others}, *c):",
                f"    return listed(mx.vjp(lambda {traced}: h({others}), [{traced}], list(c))[1])",
            ]  # fmt: skip
            call = f"{others}, *c"
        else:
            lines.append("path = h")
        lines += [
            f"expected = path({call})  # eager",
            f"observed = must_not_raise('mx.compile', lambda: mx.compile(path)({call}))",
        ]
        where = "captured" if r.get("constant") else "as input"
        return "\n".join([*lines, self.check_line(f"compiled vs eager {r.get('path')}, {arg}={special} {where}")])  # fmt: skip

    # -- shapeless ------------------------------------------------------------
    def _shapeless(self) -> str:
        r = self.repro
        values = r.get("values_at") or {}
        vjp = r.get("path") == "vjp"
        lines = []
        if vjp:
            lines += [
                f"def fn({self.all_args}, *c):",
                f"    return listed(mx.vjp({self._inner(self.traced_args)}, [{self.traced_args}], list(c))[1])",
                self.cotangents(f"listed(f({self.all_args}))"),
                "shapeless = mx.compile(fn, shapeless=True)",
                f"shapeless({self.all_args}, *c)  # traced at the first shapes",
            ]  # fmt: skip
        else:
            lines += [
                f"def fn({self.all_args}):",
                f"    return listed(f({self.all_args}))",
                "shapeless = mx.compile(fn, shapeless=True)",
                f"shapeless({self.all_args})  # traced at the first shapes",
            ]
        for shapes in r.get("called_before") or ():  # a replay can depend on the calls before it
            args = ", ".join(
                f"mx.ones({tuple(shapes[n])}, {n}.dtype)" if n in shapes else n for n in self.names
            )
            extra = f", *[mx.ones_like(o) for o in listed(f({args}))]" if vjp else ""
            lines.append(f"shapeless({args}{extra})  # as the sweep called it before, at {shapes}")
        lines += [f"{n} = like({n}, {v!r})  # called at another shape" for n, v in values.items()]
        if vjp:
            lines += [self.cotangents(f"listed(f({self.all_args}))"),
                      f"expected = fn({self.all_args}, *c)  # eager",
                      f"observed = must_not_raise('shapeless compiled', lambda: shapeless({self.all_args}, *c))"]  # fmt: skip
        else:
            lines += [f"expected = fn({self.all_args})  # eager",
                      f"observed = must_not_raise('shapeless compiled', lambda: shapeless({self.all_args}))"]  # fmt: skip
        what = f"mx.compile(shapeless=True) {r.get('path')} traced at {r.get('traced_at')}, called at {r.get('shapes')}"
        return "\n".join([*lines, self.check_line(what)])

    # -- custom_function ------------------------------------------------------
    def _custom(self) -> str:
        r = self.repro
        over = [n for n in self.names if n in (r.get("over") or self.traced)]
        args = ", ".join(over)
        unpack = "listed" if len(over) == 1 else "list"
        lines = [
            f"def g({args}):",
            f"    return listed(f({self.all_args}))",
            "calls = []",
            "@mx.custom_function",
            f"def custom({args}):",
            f"    return g({args})",
            "@custom.vjp",
            "def custom_vjp(primals, cotangents, outputs):  # twice the vjp of g",
            "    calls.append('vjp')",
            f"    grads = [2.0 * x for x in mx.vjp(g, {unpack}(primals), list(cotangents))[1]]",
            f"    return {'grads[0]' if len(over) == 1 else 'tuple(grads)'}",
            "@custom.jvp",
            "def custom_jvp(primals, tangents):  # three times the jvp of g",
            "    calls.append('jvp')",
            f"    xs = {unpack}(primals)",
            f"    ts = [t if t is not None else mx.zeros_like(x) for t, x in zip({unpack}(tangents), xs)]",
            "    return [3.0 * t for t in mx.jvp(g, xs, ts)[1]]",
        ]
        path = str(r.get("path", "custom vjp"))
        traced = self.traced_args
        call = f"lambda {traced}: custom({args})"
        if path == "custom jvp":
            lines += [self.tangents(),
                      f"observed = must_not_raise('jvp through the custom jvp rule', lambda: mx.jvp({call}, [{traced}], t)[1])",
                      "assert 'jvp' in calls, 'mx.jvp did not call the custom jvp rule'",
                      f"expected = [3.0 * e for e in fd_jvp({call}, [{traced}], t)]"]  # fmt: skip
        else:
            lines += [self.cotangents(f"g({args})"),
                      f"observed = must_not_raise('vjp through the custom vjp rule', lambda: mx.vjp({call}, [{traced}], c)[1])",
                      "assert 'vjp' in calls, 'mx.vjp did not call the custom vjp rule'",
                      f"expected = [2.0 * e for e in fd_vjp({call}, [{traced}], c)]"]  # fmt: skip
        return "\n".join(
            [*lines, self.check_line(f"{path} rule's result vs its scaled finite differences")]
        )
