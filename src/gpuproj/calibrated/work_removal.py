"""The work remover (Stevens & Kloeckner, Sec. 7.1.1, Algorithm 3).

``remove_work(program, remove_vars=...)`` strips arithmetic and local-memory work from a loopy
kernel and keeps the chosen global accesses *with their loop structure*, so the result is a
measurement kernel for exactly those access patterns:

1. insert ``tgt_read = 0``;
2. for every statement S, for every global load g in S not to be removed, insert
   ``tgt_read = tgt_read + g`` in S's loops (keeping S's dependencies, plus one on the init);
3. if S stores to a global array not to be removed, insert ``<that store> = tgt_read``;
4. remove S;
5. if ``tgt_read`` is never stored, store it to a new array ``tgt_read_dest`` indexed like the
   first removed global store (one entry per work-item: outside its sequential loops, their
   inames taken at their first value), so the compiler cannot drop the loads.

The type of ``tgt_read`` is that of the first kept load. Dependencies on removed statements are
redirected to their replacements; the ``tgt_read`` updates are chained in a topological order of
the original statements, which keeps the data flow alive without reordering loops.
"""

from __future__ import annotations

from ..errors import InputError

TGT, DEST = "tgt_read", "tgt_read_dest"


def _global_names(knl, lp):
    names = {a.name for a in knl.args if isinstance(a, lp.ArrayArg)}
    for name, t in knl.temporary_variables.items():
        if t.address_space == lp.AddressSpace.GLOBAL:
            names.add(name)
    return names


def _global_loads(expr, gnames):
    """Global-array subscripts in ``expr``, outermost first, without duplicates."""
    from pymbolic.mapper import WalkMapper
    from pymbolic.primitives import Subscript, Variable

    found = []

    class Collect(WalkMapper):
        def post_visit(self, e, *args, **kw):
            if isinstance(e, Subscript) and isinstance(e.aggregate, Variable) \
                    and e.aggregate.name in gnames and e not in found:
                found.append(e)

        def map_reduction(self, e, *a, **kw):
            self.rec(e.expr, *a, **kw)

        def map_tagged_variable(self, e, *a, **kw):
            pass

        def map_resolved_function(self, e, *a, **kw):
            pass

    if expr is not None:
        Collect()(expr)
    return found


def _topo(insns):
    order, seen, by_id = [], set(), {i.id: i for i in insns}

    def visit(i):
        if i.id in seen:
            return
        seen.add(i.id)
        for d in sorted(i.depends_on):
            if d in by_id:
                visit(by_id[d])
        order.append(i)

    for i in insns:
        visit(i)
    return order


