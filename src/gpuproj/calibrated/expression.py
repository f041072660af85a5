"""Model expressions: parse, evaluate (vectorised over kernels) and differentiate symbolically.

A model expression is arithmetic over *parameters* (``p_<name>``), *features* (``f_<name>``, the
paper's feature-name grammar, see :mod:`.features`) and numbers, with ``+ - * / **`` (``^`` is
accepted for ``**``), parentheses and the functions ``tanh exp log sqrt`` plus two helpers that
spell the paper's overlap model (Stevens & Kloeckner, Eqs. 5-6):

* ``step(x, p_edge)``  = ŝ(x) = (tanh(p_edge * x) + 1) / 2
* ``overlap(a, b, p_edge)`` = a * ŝ(a - b) + b * ŝ(b - a), a differentiable max(a, b)

Both are expanded at parse time into ``tanh`` arithmetic, so evaluation and the Jacobian need no
special cases. Parse errors raise :class:`ExpressionError` naming the offending token and its
position with a caret under it.

>>> e = parse("p_a * f_x + p_b")
>>> sorted(e.params()), sorted(e.features())
(['p_a', 'p_b'], ['f_x'])
>>> float(e.evaluate({"p_a": 2.0, "f_x": 3.0, "p_b": 1.0}))
7.0
>>> str(e.diff("p_a"))
'f_x'
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

FUNCTIONS = ("tanh", "exp", "log", "sqrt")
MACROS = {"step": 2, "overlap": 3}
# The bundled models nest 21 deep and expand to 209 nodes. Evaluation, derivatives and printing
# recurse once a level (a sum of 400 terms was a RecursionError), and each overlap() doubles its
# arguments (40 nested ones expand to 2^40 nodes, which never finished printing).
MAX_DEPTH = 100
MAX_NODES = 20_000


class ExpressionError(InputError):
    """A model expression that does not parse; the message points at the offending token."""

    def __init__(self, message, text, pos, *, path=None, field="expression"):
        self.text, self.pos = text, pos
        # one line, as every error: the text up to the offending token, the last 30 characters
        before = " ".join(text[:pos].split())
        near = ("..." + before[-30:] if len(before) > 30 else before) + " <here>"
        super().__init__(f"{message} at position {pos}: {near}", path=path, field=field)


# ---------------------------------------------------------------------------------------------
# Nodes. Immutable; evaluate(env) works on numpy arrays (one entry per kernel) or floats.


class Expr:
    def __add__(self, o):
        return add(self, o)

    def __mul__(self, o):
        return mul(self, o)

    def params(self) -> set[str]:
        return set().union(*(c.params() for c in self.children()))

    def features(self) -> set[str]:
        return set().union(*(c.features() for c in self.children()))

    def children(self) -> tuple:
        return ()


@dataclass(frozen=True)
class Num(Expr):
    value: float

    def evaluate(self, env):
        return self.value

    def diff(self, name):
        return ZERO

    def __str__(self):
        v = self.value
        return repr(int(v)) if float(v).is_integer() and abs(v) < 1e15 else repr(v)


ZERO, ONE = Num(0.0), Num(1.0)


@dataclass(frozen=True)
class Sym(Expr):
    """A parameter (``p_*``) or a feature (``f_*``)."""

    name: str

    def evaluate(self, env):
        try:
            return env[self.name]
        except KeyError:
            raise KeyError(f"no value for {self.name}") from None

    def diff(self, name):
        return ONE if name == self.name else ZERO

    def params(self):
        return {self.name} if self.name.startswith("p_") else set()

    def features(self):
        return {self.name} if self.name.startswith("f_") else set()

    def __str__(self):
        return self.name


@dataclass(frozen=True)
class Add(Expr):
    a: Expr
    b: Expr

    def children(self):
        return (self.a, self.b)

    def evaluate(self, env):
        return self.a.evaluate(env) + self.b.evaluate(env)

    def diff(self, name):
        return add(self.a.diff(name), self.b.diff(name))

    def __str__(self):
        return f"{self.a} + {self.b}"


@dataclass(frozen=True)
class Mul(Expr):
    a: Expr
    b: Expr

    def children(self):
        return (self.a, self.b)

    def evaluate(self, env):
        return self.a.evaluate(env) * self.b.evaluate(env)

    def diff(self, name):
        return add(mul(self.a.diff(name), self.b), mul(self.a, self.b.diff(name)))

    def __str__(self):
        return f"{_paren(self.a, Add)} * {_paren(self.b, Add)}"


@dataclass(frozen=True)
class Div(Expr):
    a: Expr
    b: Expr

    def children(self):
        return (self.a, self.b)

    def evaluate(self, env):
        return self.a.evaluate(env) / self.b.evaluate(env)

    def diff(self, name):
        da, db = self.a.diff(name), self.b.diff(name)
        if db == ZERO:
            return div(da, self.b)
        return div(add(mul(da, self.b), neg(mul(self.a, db))), mul(self.b, self.b))

    def __str__(self):
        return f"{_paren(self.a, Add)} / {_paren(self.b, (Add, Mul, Div))}"


@dataclass(frozen=True)
class Pow(Expr):
    base: Expr
    exp: Expr

    def children(self):
        return (self.base, self.exp)

    def evaluate(self, env):
        return np.power(self.base.evaluate(env), self.exp.evaluate(env))

    def diff(self, name):
        db, de = self.base.diff(name), self.exp.diff(name)
        out = ZERO
        if db != ZERO:
            out = mul(mul(self.exp, Pow(self.base, add(self.exp, Num(-1.0)))), db)
        if de != ZERO:
            out = add(out, mul(mul(self, Call("log", self.base)), de))
        return out

    def __str__(self):
        tight = (Add, Mul, Div, Pow)
        return f"{_paren(self.base, tight)}**{_paren(self.exp, tight)}"


@dataclass(frozen=True)
class Call(Expr):
    fn: str
    arg: Expr

    def children(self):
        return (self.arg,)

    def evaluate(self, env):
        return getattr(np, self.fn)(self.arg.evaluate(env))

    def diff(self, name):
        da = self.arg.diff(name)
        if da == ZERO:
            return ZERO
        if self.fn == "tanh":  # d tanh(u) = (1 - tanh(u)^2) du
            outer = add(ONE, neg(mul(self, self)))
        elif self.fn == "exp":
            outer = self
        elif self.fn == "log":
            outer = div(ONE, self.arg)
        else:  # sqrt
            outer = div(Num(0.5), self)
        return mul(outer, da)

    def __str__(self):
        return f"{self.fn}({self.arg})"


def _paren(e, kinds):
    return f"({e})" if isinstance(e, kinds) else str(e)


# Constructors that fold constants so the symbolic Jacobian stays small.
def add(a, b):
    if a == ZERO:
        return b
    if b == ZERO:
        return a
    if isinstance(a, Num) and isinstance(b, Num):
        return Num(a.value + b.value)
    return Add(a, b)


def mul(a, b):
    if a == ZERO or b == ZERO:
        return ZERO
    if a == ONE:
        return b
    if b == ONE:
        return a
    if isinstance(a, Num) and isinstance(b, Num):
        return Num(a.value * b.value)
    return Mul(a, b)


def div(a, b):
    if a == ZERO:
        return ZERO
    if b == ONE:
        return a
    return Div(a, b)


def neg(a):
    return mul(Num(-1.0), a)


def step(x: Expr, edge: Expr) -> Expr:
    """ŝ(x) = (tanh(edge * x) + 1) / 2, the paper's Eq. 6."""
    return mul(Num(0.5), add(Call("tanh", mul(edge, x)), ONE))


