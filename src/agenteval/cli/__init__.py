"""The `agenteval` command line, one module per command group:

- `running`: `run` and `score` (making a run);
- `rescoring`: `rescore` and `judge` (scoring a stored run again);
- `reading`: `runs`, `show` and `report` (reading stored runs);
- `comparing`: `compare` and `gate`;
- `case_files`: `schema`;

over the pieces they share: `common` (consoles, exit codes, warnings and errors), `options`
(the shared options and `with_options`), `settings` (where a command's settings come from),
`output` (what a command writes about a run) and `live` (a run while it runs). `app` puts them
together as the typer app, and `main` is the console script.
"""

from __future__ import annotations

from agenteval.cli.app import app, main
from agenteval.cli.common import INCOMPLETE_EXIT

__all__ = ["INCOMPLETE_EXIT", "app", "main"]
