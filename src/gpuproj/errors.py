"""One exception hierarchy. The CLI turns every ``GpuprojError`` into a one-line message and exit
code 2; anything else is a bug and keeps its traceback. A ``GpuprojWarning`` is printed as one
``gpuproj: warning:`` line on stderr (never on stdout, which may be JSON)."""


class GpuprojError(Exception):
    """Base of every error a user can cause (bad input, unknown GPU, missing tool)."""


class InputError(GpuprojError):
    """A file or value supplied by the user is malformed.

    The message names the file, the row (1-based, as a spreadsheet shows it, header = row 1)
    and the field where known.
    """

    def __init__(self, message, *, path=None, row=None, field=None):
        self.message, self.path, self.row, self.field = message, path, row, field
        where = []
        if path is not None:
            where.append(str(path))
        if row is not None:
            where.append(f"row {row}")
        if field is not None:
            where.append(f"field '{field}'")
        super().__init__(f"{': '.join([', '.join(where), message]) if where else message}")


class GPUNotNamedError(InputError):
    """A file that does not name the GPU of its rows (or of some), where none was given
    (``gpu=``). ``reason`` says what the file lacks and ``in_file``, where the file itself can
    name it, how (a measurement table's ``gpu`` column). The message adds ``--source``, which
    names it for ``predict``; ``evaluate``, which reads each row's GPU from its file, says what
    works there instead."""

    def __init__(self, reason, *, in_file=None, path=None, row=None, field=None):
        self.reason, self.in_file = reason, in_file
        super().__init__(f"{reason}: {f'{in_file}, or ' if in_file else ''}pass --source NAME "
                         "(gpu=NAME in load())", path=path, row=row, field=field)


class NotATableError(GpuprojError, TypeError):
    """An API function given something else where it takes a ``ProfileTable`` (a DataFrame,
    a file name): a ``TypeError``, as Python's own for an argument of the wrong type, that says
    what to pass."""


class UnknownGPUError(GpuprojError):
    """A GPU name that the catalog cannot resolve (unknown or ambiguous)."""


class AmbiguousGPUError(UnknownGPUError):
    """A GPU name that matches several catalog GPUs."""


class MissingToolError(GpuprojError):
    """An external tool or optional dependency is absent; the message says what to install."""


class GpuprojWarning(UserWarning):
    """Base of every warning about what a user supplied."""


class InputWarning(GpuprojWarning):
    """A file that reads, but disagrees with the catalog in a way the projections inherit (an
    ncu profile of 152 SMs read as a 148-SM GPU). The CLI prints it as one stderr line."""
