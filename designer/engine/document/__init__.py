"""The ``fabricscope.topology/1`` document: the JSON a topology is stored, sent and edited as.

Modules
-------
- :mod:`.validator`: load, validate (every problem, located), normalize;
- :mod:`.writer`: the document's JSON text, one item per line (``dump``, streamed by ``write_document``);
- :mod:`.normalizer`: the normalized copy of a valid document (key order, link ids, catalog
  capacities and latencies), from the columns the acceptance read when it could;
- :mod:`.accept`: the columnar fast path that accepts a well-formed document in one pass;
- :mod:`.columnar`: a topology file's raw bytes read straight into those columns (no dict per
  item; the CLI's ``simulate``), or "don't know" and the file is parsed as before;
- :mod:`.rules`: the format name, size limits and value rules both of those check;
- :mod:`.keys`: the fields each level may hold, and the located refusal of any other;
- :mod:`.patch`: JSON-Patch-like edits applied to a document (the editor's saves);
- :mod:`.delta`: a document kept as a base + one cumulative patch, edited reading only what the
  edit touches of the base (revisions saved by patch).

The public names are re-exported here: ``from designer.engine.document import normalize``.
"""
from designer.engine.document.rules import FORMAT, LIMITS, unprintable
from designer.engine.document.validator import check, load, normalize, normalize_handed_over, validate
from designer.engine.document.writer import dump, write_document

__all__ = ["FORMAT", "LIMITS", "load", "validate", "normalize", "normalize_handed_over", "dump", "write_document", "check", "unprintable"]
