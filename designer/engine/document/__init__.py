"""The ``fabricscope.topology/1`` document: the JSON a topology is stored, sent and edited as.

Modules
-------
- :mod:`.validator`: load, validate (every problem, located), normalize, dump;
- :mod:`.accept`: the columnar fast path that accepts a well-formed document in one pass;
- :mod:`.patch`: JSON-Patch-like edits applied to a document (the editor's saves).

The public names are re-exported here: ``from designer.engine.document import normalize``.
"""
from designer.engine.document.validator import FORMAT, LIMITS, check, dump, load, normalize, unprintable, validate

__all__ = ["FORMAT", "LIMITS", "load", "validate", "normalize", "dump", "check", "unprintable"]
