"""The command-line interface: thin wrappers that parse arguments, call the library, print."""
