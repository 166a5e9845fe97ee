"""Parse untrusted XML (NCCL topology dumps, hwloc exports) with bounded time and memory.

Uploaded XML is hostile until proven otherwise. The checks run in this order, each one cheap
enough to answer a 100 MB upload in bounded time without building a tree:

1. **Size**: more than :data:`MAX_XML_BYTES` characters is refused before anything else looks at
   the text (a real NCCL dump is a few kB, a big machine's hwloc export a few MB).
2. **DTD**: an internal DTD subset (``<!DOCTYPE x [ ... ]>``) or any ``<!ENTITY`` declaration is
   refused: that is where billion-laughs and external-entity attacks live. A bare external
   DOCTYPE line is allowed because ``lstopo`` writes one (``<!DOCTYPE topology SYSTEM
   "hwloc2.dtd">``); it is never fetched (expat does not read external DTDs here).
3. **Nesting depth**: a scan of the tags (no tree) refuses nesting deeper than
   :data:`MAX_XML_DEPTH`, so a pathological ``<a><a><a>…`` cannot exhaust the stack. The scan
   (:func:`_tags`) finds each tag's end with ``str.find``: linear in the text. (It was one
   unanchored pattern whose ``<!--.*?-->`` and ``<a[^>]*>`` re-scanned to the end of the text
   from every unclosed ``<!--`` or ``<a``: 32 kB of ``<!--`` took 2.6 s, 16 MiB would take days.)
4. **Parse** with ``defusedxml`` (entities and external references forbidden a second time).
   Garbage input becomes an :class:`ImportFormatError` located by line and column.
"""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import defusedxml
import defusedxml.ElementTree as DET

from designer.engine.errors import ImportFormatError, LimitExceeded, Problem

__all__ = ["MAX_XML_BYTES", "MAX_XML_DEPTH", "MAX_XML_ELEMENTS", "XmlLimitExceeded", "parse_xml",
           "check_limits"]

#: Largest XML text accepted, in characters (16 MiB).
MAX_XML_BYTES = 16 * 1024 * 1024
#: Deepest element nesting accepted (hwloc: Machine > Package > … > PU plus nested bridges ≈ 15).
MAX_XML_DEPTH = 64
#: Most elements accepted in one document.
MAX_XML_ELEMENTS = 200_000

# Markup that holds other text until its own terminator: comment, CDATA section, processing instruction.
_SKIPPED = (("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>"))
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_:")
_DOCTYPE = re.compile(r"<!DOCTYPE", re.I)
_ENTITY = re.compile(r"<!ENTITY", re.I)
_DECLARATION = re.compile(r"^\ufeff?\s*<\?xml[^>]*\?>")


class XmlLimitExceeded(ImportFormatError, LimitExceeded):
    """An XML input over a documented limit (size, depth, element count).

    Catchable as either :class:`ImportFormatError` (it is a refused import) or
    :class:`LimitExceeded` (it is a limit); its code is ``limit_exceeded``.
    """

    code = "limit_exceeded"


def _line_col(text: str, offset: int) -> str:
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return f"line {line}, column {col}"


def check_limits(text: str, *, max_chars: int = MAX_XML_BYTES, max_depth: int = MAX_XML_DEPTH,
                 max_elements: int = MAX_XML_ELEMENTS) -> None:
    """Refuse oversized, DTD-carrying or too deeply nested XML without parsing it.

    Parameters
    ----------
    text : str
        The XML text.
    max_chars, max_depth, max_elements : int
        Limits (characters, element nesting levels, elements).

    Raises
    ------
    XmlLimitExceeded
        Size, depth or element count over the limit.
    ImportFormatError
        An internal DTD subset or an entity declaration is present.
    """
    if len(text) > max_chars:
        raise XmlLimitExceeded(
            f"XML input is {len(text)} characters, over the limit of {max_chars} "
            f"({max_chars // (1024 * 1024)} MiB)")
    subset, entity = _dtd_subset_at(text), _ENTITY.search(text)
    for found, what in ((subset, "an internal DTD subset"), (entity and entity.start(), "an entity declaration")):
        if found is not None:
            raise ImportFormatError(
                f"XML with {what} is refused (entity expansion and external entities are not "
                "allowed in uploaded files)",
                [Problem(_line_col(text, found), f"{what} is not allowed")])
    depth = elements = 0
    for kind, start in _tags(text):
        if kind == "open":
            depth += 1
            elements += 1
            if depth > max_depth:
                raise XmlLimitExceeded(
                    f"XML nesting is deeper than {max_depth} levels",
                    [Problem(_line_col(text, start), f"element nested deeper than {max_depth}")])
        elif kind == "close":
            depth -= 1
        elif kind == "empty":
            elements += 1
        if elements > max_elements:
            raise XmlLimitExceeded(f"XML has more than {max_elements} elements")


