"""gunicorn's logger with secrets redacted: ``--logger-class designer.ops.gunicorn_logging.RedactingLogger``.

gunicorn writes its access log (when ``--access-logfile`` is given) and its error log with its own
handlers, outside ``settings.LOGGING``: its request line holds the path and query string
(``GET /s/<token>/hosts/?share=<token>``) and an access format may print request headers
(``%({authorization}i)s``). This class puts :class:`designer.ops.logs.RedactSecretsFilter` on
every handler gunicorn sets up, on start and on each configuration reload.
"""
from __future__ import annotations

from gunicorn.glogging import Logger

from designer.ops.logs import RedactSecretsFilter

__all__ = ["RedactingLogger"]


class RedactingLogger(Logger):
    def setup(self, cfg) -> None:
        super().setup(cfg)
        for log in (self.error_log, self.access_log):
            for handler in log.handlers:
                if not any(isinstance(f, RedactSecretsFilter) for f in handler.filters):
                    handler.addFilter(RedactSecretsFilter())