def remove_work(program, remove_vars=(), keep_vars=None):
    """Return a copy of ``program`` with on-chip work removed (Algorithm 3).

    ``remove_vars``: global arrays whose accesses are removed as well; or give ``keep_vars``,
    the global arrays whose accesses stay (all others are removed).
    """
    from .counting import _lp

    lp = _lp()
    from loopy.kernel.instruction import Assignment, MultiAssignmentBase
    from pymbolic.primitives import Subscript, Variable

    prog = lp.infer_unknown_types(program, expect_completion=True)
    prog = lp.realize_reduction(prog)
    knl = prog.default_entrypoint
    gnames = _global_names(knl, lp)
    if keep_vars is not None:
        unknown = set(keep_vars) - gnames
        if unknown:
            raise InputError(f"keep_vars {sorted(unknown)} are not global arrays of "
                             f"{knl.name} ({sorted(gnames)})", field="keep")
        removed = gnames - set(keep_vars)
    else:
        unknown = set(remove_vars) - gnames
        if unknown:
            raise InputError(f"remove_vars {sorted(unknown)} are not global arrays of "
                             f"{knl.name} ({sorted(gnames)})", field="remove_vars")
        removed = set(remove_vars)

    tgt = Variable(TGT)
    init_id = "tgt_read_init"
    new_insns, replaced = [], {}
    last_writer = init_id
    dtype = None
    store_template = None  # (assignee subscript, within_inames) of the first removed store
    for insn in _topo(list(knl.instructions)):
        if not isinstance(insn, MultiAssignmentBase):
            # barriers, no-ops: keep only if nothing else needs them (they go with the work)
            replaced[insn.id] = []
            continue
        reps = []
        deps = set(insn.depends_on)
        loads = [g for g in _global_loads(insn.expression, gnames)
                 if g.aggregate.name not in removed]
        for a in insn.assignees:
            loads += [g for g in _global_loads(a.index if isinstance(a, Subscript) else None,
                                               gnames) if g.aggregate.name not in removed]
        for k, g in enumerate(loads):
            if dtype is None:
                dtype = knl.arg_dict[g.aggregate.name].dtype if g.aggregate.name in \
                    knl.arg_dict else knl.temporary_variables[g.aggregate.name].dtype
            nid = f"{insn.id}_tgt{k}"
            new_insns.append(Assignment(
                tgt, tgt + g, id=nid, within_inames=insn.within_inames,
                depends_on=frozenset(deps | {init_id, last_writer}),
                predicates=insn.predicates))
            reps.append(nid)
            last_writer = nid
        for a in insn.assignees:
            name = a.aggregate.name if isinstance(a, Subscript) else getattr(a, "name", None)
            if name not in gnames:
                continue
            if name in removed:
                if store_template is None:
                    store_template = (a, insn.within_inames, insn.predicates)
                continue
            nid = f"{insn.id}_store"
            new_insns.append(Assignment(
                a, tgt, id=nid, within_inames=insn.within_inames,
                depends_on=frozenset(deps | {init_id, last_writer}),
                predicates=insn.predicates))
            reps.append(nid)
            last_writer = nid
        replaced[insn.id] = reps

    if dtype is None:
        raise InputError(f"remove_work on {knl.name}: no global load is left to measure",
                         field="keep")

    def resolve(ids, seen=()):
        out = set()
        for d in ids:
            if d in replaced:
                if replaced[d]:
                    out.update(replaced[d])
                elif d not in seen:
                    orig = knl.id_to_insn[d]
                    out.update(resolve(orig.depends_on, seen + (d,)))
            else:
                out.add(d)
        return out

    # The init runs once per work-item, in the hardware-parallel inames of the first update
    # (loopy wants every instruction to use all hardware axes).
    from loopy.kernel.data import GroupInameTag, LocalInameTag

    def parallel(iname):  # a hardware axis (group or local), not a sequential loop
        return bool(knl.iname_tags_of_type(iname, (GroupInameTag, LocalInameTag)))

    first = new_insns[0].within_inames if new_insns else frozenset()
    hw = frozenset(filter(parallel, first))
    insns = [Assignment(tgt, 0, id=init_id, within_inames=hw)]
    for i in new_insns:
        own = {init_id} | {d for d in i.depends_on if d.startswith(("tgt_read", i.id))}
        insns.append(i.copy(depends_on=frozenset(resolve(i.depends_on - own) | (
            i.depends_on & own)) - {i.id}))

    stored = any(i.id.endswith("_store") for i in insns)
    new_args = [a for a in knl.args if a.name not in removed]
    if not stored:
        if store_template is None:
            raise InputError(f"remove_work on {knl.name}: the kernel stores to no global "
                             "array, so there is no index for tgt_read_dest", field="keep")
        assignee, inames, preds = store_template
        src = knl.arg_dict[assignee.aggregate.name]
        # one entry per work-item, stored once after the loops (Algorithm 3): the store's
        # sequential loops are left, their inames in the index taken at their first value;
        # inside them, the removed store gave one tgt_read_dest store per iteration
        seq = {i for i in inames if not parallel(i)}
        first_values = {i: lp.symbolic.pw_aff_to_expr(
            knl.get_iname_bounds(i).lower_bound_pw_aff) for i in seq}
        index = lp.symbolic.SubstitutionMapper(
            lambda v: first_values.get(v.name))(assignee.index)
        insns.append(Assignment(Subscript(Variable(DEST), index), tgt,
                                id="tgt_read_dest_store", within_inames=inames - seq,
                                depends_on=frozenset({last_writer}),
                                predicates=frozenset(
                                    p for p in preds
                                    if not lp.symbolic.get_dependencies(p) & seq)))
        new_args.append(src.copy(name=DEST, dtype=dtype))

    temps = {n: t for n, t in knl.temporary_variables.items()
             if t.address_space == lp.AddressSpace.GLOBAL and n not in removed}
    temps[TGT] = lp.TemporaryVariable(TGT, dtype, shape=(),
                                      address_space=lp.AddressSpace.PRIVATE)
    # Type inference and reduction realization left the kernel with its calls resolved for
    # the target it was generated for, after which loopy refuses another target (CUDA timing
    # retargets every measurement kernel). What is left holds no calls and no reductions, so
    # it starts over as a new program in loopy's initial state, like every generated kernel.
    from loopy.kernel import KernelState

    knl = knl.copy(instructions=insns, temporary_variables=temps, args=new_args,
                   state=KernelState.INITIAL)
    return lp.make_program(knl).with_entrypoints(knl.name)
