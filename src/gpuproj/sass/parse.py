"""Parsers for the SASS listings NVIDIA's tools print, into ``Program`` objects.

Formats (``sniff`` tells them apart):

- ``nvdisasm-json``: ``nvdisasm -json file.cubin`` (structured; preferred when gpuproj runs the
  tool itself). Instructions carry no offsets (16 bytes each from Volta on) and internal
  subroutines no symbols; gpuproj resolves them from the cubin's ELF symbol table, or, for a
  JSON file on its own, from the unreachable code that follows the kernel (see
  ``_resolve_json_calls``).
- ``nvdisasm-text``: ``nvdisasm -c file.cubin`` (labels, symbols, ``.target sm_XX``).
- ``cuobjdump-text``: ``cuobjdump -sass file`` (what users dump on a machine whose CUDA
  still supports an old GPU, e.g. sm_70; branch and call targets are addresses).
- ``ncu-source-csv``: ``ncu --import r.ncu-rep --page source --csv --print-source sass``:
  SASS plus per-instruction execution counts (see ``docs/sass.md``).
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import warnings
from pathlib import Path

from ..errors import InputError, InputWarning
from ..files import parse_json as parse_json_text
from .program import Function, Instruction, Program

# the instruction: the text up to the first ';' without the spaces around it, written so that a
# line without one fails at once (\s*(.*?)\s*; took cubic time: minutes for 4,000 spaces)
_INSN = re.compile(r"^\s*/\*([0-9a-fA-F]{4,})\*/\s*+((?:[^;\n]*[^;\s])?)\s*;")
# what starts an instruction line: its offset in a comment without spaces (cuobjdump's encoding
# comments, /* 0x000fe40000000f00 */, have them); such a line that _INSN does not read is damaged
_OFFSET = re.compile(r"^\s*/\*[^*\s]+\*/")
_LABEL = re.compile(r"^\s*([.$\w][\w.$@]*):\s*$")
_SECTION = re.compile(r"^\s*\.section\s+\.text\.([^,\s]+)")
_SECTION_BAR = re.compile(r"^//-+\s*\.text\.(\S+)\s*-+")
_CUOBJ_FUNC = re.compile(r"^\s*Function\s*:\s*(\S+)")
_TYPE_FUNC = re.compile(r"^\s*\.type\s+([^,\s]+)\s*,\s*@function")
_TARGET_NVDISASM = re.compile(r"^\s*\.target\s+sm_(\d+)")
_TARGET_CUOBJ = re.compile(r"code for sm_(\d+)")
_PRED = re.compile(r"^(@!?U?P(?:T|\d+))\s+(.*)$")
_BACKTICK = re.compile(r"`\(([^)`]+)\)")  # no ` inside: each `( scans only to the next
_HEX = re.compile(r"(?<![\w.])(0x[0-9a-fA-F]+)\b")

# Opcodes whose address operand transfers control (CALL handled separately).
_BRANCHES = {"BRA", "JMP", "BRX", "JMX", "BRXU", "JMXU"}


def _split(body: str):
    body = body.strip().strip("{}").strip()
    pred = ""
    m = _PRED.match(body)
    if m:
        pred, body = m.group(1), m.group(2)
    parts = body.split(None, 1)
    if not parts:
        return pred, "", ""
    return pred, parts[0], parts[1] if len(parts) > 1 else ""


def _targets(opcode, operands):
    """(branch target, callee name, callee offset) of one instruction; a branch to a label
    gives ``("label", name)``, which the caller resolves."""
    base = opcode.split(".")[0]
    if base not in _BRANCHES and base != "CALL":
        return None, None, None
    ref = None
    m = _BACKTICK.search(operands)
    if m:
        ref = m.group(1).strip()
    else:
        hexes = _HEX.findall(operands)
        if hexes:
            ref = int(hexes[-1], 16)
        elif base == "CALL" and operands.strip():
            ref = operands.split(",")[-1].strip()
    if base == "CALL":
        if isinstance(ref, int):
            return None, None, ref
        return None, ref, None
    if isinstance(ref, str):
        return ("label", ref), None, None
    return ref, None, None


def _finish_function(name, raw, labels, symbols, arch, origin=""):
    symbols = {n: (labels.get(n) if off is None else off) for n, off in symbols.items()}
    symbols = {n: off for n, off in symbols.items() if off is not None}
    insns = []
    for off, pred, opcode, operands, row in raw:
        if pred in ("@!PT", "@!UPT"):
            continue   # predicated off for every thread: filler, never executed
        target, callee, call_off = _targets(opcode, operands)
        if isinstance(target, tuple):
            if target[1] not in labels:
                # a branch to nowhere would end its block with no edge: the code after it
                # would be left out of every count
                raise InputError(f"{opcode} to label '{target[1]}', which {name} does not "
                                 "define (a damaged or edited listing)", path=origin or None,
                                 row=row)
            target = labels[target[1]]
        if callee is not None and call_off is None:
            call_off = symbols.get(callee, labels.get(callee))
        insns.append(Instruction(off, pred, opcode, operands, target, callee, call_off))
    return Function(name, insns, arch, dict(symbols))


def _check_order(earlier: list, offset: int, origin, row) -> None:
    """A function's instructions are printed at increasing offsets; anything else is a listing
    damaged or edited by hand, whose control-flow graph would not hold together."""
    if earlier and offset <= earlier[-1][0]:
        raise InputError(f"instruction at {offset:#06x} after one at {earlier[-1][0]:#06x}: "
                         "offsets must increase (a damaged or edited listing)",
                         path=origin or None, row=row)


def parse_text(text: str, origin: str = "", arch: int | None = None) -> Program:
    """Parse ``nvdisasm`` or ``cuobjdump -sass`` text. A cuobjdump listing of an application
    holds one section per embedded cubin, some of them empty (nvcc puts one before the code)
    and some for other architectures: the functions of every section of one architecture are
    kept, ``arch`` where given, else the only one that has functions."""
    by_arch: dict = {}  # arch -> {name: Function}
    fmt, sec_arch = "nvdisasm-text", None
    cur, raw, labels, symbols, pending = None, [], {}, {}, []

    def close():
        if cur is not None and raw:
            by_arch.setdefault(sec_arch, {}).setdefault(
                cur, _finish_function(cur, raw, labels, symbols, sec_arch, origin))

    lines = text.splitlines()
    # the unfinished last line of a listing cut short: _check_whole says so
    cut = len(lines) if lines and not text.endswith(("\n", "\r")) else None
    for row, line in enumerate(lines, 1):
        m = _TARGET_CUOBJ.search(line) if "code for" in line else None
        if m:
            close()
            fmt, sec_arch, cur = "cuobjdump-text", int(m.group(1)), None
            continue
        m = _TARGET_NVDISASM.match(line)
        if m and sec_arch is None:
            sec_arch = int(m.group(1))
            continue
        m = _INSN.match(line) or _INSN.match(_dual_issue_end(line))
        if m:
            off = int(m.group(1), 16)
            for lab in pending:
                labels[lab] = off
            pending = []
            pred, opcode, operands = _split(m.group(2))
            if not opcode:
                raise InputError("an instruction offset without an instruction (a damaged or "
                                 "edited listing)", path=origin or None, row=row)
            _check_order(raw, off, origin, row)
            raw.append((off, pred, opcode, operands, row))
            continue
        if _OFFSET.match(line) and row != cut:
            # skipped, the instruction would be missing from every count without a word
            shown = " ".join(line.split())[:60]
            raise InputError(f"'{shown}' is no instruction as nvdisasm and cuobjdump print "
                             "one (/*hex offset*/ instruction ;): a damaged or edited listing",
                             path=origin or None, row=row)
        m = _SECTION.match(line) or _SECTION_BAR.match(line) or _CUOBJ_FUNC.match(line)
        if m:
            name = m.group(1)
            if name != cur:
                close()
                cur, raw, labels, symbols, pending = name, [], {}, {}, []
            continue
        m = _TYPE_FUNC.match(line)
        if m and cur is not None and m.group(1) != cur:
            symbols[m.group(1)] = None
            continue
        m = _LABEL.match(line)
        if m and cur is not None:
            pending.append(m.group(1))
    close()
    # the listing's last function must be whole
    _check_whole(by_arch.get(sec_arch, {}).get(cur), origin)
    where = origin or None
    if not by_arch:
        raise InputError("no SASS instructions found (expected nvdisasm or cuobjdump -sass "
                         "output)", path=where)
    archs = ", ".join(f"sm_{a}" for a in sorted(a for a in by_arch if a is not None))
    if arch is not None and None not in by_arch:
        if arch not in by_arch:
            raise InputError(f"listing is for {archs}, not sm_{arch}", path=where)
        chosen = arch
    elif len(by_arch) > 1:
        raise InputError(f"holds SASS for {archs}; pass --arch to pick one", path=where)
    else:
        chosen = next(iter(by_arch))
    return Program(chosen, by_arch[chosen], origin, fmt, [])


def _dual_issue_end(line: str) -> str:
    """A line of cuobjdump's Maxwell and Pascal listings that closes a dual-issue pair
    (``/*0038*/ @!P0 BRA 0x478 }``) with its ';' restored; any other line as it is."""
    body = line.rstrip()
    return body[:-1] + ";" if body.endswith("}") and ";" not in body else line


def _check_whole(f: Function | None, origin: str) -> None:
    """Warn when ``f`` does not end as every compiled function does, NOPs aside: with the
    unconditional branch to itself that follows its last EXIT. A listing cut short (a copy,
    a ``head``) loses the rest of that function and every function after it, which would
    otherwise read as code the other architecture has and this one lacks."""
    body = [i for i in f.instructions if i.base != "NOP"] if f is not None else []
    if body and not (body[-1].base == "BRA" and not body[-1].predicate
                     and body[-1].target == body[-1].offset):
        warnings.warn(InputWarning(
            f"{origin or 'the listing'}: {f.name} ends at {body[-1].offset:#06x} without the "
            "branch to itself that closes every compiled function: the listing looks cut "
            "short (its last kernels and the end of this one missing)"), stacklevel=3)


def parse_json(text: str, origin: str = "", symbols: dict | None = None) -> Program:
    """Parse ``nvdisasm -json`` output. ``symbols`` (function -> {subroutine: offset}) comes
    from the cubin's ELF symbol table when gpuproj ran nvdisasm itself."""
    data = parse_json_text(text, origin or None, "nvdisasm JSON")
    if not (isinstance(data, list) and len(data) >= 2 and isinstance(data[1], list)):
        raise InputError("not nvdisasm -json output (expected [header, [functions]])",
                         path=origin or None)
    where = origin or None
    head = data[0] if isinstance(data[0], dict) else {}
    sm = _json_dict(head.get("SM"), where, "header", "SM")
    v = _json_dict(sm.get("version"), where, "header", "SM.version")
    arch = None
    if "major" in v:
        arch = (_json_int(v["major"], where, "header", "SM.version.major") * 10
                + _json_int(v.get("minor", 0), where, "header", "SM.version.minor"))
    functions, notes = {}, []
    for n, fn in enumerate(data[1]):
        entry = f"functions[{n}]"
        if not isinstance(fn, dict):
            raise InputError(f"{entry} is {_json_what(fn)}, not a function object", path=where)
        name = fn.get("function-name")
        if not isinstance(name, str) or not name:
            raise InputError(f"{entry}: {_json_what(name)} is not a function name", path=where,
                             field="function-name")
        entry = f"functions[{n}] ({name})"
        if name in functions:  # one cubin names each function once: the later would win
            raise InputError(f"{entry}: a second function of this name", path=where,
                             field="function-name")
        start = _json_int(fn.get("start", 0), where, entry, "start")
        listed = fn.get("sass-instructions", [])
        if not isinstance(listed, list):
            raise InputError(f"{entry}: {_json_what(listed)} is not a list of instructions",
                             path=where, field="sass-instructions")
        insns = []
        for k, ins in enumerate(listed):
            at = f"{entry}, sass-instructions[{k}]"
            if not isinstance(ins, dict):
                raise InputError(f"{at} is {_json_what(ins)}, not an instruction object",
                                 path=where)
            pred = _json_str(ins.get("predicate"), where, at, "predicate")
            opcode = _json_str(ins.get("opcode"), where, at, "opcode")
            operands = _json_str(ins.get("operands"), where, at, "operands")
            if not opcode:
                # nvdisasm prints one for every instruction: skipping an instruction without
                # would take it out of every count unseen
                raise InputError(f"{at}: no opcode", path=where, field="opcode")
            if pred in ("@!PT", "@!UPT"):
                continue
            # nvdisasm's JSON lists operands without spaces; keep them as printed
            target, callee, call_off = _targets(opcode, operands)
            if isinstance(target, tuple):
                target = None
            insns.append(Instruction(start + 16 * k, pred, opcode, operands, target, callee,
                                     call_off))
        f = Function(name, insns, arch, dict((symbols or {}).get(name, {})))
        _resolve_json_calls(f, notes)
        functions[name] = f
    if not functions:
        raise InputError("no functions in nvdisasm JSON", path=origin or None)
    return Program(arch, functions, origin, "nvdisasm-json", notes)


