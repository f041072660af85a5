"""Running NVIDIA's tools: nvcc (compile), nvdisasm (disassemble), cuobjdump (extract cubins
from fatbins and executables).

nvdisasm and cuobjdump come from the PyPI wheels ``nvidia-cuda-nvdisasm`` and
``nvidia-cuda-cuobjdump`` (``pip install 'gpuproj[sass]'``); their binaries live inside the
installed ``nvidia`` package (``nvidia/cu13/bin`` or ``nvidia/cuda_nvdisasm/bin``). nvcc comes
from a CUDA toolkit (``PATH``, ``$CUDA_HOME/bin`` or ``/usr/local/cuda/bin``). ``find_tool``
(``nvidia_tools.py``) finds them; a missing tool raises ``MissingToolError`` saying what to
install. The current nvdisasm refuses sm_70 and
older: SASS for those GPUs must be dumped on a machine whose CUDA supports them
(``cuobjdump -sass app > app.sm_70.sass``) and passed as text.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from ..errors import GpuprojError, InputError, MissingToolError
from ..nvidia_tools import HINTS, find_tool, tool_errors

MIN_NVDISASM_ARCH = 75


# where a .cu file is compiled, SASS from elsewhere does as well
_NVCC_MISSING = (HINTS["nvcc"] + ", or pass an already compiled cubin, fatbin, executable or "
                 "SASS listing instead of a .cu file")


def _run(args, what, path=None, cwd=None) -> str:
    try:
        r = subprocess.run(args, capture_output=True, text=True, cwd=cwd, timeout=600)
    except OSError as e:
        raise MissingToolError(f"cannot run {args[0]}: {e}") from None
    if r.returncode != 0:
        raise InputError(f"{what} failed: {tool_errors(r.stderr or r.stdout)}", path=path)
    return r.stdout


_ARCH = re.compile(r"(?:sm_|compute_)?(\d+)(?:\.(\d))?([af])?")


def _arch_parts(arch) -> tuple[int, str]:
    """(compute capability code, ``'a'``, ``'f'`` or ``''``) of an architecture as written."""
    if isinstance(arch, int):
        return arch, ""
    m = _ARCH.fullmatch(str(arch).strip().lower())
    if not m:
        raise InputError(f"'{arch}' is not a GPU architecture (expected e.g. sm_80)",
                         field="arch")
    code = int(m.group(1)) * 10 + int(m.group(2)) if m.group(2) else int(m.group(1))
    return code, m.group(3) or ""


def parse_arch(arch) -> int:
    """``'sm_80'``, ``'80'``, ``'8.0'``, ``80`` -> 80: the compute capability alone, for what
    depends on it (which nvcc or nvdisasm supports it, a cubin's ELF header); ``arch_name``
    keeps an ``a`` or ``f`` suffix.

    >>> parse_arch("sm_90"), parse_arch("8.6"), parse_arch(120), parse_arch("sm_90a")
    (90, 86, 120, 90)
    """
    return _arch_parts(arch)[0]


def arch_name(arch) -> str:
    """The target as nvcc names it, with the suffix given: ``sm_90a`` (architecture-specific:
    wgmma, setmaxnreg) and ``sm_100f`` (family-specific) are other targets than ``sm_90`` and
    ``sm_100``, with code of their own.

    >>> arch_name("9.0a"), arch_name("compute_100F"), arch_name(80)
    ('sm_90a', 'sm_100f', 'sm_80')
    """
    code, variant = _arch_parts(arch)
    return f"sm_{code}{variant}"


@cache
def nvcc_archs() -> tuple[int, ...]:
    """The sm_XX codes the installed nvcc can compile for."""
    nvcc = find_tool("nvcc", missing=_NVCC_MISSING)
    out = _run([nvcc, "--list-gpu-code"], "nvcc --list-gpu-code")
    return tuple(sorted({int(m) for m in re.findall(r"sm_(\d+)", out)}))


def compile_cu(source, arch, workdir, extra=()) -> Path:
    """Compile a CUDA source file to a cubin for ``arch`` with ``nvcc -cubin -O3``
    (``sm_90a``: for the architecture-specific features as well)."""
    a, name = parse_arch(arch), arch_name(arch)
    nvcc = find_tool("nvcc", missing=_NVCC_MISSING)
    supported = nvcc_archs()  # bare codes: nvcc --list-gpu-code names no suffixed target
    if a not in supported:
        raise InputError(f"this nvcc cannot compile for sm_{a} (it supports "
                         f"{', '.join(f'sm_{x}' for x in supported)}); compile on a machine whose "
                         f"CUDA supports sm_{a} and pass the SASS (cuobjdump -sass) or the binary",
                         path=str(source))
    out = Path(workdir) / f"{Path(source).stem}.{name}.cubin"
    # an absolute path: a file named -x.cu is no option
    _run([nvcc, "-cubin", "-O3", f"-arch={name}", *extra, "-o", str(out.resolve()),
          str(Path(source).resolve())], f"nvcc for {name}", path=str(source))
    return out


def _is_elf64(data: bytes) -> bool:
    """Whether ``data`` starts an ELF64 file (a cubin is one); its header is 64 bytes, so a
    shorter file (one cut short, or named .cubin) is none."""
    return len(data) >= 64 and data[:4] == b"\x7fELF" and data[4] == 2


def _elf_sections(data: bytes):
    """(section headers, their names, ``name_at(strtab index, offset)``) of an ELF64 little
    endian file."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + k * shentsize) for k in range(shnum)]

    def name_at(strtab_idx, off):
        s = secs[strtab_idx]
        start = s[4] + off
        end = data.index(b"\0", start)
        return data[start:end].decode("utf-8", "replace")

    return secs, [name_at(shstrndx, s[0]) for s in secs], name_at


def has_code(data: bytes) -> bool:
    """Whether a cubin holds the code of a function (a ``.text.<name>`` section): nvcc links
    one cubin without any next to the kernels' own, per architecture, into an executable."""
    return _is_elf64(data) and any(n.startswith(".text.") for n in _elf_sections(data)[1])


def elf_symbols(data: bytes) -> dict[str, dict[str, int]]:
    """Function symbols of a cubin by code section: ``{kernel: {symbol: offset}}`` for the
    symbols that are not the kernel itself (nvcc's internal subroutines). ELF64 little endian."""
    if not _is_elf64(data):
        return {}
    secs, names, name_at = _elf_sections(data)
    out: dict[str, dict[str, int]] = {}
    for s in secs:
        if s[1] != 2:   # SHT_SYMTAB
            continue
        link, entsize = s[6], s[9] or 24
        for k in range(s[5] // entsize):
            st_name, st_info, _, st_shndx, st_value, _ = struct.unpack_from(
                "<IBBHQQ", data, s[4] + k * entsize)
            if (st_info & 0xF) != 2 or st_shndx >= len(names):   # STT_FUNC
                continue
            sec = names[st_shndx]
            if not sec.startswith(".text."):
                continue
            kernel, sym = sec[len(".text."):], name_at(link, st_name)
            if sym != kernel:
                out.setdefault(kernel, {})[sym] = st_value
    return out


def disassemble_cubin(cubin: Path) -> tuple[str, dict]:
    """(``nvdisasm -json`` output, ELF subroutine symbols) of one cubin."""
    data = Path(cubin).read_bytes()
    arch = cubin_arch(data)
    if arch is not None and arch < MIN_NVDISASM_ARCH:
        raise InputError(f"nvdisasm cannot disassemble sm_{arch} (it supports sm_75 and newer); "
                         "dump the SASS with `cuobjdump -sass` from a CUDA toolkit that supports "
                         f"sm_{arch} (CUDA 12 or older) and pass the text file", path=str(cubin))
    out = _run([find_tool("nvdisasm"), "-json", str(Path(cubin).resolve())], "nvdisasm",
               path=str(cubin))
    return out, elf_symbols(data)


def cubin_arch(data: bytes) -> int | None:
    """The sm_XX of a cubin from its ELF header flags (None if not a CUDA ELF)."""
    if not _is_elf64(data):
        return None
    e_machine, = struct.unpack_from("<H", data, 0x12)
    if e_machine != 190:   # EM_CUDA
        return None
    flags, = struct.unpack_from("<I", data, 0x30)
    # CUDA 12.8+ layout: arch in bits 8..15; older: bits 0..7
    hi, lo = (flags >> 8) & 0xFF, flags & 0xFF
    return hi if data[7] == 0x41 and data[8] >= 8 and hi else lo


def extract_cubins(binary, arch=None) -> list[tuple[str | None, Path]]:
    """Cubins embedded in a fatbin, object, library or executable (``cuobjdump -xelf all``),
    each with its ``arch_name`` (None where neither the cubin nor its file name tells it),
    optionally only those for ``arch``; files live in a temporary directory kept until exit.

    The ELF header of an ``sm_90a`` cubin is that of an ``sm_90`` one, but cuobjdump names the
    file ``<stem>.<k>.sm_90a.cubin``: that name tells the two apart. A family-specific cubin
    (``sm_100f``) it names as the plain one, so ``sm_100f`` picks the cubins named ``sm_100``.
    """
    tmp = Path(tempfile.mkdtemp(prefix="gpuproj-cubins-"))
    _run([find_tool("cuobjdump"), "-xelf", "all", str(Path(binary).resolve())],
         "cuobjdump -xelf", path=str(binary), cwd=tmp)
    want = None if arch is None else arch_name(arch).removesuffix("f")
    cubins = []
    for p in sorted(tmp.glob("*.cubin")):
        a = cubin_arch(p.read_bytes())
        m = re.search(r"sm_(\d+)(a?)", p.name)
        a = a or (int(m.group(1)) if m else None)
        cubins.append((None if a is None else f"sm_{a}" + (m.group(2) if m else ""), p))
    found = [c for c in cubins if want is None or c[0] == want]
    if not found and want is not None and want[-1].isdigit():
        # a binary built for the architecture-specific target only (sm_90a) runs on the GPUs
        # of the plain one, which is what the catalog names (a GPU's isa is sm_90)
        found = [c for c in cubins if c[0] == want + "a"]
    if not found:
        held = sorted({n for n, _ in cubins if n})
        raise InputError("no cubin " + (f"for {arch_name(arch)} " if arch else "") + "embedded ("
                         + (f"it holds {', '.join(held)}" if held else "cuobjdump -lelf lists "
                            "what is there; PTX-only binaries must be compiled for the GPU first")
                         + ")", path=str(binary))
    return found


def demangle(names) -> dict[str, str]:
    """C++ names (``_Z5scaleIfEvPT_S0_i``) -> what they declare (``void scale<float>(float*,
    float, int)``) by binutils' ``c++filt``, where it is installed; a name it leaves alone, or
    every name without it, maps to itself."""
    names = list(names)
    tool = shutil.which("c++filt")
    mangled = [n for n in names if n.startswith("_Z")]
    out = {n: n for n in names}
    if tool is None or not mangled:
        return out
    try:
        r = subprocess.run([tool], input="\n".join(mangled) + "\n", capture_output=True,
                           text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return out
    lines = r.stdout.splitlines()
    if r.returncode == 0 and len(lines) == len(mangled):
        out.update(zip(mangled, lines))
    return out


def tool_version(name: str) -> str:
    try:
        out = _run([find_tool(name), "--version"], f"{name} --version")
    except GpuprojError:
        return ""
    m = re.search(r"release [\d.]+, V[\d.]+", out)
    return m.group(0) if m else out.strip().splitlines()[-1]
