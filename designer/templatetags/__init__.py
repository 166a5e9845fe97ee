"""Template filters of the designer app (``{% load fabricscope_numbers %}``)."""