def _json_what(value) -> str:
    """A JSON value as an error message shows it: scalars as written, containers by kind."""
    if value is None:
        return "null (or missing)"
    if isinstance(value, (dict, list)):
        return "an object" if isinstance(value, dict) else "a list"
    return json.dumps(value)[:40]


def _json_dict(value, path, entry, fld) -> dict:
    """An object of the JSON, ``{}`` where it is absent (the header need not name the SM)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"{entry}: {_json_what(value)} is not an object", path=path, field=fld)
    return value


def _json_int(value, path, entry, fld) -> int:
    # JSON's true is an int to Python, never a number nvdisasm prints
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise InputError(f"{entry}: {_json_what(value)} is not an integer", path=path, field=fld)


def _json_str(value, path, entry, fld) -> str:
    """A text field, ``""`` where absent or null (an instruction without a predicate)."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InputError(f"{entry}: {_json_what(value)} is not text", path=path, field=fld)
    return value

def _resolve_json_calls(f: Function, notes: list) -> None:
    """Give each CALL its callee offset. With symbols: look them up. Without: the entries of
    internal subroutines are the instructions that nothing falls or branches into; they follow
    the kernel body in the order of their ``__internal_<k>`` number."""
    calls = [i for i in f.instructions if i.base == "CALL" and i.call_offset is None]
    if not calls:
        return
    if not all(i.callee in f.symbols for i in calls):
        entries = _unreached_entries(f)
        names = sorted({i.callee for i in calls if i.callee not in f.symbols},
                       key=lambda n: (int(m.group(1)) if (m := re.search(r"__internal_(\d+)_", n))
                                      else 1 << 30, n))
        if len(entries) < len(names):
            notes.append(f"{f.name}: could not locate subroutine(s) {names} in JSON; "
                         "their instructions are not counted")
        for n, off in zip(names, entries):
            f.symbols[n] = off
    f.instructions = [
        Instruction(i.offset, i.predicate, i.opcode, i.operands, i.target, i.callee,
                    f.symbols.get(i.callee)) if i.base == "CALL" and i.call_offset is None else i
        for i in f.instructions]