def _dtd_subset_at(text: str) -> int | None:
    """Offset of the first ``<!DOCTYPE`` whose next ``>`` or ``[`` is a ``[`` (an internal
    subset), else None. The next ``>`` and ``[`` are found once and reused by every later
    ``<!DOCTYPE`` before them, so many ``<!DOCTYPE`` cost one pass."""
    gt = bracket = -1
    for doctype in _DOCTYPE.finditer(text):
        at = doctype.end()
        if gt < at:
            gt = _find_or_end(text, ">", at)
        if bracket < at:
            bracket = _find_or_end(text, "[", at)
        if bracket < gt:
            return doctype.start()
    return None


def _find_or_end(text: str, needle: str, start: int) -> int:
    found = text.find(needle, start)
    return len(text) if found < 0 else found


def _tags(text: str):
    """Yield ``(kind, offset)`` for each tag: ``open``, ``close``, ``empty`` or ``decl``.

    Comments, CDATA sections and processing instructions are skipped whole. Each tag's end is
    found with ``str.find`` from its start and the scan goes on after it, so the whole scan reads
    the text about once. A construct left unterminated ends the scan: no later text can close
    it, and the XML parser refuses the file there anyway (nothing after it is ever nested).
    """
    at = text.find("<")
    while at >= 0:
        kind, end = _tag_at(text, at)
        if end < 0:
            return
        if kind is not None:
            yield kind, at
        at = text.find("<", max(end, at + 1))


def _tag_at(text: str, at: int) -> tuple[str | None, int]:
    """The kind of markup at ``text[at] == "<"`` and where it ends (-1: never terminated; kind
    None with an end: not markup, or skipped markup)."""
    for opener, closer in _SKIPPED:
        if text.startswith(opener, at):
            end = text.find(closer, at + len(opener))
            return None, end if end < 0 else end + len(closer)
    after = text[at + 1:at + 3]
    if after[:1] == "!":
        kind = "decl" if after[1:] and after[1] in _NAME_START and after[1] not in "_:" else None
    elif after[:1] == "/":
        kind = "close"
    else:
        kind = "open" if after[:1] in _NAME_START and after[:1] else None
    if kind is None:
        return None, at + 1
    end = text.find(">", at + 1)
    if end >= 0 and kind == "open" and end - 1 >= at + 2 and text[end - 1] == "/":
        kind = "empty"
    return kind, end if end < 0 else end + 1


def parse_xml(text: str | bytes, *, what: str = "XML") -> ET.Element:
    """Check the limits, then parse ``text`` safely and return the root element.

    Parameters
    ----------
    text : str or bytes
        The untrusted XML (bytes are decoded as UTF-8).
    what : str
        Name of the format, for error messages ("NCCL topology XML").

    Returns
    -------
    xml.etree.ElementTree.Element

    Raises
    ------
    ImportFormatError
        Not well-formed XML (located by line and column), forbidden DTD/entity constructs.
    XmlLimitExceeded
        Over :data:`MAX_XML_BYTES`, :data:`MAX_XML_DEPTH` or :data:`MAX_XML_ELEMENTS`.
    """
    if isinstance(text, (bytes, bytearray)):
        if len(text) > MAX_XML_BYTES:  # refuse before decoding a huge blob
            raise XmlLimitExceeded(
                f"XML input is {len(text)} bytes, over the limit of {MAX_XML_BYTES} "
                f"({MAX_XML_BYTES // (1024 * 1024)} MiB)")
        try:
            text = bytes(text).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ImportFormatError(f"{what} is not UTF-8 text: byte {exc.start} is invalid") from None
    # The text is already decoded: blank out an XML declaration naming another encoding (same
    # length, so reported columns stay right).
    text = _DECLARATION.sub(lambda m: " " * len(m.group(0)), text, count=1)
    check_limits(text)
    try:
        return DET.fromstring(text, forbid_dtd=False, forbid_entities=True, forbid_external=True)
    except ET.ParseError as exc:
        line, col = getattr(exc, "position", (0, 0))
        message = str(exc).split(":")[0]
        raise ImportFormatError(f"{what} is not well-formed: {message}",
                                [Problem(f"line {line}, column {col + 1}", message)]) from None
    except defusedxml.DefusedXmlException as exc:
        raise ImportFormatError(f"{what} refused: {exc}") from None
