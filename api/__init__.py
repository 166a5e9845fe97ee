"""The REST API (``/api/v1/``): DRF views over ``designer.services`` and ``designer.selectors``.

Nothing here owns business rules: views parse and validate input (serializers), call one service
or selector, and render. See ``docs/API.md``-style notes in each module's docstring.
"""