def _unreached_entries(f: Function) -> list[int]:
    """Offsets where code starts that the kernel body never reaches by fall-through or branch
    (subroutine entries), excluding the trailing ``BRA self`` + NOP padding."""
    insns = f.instructions
    reached_by_branch = {i.target for i in insns if i.target is not None}
    entries, prev_falls = [], True
    for k, i in enumerate(insns):
        if k > 0 and not prev_falls and i.offset not in reached_by_branch:
            if not (i.base == "NOP" or (i.base == "BRA" and i.target == i.offset)):
                entries.append(i.offset)
        uncond = not i.conditional
        prev_falls = not (uncond and i.base in ("EXIT", "RET", "BRA", "JMP", "BRX", "JMX"))
    return entries


def parse_ncu_source_csv(text: str, origin: str = "", arch: int | None = None) -> Program:
    """Parse ``ncu --import R --page source --csv --print-source sass``: a ``"Kernel Name",
    name`` banner row, a header row, then one row per SASS instruction with ``Address``,
    ``Source`` and the counters ``Instructions Executed`` (warp level), ``Thread Instructions
    Executed`` and ``Predicated-On Thread Instructions Executed``. Several kernels follow each
    other. Addresses are made relative to each kernel's first instruction."""
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as e:  # a field over 128 KiB, a NUL byte
        raise InputError(f"not a readable CSV file ({e})", path=origin or None) from None
    functions, notes = {}, []
    k = 0
    while k < len(rows):
        r = rows[k]
        if len(r) >= 2 and r[0].strip() == "Kernel Name":
            name = r[1].strip()
            header = rows[k + 1] if k + 1 < len(rows) else []
            k += 2
            body = []
            while k < len(rows) and not (rows[k] and rows[k][0].strip() == "Kernel Name"):
                body.append((k + 1, rows[k]))
                k += 1
            functions.setdefault(name, _ncu_function(name, header, body, origin, arch))
            continue
        k += 1
    if not functions:
        raise InputError("no 'Kernel Name' banner rows: not an Nsight Compute source-page CSV "
                         "(ncu --page source --csv --print-source sass)", path=origin or None)
    return Program(arch, functions, origin, "ncu-source-csv", notes)


