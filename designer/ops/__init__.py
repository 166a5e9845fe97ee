"""Operations: health and readiness probes, metrics, request ids in logs, broker checks, limits,
request rate limits (``throttling``: the API's and the result page's figure requests), and the
supervisor of ``manage.py up``'s children (``supervisor``: restarts with back-off), and the
embedded default's database backend (``sqlite3``: Django's, its debug query log bounded).

Django app ``designer.ops`` (label ``ops``); its ``ready()`` connects the Celery worker signals
(memory limit in pool children, request id in job logs). See docs/RELIABILITY.md.
"""
