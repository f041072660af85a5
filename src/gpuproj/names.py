"""Names of GPUs and methods as the command line and the Python API both take them.

One rule for both: where several are taken, a text names them separated by commas, as an option
does (``--target 'h100*,mi3*'``, ``targets="h100*,mi3*"``), and a list may hold such texts;
where one GPU is taken, several are an error that says so.

>>> name_list("h100-sxm5-80gb, h200")
['h100-sxm5-80gb', 'h200']
>>> name_list(["bandwidth,roofline", "hierarchical"])
['bandwidth', 'roofline', 'hierarchical']
"""

from __future__ import annotations

import os


def split_list(value) -> list[str]:
    """'a, b,c' -> ['a', 'b', 'c'] (comma-separated names; empty -> [])."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def split_lists(values) -> list[str]:
    """Several comma-separated texts, as a repeatable option gives them: ('a,b', 'c') ->
    ['a', 'b', 'c']."""
    return [v for value in values for v in split_list(value)]


def name_list(value) -> list:
    """A list argument of the API (GPUs, methods) as a list: a text split at its commas, each
    text of a list or tuple split so, a set sorted first (it has no order of its own: results
    would change order from run to run); anything else (a GPU, a model object) is a list of
    one and stays as it is."""
    if isinstance(value, str):
        return split_list(value)
    if isinstance(value, (set, frozenset)):
        value = sorted(value, key=str)
    elif not isinstance(value, (list, tuple)):
        return [value]
    return [n for item in value
            for n in (split_list(item) if isinstance(item, str) else [item])]


def gpu_list(value) -> list:
    """The GPUs that ``value`` names (``name_list``), each once, as ``catalog.select`` reads
    them: names, GPU files, ``all`` and wildcards on ids."""
    from .catalog import select

    return select(name_list(value))


def one_gpu(value, what: str):
    """The GPU that ``value`` names, for an argument that takes one (``what``: its name in the
    error): a list of several, or a text of several names separated by commas, is an
    ``UnknownGPUError`` saying that it takes one GPU (the catalog would call the list's text a
    pattern, or suggest GPUs near the whole text); a list of one is that one."""
    from .catalog import resolve
    from .errors import UnknownGPUError

    if isinstance(value, (list, tuple, set, frozenset)) or (
            isinstance(value, str) and "," in value
            and not os.path.exists(value)):  # a GPU file whose name has a comma
        names = name_list(value)
        if len(names) != 1:
            raise UnknownGPUError(f"{what} takes one GPU, got {len(names)}: "
                                  f"{', '.join(map(str, names)) or 'none'}")
        value = names[0]
    return resolve(value)
