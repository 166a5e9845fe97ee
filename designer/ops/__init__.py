"""Operations: health and readiness probes, metrics, request ids in logs, broker checks, limits.

Django app ``designer.ops`` (label ``ops``); its ``ready()`` connects the Celery worker signals
(memory limit in pool children, request id in job logs). See docs/RELIABILITY.md.
"""
