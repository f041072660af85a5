"""Kernel creation functions: loopy kernels for calibration and for the paper's case studies.

Each function returns a :class:`MeasurementKernel`: the loopy program (size parameters stay
symbolic ``ValueArg`` s, so counts are piecewise quasi-polynomials), the concrete sizes to run
it at, and memory-access tags. What each kernel does, per work-item (``L0 x L1`` work-groups):

================  ==================================================================================
flops_pattern     32 private variables, ``m`` iterations of 32 updates ``v[k] = v[k-5] OP v[k-6]``
                  (madd: ``v[k-5]*v[k-6] + v[k-7]``): no update reads the four previous
                  statements' results (SHOC MaxFlops ordering); loop unrolled; then the 32 values
                  are summed and stored (1 store, 31 adds)
global_access     ``res[p] = in0[p] + ... + in{k-1}[p]`` with p row-major (lid(0) stride 1) or
                  transposed (lid(0) stride = row length); AFR 1
local_access      1 global load into local memory, ``m`` local load+store moves
                  ``loc[l1, l0+shift] = loc[l1, l0]`` (shift = 0 at run time, unknown to the
                  compiler, so no move can be removed), 1 global store; also the overlap kernel
barriers          ``m`` local barriers, then 1 global store
empty             no instructions; launches ``ng0 x ng1`` work-groups
matmul_sq         c = a b, 16x16 tiles, with or without prefetching a and b tiles (paper Sec. 2.1)
dg_diff           res[m,k,i] = sum_j diff_mat[m,i,j] u[k,j]: the paper's four variants (Sec. 8.4)
finite_diff       5-point stencil on (n+2)^2 points, tiles lsize x lsize fetched to local memory
transpose         b = a^T, with or without a local-memory tile
================  ==================================================================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class MeasurementKernel:
    """One runnable kernel: loopy program, sizes (values of its ``ValueArg`` s), tags.

    ``access_tags`` maps a memory access tag (``aLD``) to the (variable, direction) pairs it
    names; loopy keeps ``a$aLD`` tags only on accesses no transformation rewrote, so the tags
    are recorded here as well and features match either.
    """

    name: str
    program: object
    sizes: dict
    variant: dict = field(default_factory=dict)
    access_tags: dict = field(default_factory=dict)

    def label(self) -> str:
        return self.name + "".join(f" {k}={v}" for k, v in sorted(self.sizes.items()))


def _lp():
    from .counting import _lp as get

    return get()


def _grid_domain(L0, L1):
    return f"{{[g0,g1,l0,l1]: 0<=g0<ng0 and 0<=g1<ng1 and 0<=l0<{L0} and 0<=l1<{L1}}}"


def _tag_grid(knl):
    return _lp().tag_inames(knl, "g0:g.0,g1:g.1,l0:l.0,l1:l.1")


def _finish(knl):
    lp = _lp()
    knl = lp.set_options(knl, write_code=False)
    return knl


# -- microbenchmarks -------------------------------------------------------------------------

NVARS = 32


def _flop_statement(op, k):
    a, b, c = (k - 5) % NVARS, (k - 6) % NVARS, (k - 7) % NVARS
    if op == "add":
        return f"v{a} + v{b}"
    if op == "mul":
        return f"v{a} * v{b}"
    if op == "madd":
        return f"v{a} * v{b} + v{c}"
    if op == "div":
        return f"v{a} / v{b}"
    raise ValueError(op)


def flops_pattern(op="madd", dtype="float32", lsize=(16, 16), ng=(64, 4), m=64, unroll=4):
    """SHOC-style arithmetic throughput kernel (see module docstring). Sizes: ng0, ng1, m."""
    lp = _lp()
    L0, L1 = lsize
    if m % unroll:
        raise ValueError(f"m={m} must be a multiple of unroll={unroll}")
    lines = ["for g0, g1, l0, l1"]
    # One load; distinct multiples so the compiler cannot merge the 32 chains.
    lines.append(f"  v0 = inp[{L1}*g1 + l1, {L0}*g0 + l0] {{id=init0}}")
    for k in range(1, NVARS):
        lines.append(f"  v{k} = v0 * {1.0 + k / 64.0!r} {{id=init{k}, dep=init0}}")
    init = ":".join(f"init{k}" for k in range(NVARS))
    lines.append("  for it")
    for k in range(NVARS):
        dep = init if k == 0 else f"upd{k - 1}"
        lines.append(f"    v{k} = {_flop_statement(op, k)} {{id=upd{k}, dep={dep}}}")
    lines.append("  end")
    total = " + ".join(f"v{k}" for k in range(NVARS))
    lines.append(f"  out[{L1}*g1 + l1, {L0}*g0 + l0] = {total} {{dep=upd{NVARS - 1}}}")
    lines.append("end")
    dt = np.dtype(dtype)
    knl = lp.make_kernel(
        [_grid_domain(L0, L1), "{[it]: 0<=it<m}"], "\n".join(lines),
        [lp.GlobalArg("inp,out", dt, shape=(f"{L1}*ng1", f"{L0}*ng0")),
         lp.ValueArg("ng0,ng1,m", np.int32)]
        + [lp.TemporaryVariable(f"v{k}", dt, shape=()) for k in range(NVARS)],
        name=f"flops_{op}", lang_version=(2018, 2))
    knl = _tag_grid(knl)
    knl = lp.split_iname(knl, "it", unroll, inner_tag="unr")
    knl = lp.assume(knl, f"m >= {unroll} and m mod {unroll} = 0")
    return MeasurementKernel(f"flops_{op}_{dtype}", _finish(knl),
                             {"ng0": ng[0], "ng1": ng[1], "m": m})


def global_access(dtype="float32", lsize=(16, 16), ng=(64, 64), narrays=2, transposed=False):
    """``res[p] = sum_k in_k[p]``; p row-major or transposed. Sizes: ng0, ng1."""
    lp = _lp()
    L0, L1 = lsize
    if transposed:
        idx, shape = f"[{L0}*g0 + l0, {L1}*g1 + l1]", (f"{L0}*ng0", f"{L1}*ng1")
    else:
        idx, shape = f"[{L1}*g1 + l1, {L0}*g0 + l0]", (f"{L1}*ng1", f"{L0}*ng0")
    names = [f"in{k}" for k in range(narrays)]
    expr = " + ".join(f"{a}{idx}" for a in names)
    dt = np.dtype(dtype)
    knl = lp.make_kernel(
        _grid_domain(L0, L1), f"res{idx} = {expr}",
        [lp.GlobalArg(",".join(names + ["res"]), dt, shape=shape),
         lp.ValueArg("ng0,ng1", np.int32)],
        name="gmem_access", lang_version=(2018, 2))
    knl = _tag_grid(knl)
    return MeasurementKernel(f"gmem_{dtype}_{narrays}arr_{'T' if transposed else 'N'}",
                             _finish(knl), {"ng0": ng[0], "ng1": ng[1]})


def local_access(dtype="float32", lsize=(16, 16), ng=(16, 16), m=256):
    """1 global load, ``m`` local moves, 1 global store per work-item. Sizes: ng0, ng1, m,
    shift (always 0; a run-time value so the compiler must perform every move)."""
    lp = _lp()
    L0, L1 = lsize
    dt = np.dtype(dtype)
    knl = lp.make_kernel(
        # shift is bounded in the domain so loopy can reason about the local index range.
        [_grid_domain(L0, L1)[:-1] + f" and 0<=shift<{L0}}}", "{[it]: 0<=it<m}"],
        f"""
        for g0, g1, l0, l1
          loc[l1, l0] = inp[{L1}*g1 + l1, {L0}*g0 + l0] {{id=init}}
          for it
            loc[l1, l0 + shift] = loc[l1, l0] {{id=mv, dep=init}}
          end
          out[{L1}*g1 + l1, {L0}*g0 + l0] = loc[l1, l0] {{dep=mv}}
        end
        """,
        [lp.GlobalArg("inp,out", dt, shape=(f"{L1}*ng1", f"{L0}*ng0")),
         lp.ValueArg("ng0,ng1,m,shift", np.int32),
         lp.TemporaryVariable("loc", dt, shape=(L1, 2 * L0),
                              address_space=lp.AddressSpace.LOCAL)],
        name="lmem_access", lang_version=(2018, 2))
    knl = _tag_grid(knl)
    knl = lp.set_options(knl, enforce_array_accesses_within_bounds="no_check")
    return MeasurementKernel(f"lmem_{dtype}", _finish(knl),
                             {"ng0": ng[0], "ng1": ng[1], "m": m, "shift": 0})


def barriers(lsize=(16, 16), ng=(16, 16), m=256):
    """``m`` local barriers per work-item, then one store. Sizes: ng0, ng1, m."""
    lp = _lp()
    L0, L1 = lsize
    knl = lp.make_kernel(
        [_grid_domain(L0, L1), "{[it]: 0<=it<m}"],
        f"""
        for g0, g1, l0, l1
          for it
            ... lbarrier {{id=bar}}
          end
          out[{L1}*g1 + l1, {L0}*g0 + l0] = 1.0f {{dep=bar}}
        end
        """,
        [lp.GlobalArg("out", np.float32, shape=(f"{L1}*ng1", f"{L0}*ng0")),
         lp.ValueArg("ng0,ng1,m", np.int32)],
        name="barriers", lang_version=(2018, 2))
    knl = _tag_grid(knl)
    return MeasurementKernel("barriers", _finish(knl), {"ng0": ng[0], "ng1": ng[1], "m": m})


def empty(lsize=(16, 16), ng=(16, 1)):
    """No work; ``ng0 x ng1`` work-groups. Sizes: ng0, ng1."""
    lp = _lp()
    L0, L1 = lsize
    knl = lp.make_kernel(_grid_domain(L0, L1), "for g0, g1, l0, l1\n  ... nop\nend",
                         [lp.ValueArg("ng0,ng1", np.int32)], name="empty",
                         lang_version=(2018, 2))
    knl = _tag_grid(knl)
    return MeasurementKernel("empty", _finish(knl), {"ng0": ng[0], "ng1": ng[1]})


# -- application kernels (the paper's case studies) ------------------------------------------


def matmul_sq(n=256, dtype="float32", lsize=(16, 16), prefetch=True):
    """Square c = a b (paper Sec. 2.1); a and b loads tagged aLD, bLD, the c store cST.
    Sizes: n (a multiple of the tile width)."""
    lp = _lp()
    L0, L1 = lsize
    if L0 != L1:
        raise ValueError("matmul_sq needs square work-groups")
    dt = np.dtype(dtype)
    knl = lp.make_kernel("{[i,j,k]: 0<=i,j,k<n}", "c[i,j] = sum(k, a$aLD[i,k]*b$bLD[k,j])",
                         [lp.GlobalArg("a,b,c", dt, shape=("n", "n")),
                          lp.ValueArg("n", np.int32)],
                         name="matmul_sq", lang_version=(2018, 2))
    knl = lp.split_iname(knl, "i", L1, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", L0, outer_tag="g.0", inner_tag="l.0")
    knl = lp.assume(knl, f"n >= {L0} and n mod {L0} = 0")
    if prefetch:
        knl = lp.split_iname(knl, "k", L0)
        outer = "i_outer,j_outer,k_outer"
        knl = lp.add_prefetch(knl, "a", ["i_inner", "k_inner"], fetch_outer_inames=outer,
                              default_tag="l.auto")
        knl = lp.add_prefetch(knl, "b", ["k_inner", "j_inner"], fetch_outer_inames=outer,
                              default_tag="l.auto")
    tags = {"aLD": [("a", "load")], "bLD": [("b", "load")], "cST": [("c", "store")]}
    return MeasurementKernel(f"matmul_sq_{'pf' if prefetch else 'nopf'}", _finish(knl),
                             {"n": n}, access_tags=tags)


DG_VARIANTS = ("plain", "pf_u", "pf_diff_mat", "pf_diff_mat_T")


def dg_diff(variant="plain", nelements=1024, nunit_nodes=64, nmatrices=3, lsize=(16, 16),
            dtype="float32"):
    """DG element-wise differentiation res[m,k,i] = sum_j diff_mat[m,i,j] u[k,j] in the
    paper's four variants (Sec. 8.4): no prefetch, prefetch u, prefetch diff_mat, prefetch
    diff_mat with element data transposed. Tags <variant>_dLD (diff_mat), _uLD, _rST (res).
    Sizes: nelements (multiple of lsize[0]); nunit_nodes, nmatrices are fixed."""
    lp = _lp()
    if variant not in DG_VARIANTS:
        raise ValueError(f"variant must be one of {DG_VARIANTS}")
    L0, L1 = lsize
    dt = np.dtype(dtype)
    knl = lp.make_kernel(
        "{[m,k,i,j]: 0<=m<nmatrices and 0<=k<nelements and 0<=i,j<nunit_nodes}",
        "res[m,k,i] = sum(j, diff_mat[m,i,j] * u[k,j])",
        [lp.GlobalArg("diff_mat", dt, shape=("nmatrices", "nunit_nodes", "nunit_nodes")),
         lp.GlobalArg("u", dt, shape=("nelements", "nunit_nodes")),
         lp.GlobalArg("res", dt, shape=("nmatrices", "nelements", "nunit_nodes")),
         lp.ValueArg("nelements", np.int32)],
        name=f"dg_diff_{variant}", lang_version=(2018, 2))
    knl = lp.fix_parameters(knl, nunit_nodes=nunit_nodes, nmatrices=nmatrices)
    knl = lp.assume(knl, f"nelements >= {L0} and nelements mod {L0} = 0")
    knl = lp.split_iname(knl, "i", L1, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "k", L0, outer_tag="g.0", inner_tag="l.0")
    if variant == "pf_u":
        knl = lp.split_iname(knl, "j", L1)
        knl = lp.add_prefetch(knl, "u", ["k_inner", "j_inner"],
                              fetch_outer_inames="i_outer,k_outer,j_outer",
                              default_tag="l.auto")
        knl = lp.realize_reduction(knl)
        knl = lp.privatize_temporaries_with_inames(knl, "m")
        knl = lp.duplicate_inames(knl, "m", "id:*init*")
        knl = lp.duplicate_inames(knl, "m", "writes:res")
        knl = lp.prioritize_loops(knl, "j_outer,j_inner,m")
    elif variant in ("pf_diff_mat", "pf_diff_mat_T"):
        knl = lp.split_iname(knl, "j", L0)
        knl = lp.add_prefetch(knl, "diff_mat", ["j_inner", "i_inner"],
                              fetch_outer_inames="m,i_outer,k_outer,j_outer",
                              default_tag="l.auto")
        knl = lp.prioritize_loops(knl, "m,j_outer,j_inner")
        if variant == "pf_diff_mat_T":
            knl = lp.tag_array_axes(knl, "u", "N0,N1")
            knl = lp.tag_array_axes(knl, "res", "N2,N0,N1")
    # Tags carry the variant: each variant's accesses are distinct features (paper Fig. 6b).
    tags = {f"{variant}_dLD": [("diff_mat", "load")], f"{variant}_uLD": [("u", "load")],
            f"{variant}_rST": [("res", "store")]}
    return MeasurementKernel(f"dg_diff_{variant}", _finish(knl), {"nelements": nelements},
                             access_tags=tags)


def finite_diff(n=254, lsize=16, dtype="float32"):
    """2-D five-point stencil (paper Sec. 8.5) on u of shape (n+2, n+2); lsize x lsize tiles
    of u fetched to local memory, (lsize-2)^2 results per work-group. Tags fd<lsize>_uLD, _rST.
    Sizes: n (a multiple of lsize - 2)."""
    lp = _lp()
    dt = np.dtype(dtype)
    knl = lp.make_kernel(
        "{[i,j]: 0<=i,j<n}",
        "res[i,j] = u[i, j+1] + u[i+1, j] - 4*u[i+1, j+1] + u[i+1, j+2] + u[i+2, j+1]",
        [lp.GlobalArg("u", dt, shape=("n+2", "n+2")),
         lp.GlobalArg("res", dt, shape=("n", "n")), lp.ValueArg("n", np.int32)],
        name=f"finite_diff_{lsize}", lang_version=(2018, 2))
    t = lsize - 2
    knl = lp.assume(knl, f"n >= {t} and n mod {t} = 0")
    knl = lp.split_iname(knl, "i", t, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", t, outer_tag="g.0", inner_tag="l.0")
    knl = lp.add_prefetch(knl, "u", ["i_inner", "j_inner"], fetch_bounding_box=True,
                          fetch_outer_inames="i_outer,j_outer", default_tag=None)
    knl = lp.tag_inames(knl, "u_dim_0:l.1, u_dim_1:l.0")
    tags = {f"fd{lsize}_uLD": [("u", "load")], f"fd{lsize}_rST": [("res", "store")]}
    return MeasurementKernel(f"finite_diff_{lsize}x{lsize}", _finish(knl), {"n": n},
                             access_tags=tags)


def transpose(n=256, dtype="float32", lsize=(16, 16), prefetch=True):
    """b = a^T with 16x16 work-groups, optionally through a local-memory tile. Sizes: n."""
    lp = _lp()
    L0, L1 = lsize
    dt = np.dtype(dtype)
    knl = lp.make_kernel("{[i,j]: 0<=i,j<n}", "b[i,j] = a$aLD[j,i]",
                         [lp.GlobalArg("a,b", dt, shape=("n", "n")),
                          lp.ValueArg("n", np.int32)],
                         name="transpose", lang_version=(2018, 2))
    knl = lp.assume(knl, f"n >= {L0} and n mod {L0} = 0 and n mod {L1} = 0")
    knl = lp.split_iname(knl, "i", L1, outer_tag="g.1", inner_tag="l.1")
    knl = lp.split_iname(knl, "j", L0, outer_tag="g.0", inner_tag="l.0")
    if prefetch:
        knl = lp.add_prefetch(knl, "a", ["i_inner", "j_inner"],
                              fetch_outer_inames="i_outer,j_outer", default_tag="l.auto")
    tags = {"aLD": [("a", "load")], "bST": [("b", "store")]}
    return MeasurementKernel(f"transpose_{'pf' if prefetch else 'nopf'}", _finish(knl),
                             {"n": n}, access_tags=tags)
