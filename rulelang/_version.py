"""The package version, recorded in every generated module's header."""

__version__ = "0.2.0"
