"""The files users give gpuproj (profiles, GPU files, saved models and parameters) and the ones
it writes for them (reports, pictures, models, GPU files): whatever keeps one from being read
or written is an ``InputError`` naming the file, never a traceback."""

from __future__ import annotations

import codecs
import gzip
import io
import warnings
from contextlib import contextmanager
from pathlib import Path

from .errors import InputError, InputWarning

# byte-order marks of the encodings a text file may be in besides UTF-8 (Windows PowerShell's
# `>` writes UTF-16): the file is read in the one its mark names. UTF-32's first, as UTF-32-LE's
# mark starts with UTF-16-LE's.
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
# what a .gz file may expand to: 30x the largest public table gpuproj reads (32 MB); a few MB
# of gzipped zeros expand to gigabytes, read into memory whole
MAX_GUNZIPPED_CHARS = 2**30


def refuse_irregular(path) -> None:
    """An ``InputError`` where ``path`` exists but is neither a regular file nor a folder: a
    pipe (``<(cmd)``, /dev/stdin) reads once where readers read a file more than once, a pipe
    without a writer never opens, and a device such as /dev/zero never ends."""
    path = Path(path)
    if path.exists() and not (path.is_file() or path.is_dir()):
        raise InputError("not a regular file (a pipe or a device, which reads once or never "
                         "ends): save it to a file first", path=path)


def read_text(path, n: int = -1, *, strict: bool = False) -> str:
    """The text of ``path`` (gunzipped where the name ends in ``.gz``), or its first ``n``
    characters. A file that starts with a UTF-16 or UTF-32 byte-order mark is read in that
    encoding, any other as UTF-8. Bytes that are not UTF-8 are replaced, with a warning, which
    keeps a profile with an odd kernel name readable, or with ``strict`` are an error (a YAML or
    JSON file of ours is UTF-8, and anything else is the wrong file). A file that cannot be
    opened, one that is no regular file (a pipe, a device), or a gzip file that is corrupt, cut
    short or expands past ``MAX_GUNZIPPED_CHARS`` is an ``InputError``."""
    path = Path(path)
    gz = path.suffix == ".gz"

    def raw():
        return gzip.open(path) if gz else open(path, "rb")

    def read(errors, encoding):
        with io.TextIOWrapper(raw(), encoding=encoding, errors=errors) as f:
            if n >= 0 or not gz:
                return f.read(n)
            text = f.read(MAX_GUNZIPPED_CHARS + 1)
            if len(text) > MAX_GUNZIPPED_CHARS:
                raise InputError(f"expands to over {MAX_GUNZIPPED_CHARS:,} characters: no "
                                 "profile or table of gpuproj's is so large", path=path)
            return text

    try:
        refuse_irregular(path)
        with raw() as f:
            head = f.read(4)
        encoding = next((e for bom, e in _BOMS if head.startswith(bom)), "utf-8-sig")
        try:
            return read("strict", encoding)
        except UnicodeDecodeError as e:
            at = f"byte 0x{e.object[e.start]:02x} at offset {e.start}"
            if encoding != "utf-8-sig":
                raise InputError(f"not valid {encoding.upper()} text, though it starts with "
                                 f"that encoding's byte-order mark ({at})", path=path) from None
            if strict:
                raise InputError(f"not a UTF-8 text file ({at})", path=path) from None
            text = read("replace", encoding)
            if n < 0:  # said once, when the whole file is read (not when its head is sniffed)
                warnings.warn(InputWarning(
                    f"{path}: not UTF-8 ({at}, e.g. a Latin-1 or Windows encoding): "
                    f"{text.count(chr(0xFFFD))} character(s) read as \ufffd"), stacklevel=2)
            return text
    except (OSError, EOFError) as e:  # gzip: BadGzipFile (an OSError), EOFError when cut short
        raise InputError(f"cannot read: {getattr(e, 'strerror', None) or e}", path=path) from None


# the largest catalog file has 23,073; a user's file 40x that is no GPU description
MAX_YAML_CHARS = 1_000_000
# a GPU file nests 3 deep, a model or kernel file 5; libyaml's composer recurses in C, and a
# text of 30,000 '[' crashed Python (a segmentation fault), 1,000 a RecursionError in messages
MAX_YAML_DEPTH = 50


def _depth_bound(text: str) -> int:
    """An upper bound of how deep ``text`` nests, without parsing it: a flow collection opens
    with '[' or '{', and a block collection is indented further, or follows '- ' or '? ' on its
    parent's line."""
    block = max((len(ln) - len(ln.lstrip(" \t-?:")) for ln in text.splitlines()), default=0)
    return text.count("[") + text.count("{") + 2 * block + 2


