"""Forms of the sharing page: grants, read-only links, ownership transfer, fork."""
from __future__ import annotations

from django import forms
from django.core.exceptions import ValidationError

from designer import selectors
from designer.choices import ShareRole

__all__ = ["ShareGrantForm", "ShareLinkForm", "TransferForm", "ForkForm"]


class ShareGrantForm(forms.Form):
    kind = forms.ChoiceField(choices=[("user", "User"), ("group", "Team")], initial="user",
                             label="Share with")
    name = forms.CharField(max_length=150, label="Username or team name")
    role = forms.ChoiceField(choices=ShareRole.choices, initial=ShareRole.VIEWER)

    def grantee(self) -> dict:
        """``{"user": User}`` or ``{"group": Group}``; ValidationError when unknown."""
        name = self.cleaned_data["name"].strip()
        if self.cleaned_data["kind"] == "group":
            group = selectors.group_by_name(name=name)
            if group is None:
                raise ValidationError({"name": f"no team named {name!r}"})
            return {"group": group}
        user = selectors.user_by_username(username=name)
        if user is None:
            raise ValidationError({"name": f"no active user named {name!r}"})
        return {"user": user}


class ShareLinkForm(forms.Form):
    job = forms.IntegerField(required=False, min_value=1, widget=forms.HiddenInput)
    expires_in_days = forms.IntegerField(required=False, min_value=1, max_value=365,
                                         label="Expires after (days)",
                                         help_text="Empty: until revoked.")
    label = forms.CharField(max_length=200, required=False, label="Note (for you)")

    def expires_at(self):
        from datetime import timedelta

        from django.utils import timezone

        days = self.cleaned_data.get("expires_in_days")
        return timezone.now() + timedelta(days=days) if days else None


class TransferForm(forms.Form):
    username = forms.CharField(max_length=150, label="New owner (username)")


class ForkForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
