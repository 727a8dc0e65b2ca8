"""The package's version, in a module of its own: code inside the package reads it here,
never through the package's ``__init__`` (which imports the metrics on demand)."""

__version__ = "0.1.0"