def _loader():
    """The safe loader (libyaml's where PyYAML has it) with one more check: a key given twice
    in a mapping is an error, where YAML keeps the last silently (a second ``id`` renamed a
    GPU, a second peak replaced the first)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class Loader(base):
        def construct_mapping(self, node, deep=False):
            seen = set()
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if not isinstance(key, (str, int, float, bool)):
                    continue  # an unhashable key: the base class says what is wrong
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key '{key}' given twice", key_node.start_mark)
                seen.add(key)
            return super().construct_mapping(node, deep=deep)

    return Loader


def parse_yaml(text: str, path):
    """The data of a YAML text read from ``path``, with the safe loader only (plain data, no
    Python objects). libyaml's loader, where PyYAML was built with it, reads the same data 8x
    faster than the pure-Python one (0.07 s against 0.6 s for the 71 catalog files, most of a
    ``gpuproj predict``). Bad YAML is an ``InputError`` naming the file and line; so are a key
    given twice, an alias (``*name``: nested aliases expand to billions of values, which took
    12 GB to print), a text over ``MAX_YAML_CHARS``, collections nested over ``MAX_YAML_DEPTH``
    deep and an integer over Python's 4,300 digits."""
    import yaml

    if len(text) > MAX_YAML_CHARS:
        raise InputError(f"{len(text)} characters: over the {MAX_YAML_CHARS} a GPU, model or "
                         "kernel file can need", path=path)
    loader_class = _loader()
    loader = loader_class(text)
    try:
        # anchors: aliases to them could expand to billions of values; deep nesting: see
        # MAX_YAML_DEPTH (the events come from libyaml's parser, which does not recurse)
        if "&" in text or _depth_bound(text) > MAX_YAML_DEPTH:
            depth = 0
            for event in yaml.parse(text, Loader=loader_class):
                if isinstance(event, yaml.AliasEvent):
                    raise yaml.constructor.ConstructorError(
                        None, None, f"an alias (*{event.anchor}): gpuproj's files write each "
                        "value out", event.start_mark)
                if isinstance(event, yaml.CollectionStartEvent):
                    depth += 1
                    if depth > MAX_YAML_DEPTH:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"lists and mappings nested over {MAX_YAML_DEPTH} "
                            "deep", event.start_mark)
                elif isinstance(event, yaml.CollectionEndEvent):
                    depth -= 1
        return loader.get_single_data()
    except ValueError as e:  # int() of over 4,300 digits, which no GPU or model file holds
        raise InputError(f"not valid YAML: {str(e).split(';')[0]}", path=path) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        # a ReaderError (bytes that are no text) has no problem, and its text two lines
        why = str(getattr(e, "problem", None) or e).splitlines()[0]
        raise InputError(f"not valid YAML: {why}", path=path,
                         row=mark.line + 1 if mark else None) from None
    finally:
        loader.dispose()


def parse_json(text, path, what: str = "JSON"):
    """``text`` (str or bytes) parsed as JSON; bad JSON is an ``InputError`` naming ``path``
    (and the line where the decoder says), and so are JSON nested so deep that the decoder,
    which recurses once a level, runs out of stack ('[' x 100,000) and an integer over Python's
    4,300 digits. ``what`` names the kind of file in the message ("nvdisasm JSON")."""
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise InputError(f"not valid {what}: {e.msg}", path=path, row=e.lineno) from None
    except UnicodeDecodeError as e:
        raise InputError(f"not valid {what}: {e.reason}", path=path) from None
    except (RecursionError, ValueError) as e:
        why = "nested too deep" if isinstance(e, RecursionError) else str(e).split(";")[0]
        raise InputError(f"not valid {what}: {why}", path=path) from None


@contextmanager
def writing(path):
    """Around the writing of an output file: its folder is made if needed, and an ``OSError``
    (a folder that cannot be made, no permission, a full disk) is an ``InputError`` naming
    the file."""
    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise InputError("cannot write: a file stands where its folder would be",
                         path=path) from None
    except OSError as e:
        raise InputError(f"cannot make its folder: {e.strerror or e}", path=path) from None
    try:
        yield path
    except OSError as e:
        raise InputError(f"cannot write: {e.strerror or e}", path=path) from None


def write_text(path, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` within ``writing``."""
    with writing(path) as p:
        p.write_text(text, encoding="utf-8")
    return p