def _num(s, path, row, fld):
    s = (s or "").strip().replace(",", "")
    if s in ("", "-", "n/a", "N/A"):
        return 0.0
    try:
        v = float(s)
    except ValueError:
        raise InputError(f"'{s}' is not a number", path=path or None, row=row, field=fld) from None
    if not 0 <= v < math.inf:  # a count: NaN, inf (1e400) and negatives would pass on as counts
        raise InputError(f"'{s}' is not a count (a finite number >= 0)", path=path or None,
                         row=row, field=fld)
    return v


def _ncu_function(name, header, body, origin, arch):
    cols = [h.strip() for h in header]

    def col(label, required=True):
        if label in cols:
            return cols.index(label)   # first occurrence (old versions repeat some columns)
        if required:
            raise InputError(f"column '{label}' missing; collect with --section SourceCounters",
                             path=origin or None, field=label)
        return None

    ia, isrc = col("Address"), col("Source")
    iw = col("Instructions Executed")
    it = col("Thread Instructions Executed", required=False)
    ip = col("Predicated-On Thread Instructions Executed", required=False)
    parsed = []
    for row, r in body:
        if not any(v.strip() for v in r):
            continue   # a blank line holds no instruction
        if len(r) < len(cols):
            # a row cut short: its counts, or the instruction itself, would be lost
            raise InputError(f"{len(r)} field(s) where the header has {len(cols)} (a row cut "
                             "short)", path=origin or None, row=row)
        if not r[ia].strip():
            raise InputError("no address", path=origin or None, row=row, field="Address")
        if not r[isrc].strip():
            raise InputError("no instruction", path=origin or None, row=row, field="Source")
        a = r[ia].strip().lower().removeprefix("0x")
        try:
            addr = int(a, 16)
        except ValueError:
            raise InputError(f"address '{r[ia]}' is not hexadecimal", path=origin or None,
                             row=row, field="Address") from None
        _check_order(parsed, addr, origin, row)
        w = _num(r[iw], origin, row, "Instructions Executed")
        t = _num(r[it], origin, row, "Thread Instructions Executed") if it is not None else w * 32
        p = _num(r[ip], origin, row, "Predicated-On Thread Instructions Executed") \
            if ip is not None else t
        # a thread executes an instruction only with its warp, and has its predicate true only
        # where it executes it: more is a damaged page, whose excess would be carried over
        if t > 32 * w:
            raise InputError(f"{t:,.0f} thread instructions from {w:,.0f} warp instructions "
                             "(at most 32 threads each)", path=origin or None, row=row,
                             field="Thread Instructions Executed")
        if p > t:
            raise InputError(f"{p:,.0f} predicated-on of {t:,.0f} thread instructions "
                             "executed", path=origin or None, row=row,
                             field="Predicated-On Thread Instructions Executed")
        parsed.append((addr, r[isrc], w, t, p, row))
    if not parsed:
        raise InputError(f"kernel '{name}' has no instruction rows", path=origin or None)
    base = min(p[0] for p in parsed)
    raw, counts, labels = [], {}, {}
    for addr, src, w, t, p, row in parsed:
        off = addr - base
        src = src.strip()
        m = _INSN.match(src + (";" if not src.endswith(";") else ""))
        body_txt = m.group(2) if m else src.rstrip(";")
        pred, opcode, operands = _split(body_txt)
        if not opcode:
            continue
        # absolute branch targets -> offsets
        operands = _HEX.sub(lambda h: hex(int(h.group(1), 16) - base)
                            if int(h.group(1), 16) >= base and opcode.split(".")[0] in
                            _BRANCHES | {"CALL", "BSSY", "BREAK"} else h.group(1), operands)
        raw.append((off, pred, opcode, operands, row))
        counts[off] = (w, t, p)
    f = _finish_function(name, raw, labels, {}, arch, origin)
    f.counts = counts
    return f


