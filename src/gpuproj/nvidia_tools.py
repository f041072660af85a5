"""Finding NVIDIA's command-line tools: nvcc, nvdisasm and cuobjdump (``gpuproj sass``, the CUDA
micro-benchmarks), ncu and nsys (``gpuproj profile``). One lookup, so that every command finds
the same tool and refuses the same mistakes."""

from __future__ import annotations

import glob
import importlib.util
import os
import re
import shutil
from pathlib import Path

from .errors import MissingToolError
from .units import first_of

_WHEEL = {"nvdisasm": "nvidia-cuda-nvdisasm", "cuobjdump": "nvidia-cuda-cuobjdump"}

# what to do when the tool is not found
HINTS = {
    **{name: f"{name} not found: install it with `pip install 'gpuproj[sass]'` (PyPI package "
             f"{wheel}) or put CUDA's bin directory on PATH (or set GPUPROJ_{name.upper()})"
       for name, wheel in _WHEEL.items()},
    "nvcc": "nvcc not found: install a CUDA toolkit and put its bin directory on PATH (or set "
            "CUDA_HOME or GPUPROJ_NVCC)",
    "ncu": "Nsight Compute's 'ncu' is not on PATH: it ships with the CUDA toolkit "
           "(<cuda>/bin/ncu) and as a separate download (developer.nvidia.com/nsight-compute); "
           "add it to PATH, set GPUPROJ_NCU or pass --ncu /path/to/ncu",
    "nsys": "Nsight Systems' 'nsys' is not on PATH: it ships with the CUDA toolkit "
            "(<cuda>/bin/nsys) and as a separate download (developer.nvidia.com/nsight-systems); "
            "add it to PATH, set GPUPROJ_NSYS or pass --nsys /path/to/nsys",
}


def tool_errors(output: str) -> str:
    """What a failed tool's output (nvcc's, nvdisasm's) says is wrong, on one line: its first
    error lines, else its last lines. The source lines and carets a compiler prints under each
    error do not survive being joined on one line."""
    lines = [ln.strip() for ln in output.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if re.search(r"\b(error|fatal)\b", ln, re.I)]
    return first_of(errors, 4, " | ") if errors else " | ".join(lines[-8:])


def _executable(path) -> bool:
    return Path(path).is_file() and os.access(path, os.X_OK)


def find_tool(name: str, explicit: str | None = None, missing: str | None = None) -> str:
    """Path of the NVIDIA tool ``name``: ``explicit`` (a command-line option's value: a path or
    a name on PATH), else ``$GPUPROJ_<NAME>`` (a path), else the first found inside the
    installed ``nvidia`` wheels, on PATH, in the ``bin`` folder of ``$CUDA_HOME``,
    ``$CUDA_PATH`` or ``/usr/local/cuda``, or in a standalone Nsight Systems install.

    ``MissingToolError`` with ``missing`` (default: ``HINTS[name]``) where none is found, and
    where the tool named by ``explicit`` or the environment is no executable: running another
    one of the same name instead would hide the typo."""
    hint = missing or HINTS.get(name, f"{name} not found")
    if explicit:
        found = explicit if _executable(explicit) else shutil.which(explicit)
        if not found:
            raise MissingToolError(f"'{explicit}' is not an executable. {hint}")
        return str(found)
    var = f"GPUPROJ_{name.upper()}"
    env = os.environ.get(var)
    if env:
        if not _executable(env):
            raise MissingToolError(f"{var}={env} is not an executable file")
        return env
    spec = importlib.util.find_spec("nvidia")
    if spec is not None and spec.submodule_search_locations:
        for root in spec.submodule_search_locations:
            for cand in sorted(Path(root).glob(f"*/bin/{name}")):
                if os.access(cand, os.X_OK):
                    return str(cand)
    found = shutil.which(name)
    if found:
        return found
    for base in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if base and (Path(base) / "bin" / name).is_file():
            return str(Path(base) / "bin" / name)
    if name == "nsys":  # Nsight Systems installed on its own, outside the toolkit
        standalone = sorted(glob.glob("/opt/nvidia/nsight-systems/*/bin/nsys"))
        if standalone:
            return standalone[-1]
    raise MissingToolError(hint)