def overlap(a: Expr, b: Expr, edge: Expr) -> Expr:
    """a ŝ(a - b) + b ŝ(b - a), the paper's Eq. 5 (a differentiable max)."""
    return add(mul(a, step(add(a, neg(b)), edge)), mul(b, step(add(b, neg(a)), edge)))


# ---------------------------------------------------------------------------------------------
# Tokenizer and recursive-descent parser.


@dataclass(frozen=True)
class Token:
    kind: str  # num, name, op, end
    text: str
    pos: int


_OPS = "+-*/^(),"


def tokenize(text: str, *, path=None, field="expression") -> list[Token]:
    toks, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
        elif c == "*" and text.startswith("**", i):
            toks.append(Token("op", "^", i))
            i += 2
        elif c in _OPS:
            toks.append(Token("op", c, i))
            i += 1
        elif c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            j = i
            while j < n and (text[j].isdigit() or text[j] == "."):
                j += 1
            if j < n and text[j] in "eE":
                k = j + 1
                if k < n and text[k] in "+-":
                    k += 1
                if k < n and text[k].isdigit():
                    j = k
                    while j < n and text[j].isdigit():
                        j += 1
            try:
                float(text[i:j])
            except ValueError:
                raise ExpressionError(f"bad number {text[i:j]!r}", text, i, path=path,
                                      field=field) from None
            toks.append(Token("num", text[i:j], i))
            i = j
        elif c.isalpha() or c == "_":
            j = i
            if text.startswith("f_", i):
                # Feature names carry ':' '{' '}' ';' '<' '>' '=' '.' in their fields
                # (lstrides:{0:1;1:>15}); braces may hold anything up to the closing '}'.
                depth = 0
                while j < n:
                    ch = text[j]
                    if ch == "{":
                        depth += 1
                    elif ch == "}":
                        depth -= 1
                        if depth < 0:
                            raise ExpressionError("unbalanced '}'", text, j, path=path,
                                                  field=field)
                    elif depth == 0 and (ch.isspace() or ch in _OPS):
                        break
                    j += 1
                if depth:
                    raise ExpressionError("unclosed '{' in feature name", text, i, path=path,
                                          field=field)
            else:
                while j < n and (text[j].isalnum() or text[j] == "_"):
                    j += 1
            toks.append(Token("name", text[i:j], i))
            i = j
        else:
            raise ExpressionError(f"unexpected character {c!r}", text, i, path=path,
                                  field=field)
    toks.append(Token("end", "", n))
    return toks


