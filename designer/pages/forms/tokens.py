"""The profile page's API token form: a name, a scope, a lifetime."""
from __future__ import annotations

from django import forms

from designer.choices import TokenScope
from designer.services.tokens import DEFAULT_NAME, token_limits

__all__ = ["ApiTokenForm"]


class ApiTokenForm(forms.Form):
    name = forms.CharField(max_length=100, initial=DEFAULT_NAME,
                           help_text="A token of the same name is replaced.")
    scope = forms.ChoiceField(choices=TokenScope.choices, initial=TokenScope.WRITE,
                              help_text="Read: GET only (dashboards, CI checks).")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        limits = token_limits()  # read per form: the settings may change (tests, env)
        self.fields["days"] = forms.IntegerField(
            min_value=1, max_value=limits["max_days"], initial=limits["days"],
            label="Lifetime (days)", help_text=f"1 to {limits['max_days']} days.")
