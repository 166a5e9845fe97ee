"""The embedded default's database backend: Django's SQLite backend with a bounded debug log.

Modules:

- ``base``: ``DatabaseWrapper``, Django's SQLite wrapper whose debug query log shortens long
  parameters.
"""
