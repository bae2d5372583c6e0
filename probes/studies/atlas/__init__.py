"""The regression atlas: every reported LangGraph resume behaviour as a cell, on every release.

``bugs.py`` is the table (one row per reported behaviour), ``cells.py`` the cells (one
function per row; it runs inside the per-release side environment and imports only
that LangGraph and ``probes.core``), ``envs.py`` the release -> side environment map,
``decide.py`` the one place a cell's observations become a verdict (through
``probes.core.checker``), ``table.py`` the bug x version table and figure.

Nothing here imports a framework at module level.
"""

# Frameworks this study imports (top-level import names; "*" is every one), each with why (probes.layers).
ALSO_IMPORTS = {'*': "each reported bug is reproduced on its framework's release, in that release's side environment"}