class _Parser:
    def __init__(self, text, path, field):
        self.text, self.path, self.field = text, path, field
        self.toks = tokenize(text, path=path, field=field)
        self.i = self.depth = 0

    def peek(self):
        return self.toks[self.i]

    def take(self):
        t = self.toks[self.i]
        self.i += 1
        return t

    def error(self, msg, tok):
        desc = "end of expression" if tok.kind == "end" else repr(tok.text)
        raise ExpressionError(f"{msg}, found {desc}", self.text, tok.pos, path=self.path,
                              field=self.field)

    def expect(self, text):
        t = self.take()
        if t.text != text or t.kind != "op":
            self.error(f"expected {text!r}", t)
        return t

    def parse(self):
        if self.peek().kind == "end":
            self.error("empty expression", self.peek())
        e = self.sum()
        if self.peek().kind != "end":
            self.error("expected an operator", self.peek())
        return e

    def sum(self):
        e = self.product()
        while self.peek().kind == "op" and self.peek().text in "+-":
            op = self.take().text
            r = self.product()
            e = add(e, r) if op == "+" else add(e, neg(r))
        return e

    def product(self):
        e = self.unary()
        while self.peek().kind == "op" and self.peek().text in "*/":
            op = self.take().text
            r = self.unary()
            e = mul(e, r) if op == "*" else div(e, r)
        return e

    def unary(self):
        t = self.peek()
        # every nesting (parentheses, calls, signs, exponents) passes here
        self.depth += 1
        if self.depth > MAX_DEPTH:
            self.error(f"nested over {MAX_DEPTH} deep", t)
        try:
            if t.kind == "op" and t.text in "+-":
                self.take()
                e = self.unary()
                return e if t.text == "+" else neg(e)
            return self.power()
        finally:
            self.depth -= 1

    def power(self):
        base = self.atom()
        if self.peek().kind == "op" and self.peek().text == "^":
            self.take()
            return Pow(base, self.unary())  # right-associative, binds tighter than unary minus
        return base

    def atom(self):
        t = self.take()
        if t.kind == "num":
            return Num(float(t.text))
        if t.kind == "op" and t.text == "(":
            e = self.sum()
            self.expect(")")
            return e
        if t.kind == "name":
            name = t.text
            if name.startswith(("p_", "f_")):
                if len(name) == 2:
                    self.error("empty identifier", t)
                if name.startswith("p_") and not name[2:].replace("_", "").isalnum():
                    self.error("parameter names may hold only letters, digits and '_'", t)
                return Sym(name)
            if name in FUNCTIONS or name in MACROS:
                self.expect("(")
                args = [self.sum()]
                while self.peek().kind == "op" and self.peek().text == ",":
                    self.take()
                    args.append(self.sum())
                close = self.peek()
                self.expect(")")
                want = MACROS.get(name, 1)
                if len(args) != want:
                    self.error(f"{name}() takes {want} argument(s), got {len(args)}", close)
                if name == "step":
                    return step(*args)
                if name == "overlap":
                    return overlap(*args)
                return Call(name, args[0])
            if name in ("pi",):
                return Num(math.pi)
            self.error("unknown name (parameters start with 'p_', features with 'f_'; "
                       f"functions: {', '.join(FUNCTIONS + tuple(MACROS))})", t)
        self.error("expected a number, identifier or '('", t)


