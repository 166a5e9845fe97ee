"""The API's JSON parser: DRF's, with a nesting limit checked before parsing.

``json.loads`` recurses once per nesting level, so a 4 kB body of 1,000 nested ``[`` raised
``RecursionError`` inside DRF's parser — a 500. :class:`BoundedJSONParser` measures the depth
first, without recursion (:func:`designer.params.json_depth_exceeds`), and refuses a deeper body
with a located 400 ``parse_error``. The limit (``FABRICSCOPE_JSON_MAX_DEPTH``, default 128) is far
above any real body (a topology document is 5 levels deep, plus what users put in ``attrs``, which
the engine bounds at 64) and far below Python's recursion limit, so nothing that later walks the
parsed data recursively (serializers, ``json.dumps``, the engine) can hit it either.

JSON exchanged between systems is UTF-8 (RFC 8259 §8.1), and the parser reads the bytes as such
whatever the Content-Type says. So a ``charset`` other than UTF-8 (``charset=bogus``,
``charset=latin-1``) is refused with a 415 naming it, rather than accepted and read as something
the client did not send.
"""
from __future__ import annotations

from django.conf import settings
from django.utils.http import parse_header_parameters
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import JSONParser
from rest_framework.settings import api_settings

from designer.params import JsonTooDeep, json_loads_bounded

__all__ = ["BoundedJSONParser"]


class BoundedJSONParser(JSONParser):
    """``application/json`` bodies, refused with a 400 when nested deeper than the limit."""

    def parse(self, stream, media_type=None, parser_context=None):
        _refuse_other_charsets(media_type)
        raw = stream.read() if stream is not None else b""
        limit = settings.FABRICSCOPE_JSON_MAX_DEPTH
        try:
            return json_loads_bounded(raw, max_depth=limit, strict=api_settings.STRICT_JSON)
        except JsonTooDeep as exc:
            raise ParseError(f"JSON parse error - {exc} (FABRICSCOPE_JSON_MAX_DEPTH)") from None
        except ValueError as exc:  # JSONDecodeError, UnicodeDecodeError
            raise ParseError(f"JSON parse error - {exc}") from None


_UTF8_NAMES = frozenset({"utf-8", "utf8"})


def _refuse_other_charsets(media_type: str | None) -> None:
    """415 when the Content-Type names a charset other than UTF-8 (absent means UTF-8)."""
    if not media_type:
        return
    _, params = parse_header_parameters(media_type)
    charset = params.get("charset")
    if charset is not None and charset.strip().lower() not in _UTF8_NAMES:
        raise UnsupportedMediaType(media_type, detail=(
            f'Content-Type "{media_type}": charset "{charset}" is not supported; JSON bodies are '
            f"UTF-8 (RFC 8259): send charset=utf-8 or no charset"))
