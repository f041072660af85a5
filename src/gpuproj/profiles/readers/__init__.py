"""One module per input format, each with ``sniff(path, head) -> bool`` and
``read(path, **options) -> ProfileTable``."""
