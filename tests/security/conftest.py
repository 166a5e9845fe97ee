"""Security tests reuse the sharing world (alice's shared pod, bob's secret topology, links)."""
from tests.sharing.conftest import (  # noqa: F401  (pytest fixtures)
    _fast_passwords, _fresh_cache, _world_rows, api_as, page_as, world)