def parse(text: str, *, path=None, field="expression") -> Expr:
    """Parse a model expression; raise :class:`ExpressionError` pointing at the bad token and
    naming ``field``, the expression's key in its file."""
    if not isinstance(text, str):
        raise InputError("the expression must be a string", path=path, field=field)
    try:
        e = _Parser(text, path, field).parse()
    except RecursionError:  # the parser takes several frames a level: a caller deep in its own
        raise InputError(f"nested too deep to parse (at most {MAX_DEPTH} levels)", path=path,
                         field=field) from None
    depth, nodes = _size(e)
    if depth > MAX_DEPTH or nodes > MAX_NODES:
        raise InputError(f"the expression nests {depth} deep in {nodes} nodes, over the "
                         f"{MAX_DEPTH} and {MAX_NODES} any cost model needs (a sum of over "
                         f"{MAX_DEPTH} terms, nested overlap())", path=path, field=field)
    return e


def _size(e: Expr) -> tuple[int, int]:
    """(depth, nodes) of ``e`` as a tree, without recursion, each shared node (the arguments
    that step() and overlap() repeat) counted once per place it takes."""
    depth, nodes, stack = {}, {}, [(e, False)]
    while stack:
        x, done = stack.pop()
        if id(x) in nodes:
            continue
        if done:
            depth[id(x)] = 1 + max((depth[id(c)] for c in x.children()), default=0)
            nodes[id(x)] = 1 + sum(nodes[id(c)] for c in x.children())
        else:
            stack.append((x, True))
            stack.extend((c, False) for c in x.children() if id(c) not in nodes)
    return depth[id(e)], nodes[id(e)]


def is_linear_in(expr: Expr, params) -> bool:
    """True when every derivative w.r.t. ``params`` is free of parameters (a linear model)."""
    return all(not expr.diff(p).params() for p in params)


def jacobian(expr: Expr, params) -> dict[str, Expr]:
    """Symbolic partial derivatives, one expression per parameter."""
    return {p: expr.diff(p) for p in params}


def linear_surrogate(expr: Expr) -> Expr:
    """Replace every ``tanh(...)`` by 0, i.e. ŝ = 1/2: the overlap model becomes linear in its
    cost parameters. Used only to find a starting point for the nonlinear fit."""
    if isinstance(expr, Call) and expr.fn == "tanh":
        return ZERO
    if isinstance(expr, Add):
        return add(linear_surrogate(expr.a), linear_surrogate(expr.b))
    if isinstance(expr, Mul):
        return mul(linear_surrogate(expr.a), linear_surrogate(expr.b))
    if isinstance(expr, Div):
        return div(linear_surrogate(expr.a), linear_surrogate(expr.b))
    if isinstance(expr, Pow):
        return Pow(linear_surrogate(expr.base), linear_surrogate(expr.exp))
    if isinstance(expr, Call):
        return Call(expr.fn, linear_surrogate(expr.arg))
    return expr


def terms(expr: Expr) -> list[Expr]:
    """The top-level summands of ``expr`` (for per-term breakdowns of a prediction)."""
    if isinstance(expr, Add):
        return terms(expr.a) + terms(expr.b)
    return [expr]


def term_label(term: Expr, width: int = 48) -> str:
    """A short name of a summand for tables: the term itself where it is at most ``width``
    characters, else the parameters it has outside every function call, so that a side of the
    overlap model, a * ŝ(a - b), is named by a's parameters.

    >>> term_label(parse("p_launch * f_sync_kernel_launch"))
    'p_launch * f_sync_kernel_launch'
    >>> term_label(parse("overlap(p_g * f_g + p_s * f_s, p_f * f_f, p_edge)").a, width=10)
    'p_g, p_s (overlapped)'
    """
    text = str(term)
    if len(text) <= width:
        return text

    def outside(e):
        if isinstance(e, Call):
            return []
        if isinstance(e, Sym):
            return [e.name] if e.params() else []
        return [n for c in e.children() for n in outside(c)]

    names = list(dict.fromkeys(outside(term)))
    if not names:
        return text[:width - 3] + "..."
    overlapped = " (overlapped)" if any(isinstance(c, Call) and c.fn == "tanh"
                                        for c in walk(term)) else ""
    return ", ".join(names) + overlapped


def walk(e: Expr):
    """``e`` and every node below it, parents first."""
    yield e
    for c in e.children():
        yield from walk(c)
