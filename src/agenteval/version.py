"""agenteval's version, in a module of its own so any layer can name it (the OTel tracer's scope,
`agenteval --version`) without importing the package root, which imports everything."""

__all__ = ["__version__"]

__version__ = "0.1.0"