def sniff(head: bytes) -> str | None:
    """The format of a file from its first bytes: elf, fatbin, nvdisasm-json, ncu-source-csv,
    sass-text, or None."""
    if head.startswith(b"\x7fELF"):
        return "elf"
    if head[:4] == b"\x50\xed\x55\xba":
        return "fatbin"
    s = head.decode("utf-8", "replace").lstrip()
    if s.startswith("[") and '"SM"' in s[:2000] or s.startswith('[{"ELF"'):
        return "nvdisasm-json"
    if s.startswith('"Kernel Name"') or s.startswith("Kernel Name"):
        return "ncu-source-csv"
    if re.search(r"/\*[0-9a-fA-F]{4,}\*/", s):
        return "sass-text"
    return None


def parse_file(path, arch: int | None = None) -> Program:
    """Parse a SASS listing file of any text format above."""
    p = Path(path)
    data = p.read_bytes()
    kind = sniff(data[:65536])
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        # NVIDIA's tools write ASCII: other bytes are a damaged file, and read as U+FFFD
        # they became part of an opcode or an operand
        raise InputError(f"not a UTF-8 text file (byte 0x{data[e.start]:02x} at offset "
                         f"{e.start})", path=str(p), row=data.count(b"\n", 0, e.start) + 1
                         ) from None
    if kind == "nvdisasm-json":
        prog = parse_json(text, str(p))
    elif kind == "ncu-source-csv":
        prog = parse_ncu_source_csv(text, str(p), arch)
    elif kind == "sass-text":
        prog = parse_text(text, str(p), arch)
    else:
        raise InputError("not a SASS listing (nvdisasm text or -json, cuobjdump -sass, or "
                         "ncu source-page CSV)", path=str(p))
    if arch is not None and prog.arch is None:
        prog.arch = arch
        for f in prog:
            f.arch = arch
    return prog
