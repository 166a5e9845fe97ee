"""Hashed API tokens with expiry and scopes (``ApiToken``), and the conversion of the DRF
authtoken keys of earlier versions.

Earlier versions stored one DRF key per user in clear (``authtoken_token``). Each becomes a
``write`` token named ``migrated`` that expires FABRICSCOPE_API_TOKEN_DAYS (default 90) after the
upgrade, stored like every token: its first 12 characters and its SHA-256. The clear rows are
then deleted, so the old clients keep working until that expiry and the database no longer holds
a usable key. ``rest_framework.authtoken`` is no longer installed: its table is read with plain
SQL when it exists (a new installation has none) and left empty. Reversing drops the new table;
the clear keys cannot come back (only their hashes were kept).
"""
import hashlib
from datetime import datetime, timedelta, timezone as dt_timezone

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models
from django.utils.dateparse import parse_datetime

LEGACY_TABLE = "authtoken_token"


def _aware(value, default: datetime) -> datetime:
    if isinstance(value, str):
        value = parse_datetime(value)
    if not isinstance(value, datetime):
        return default
    return value if value.tzinfo else value.replace(tzinfo=dt_timezone.utc)


def _convert_legacy_keys(apps, schema_editor):
    connection = schema_editor.connection
    if LEGACY_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("designer", "ApiToken")
    User = apps.get_model(*settings.AUTH_USER_MODEL.split("."))
    now = django.utils.timezone.now()
    expires = now + timedelta(days=float(getattr(settings, "FABRICSCOPE_API_TOKEN_DAYS", 90)))
    table = connection.ops.quote_name(LEGACY_TABLE)
    with connection.cursor() as cursor:
        cursor.execute(f'SELECT "key", "created", "user_id" FROM {table}')
        rows = cursor.fetchall()
    users = set(User.objects.filter(pk__in=[row[2] for row in rows]).values_list("pk", flat=True))
    ApiToken.objects.bulk_create([
        ApiToken(user_id=user_id, name="migrated", prefix=key[:12],
                 digest=hashlib.sha256(key.encode()).hexdigest(), scope="write",
                 created_at=_aware(created, now), expires_at=expires)
        for key, created, user_id in rows if user_id in users])
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {table}")


class Migration(migrations.Migration):

    dependencies = [
        ('designer', '0004_result_columns'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='ApiToken',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=100)),
                ('prefix', models.CharField(db_index=True, max_length=12)),
                ('digest', models.CharField(max_length=64, unique=True)),
                ('scope', models.CharField(choices=[('read', 'Read'), ('write', 'Read and write')], default='write', max_length=8)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('expires_at', models.DateTimeField()),
                ('last_used_at', models.DateTimeField(blank=True, null=True)),
                ('user', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='api_tokens', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'ordering': ['-created_at', '-pk'],
                'constraints': [models.UniqueConstraint(fields=('user', 'name'), name='api_token_unique_user_name')],
            },
        ),
        migrations.RunPython(_convert_legacy_keys, migrations.RunPython.noop),
    ]
