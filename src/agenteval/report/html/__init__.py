"""The run as one self-contained HTML page: the summary with charts, a case table that filters
and sorts, every trial's trace, and room for a baseline diff.

The page works offline: its CSS and JavaScript are inlined from the `static/` folder of
`agenteval.report`, and its charts are inline SVG drawn here (no chart library, no CDN).
Everything that comes from agents, tools or datasets reaches the page only through Jinja's
autoescaping, or inside the one JSON block, escaped by `json_for_script`; the JavaScript writes
text with `textContent` only. A Content-Security-Policy allows nothing but the page's own
(nonce-marked) script and inline styles, as a second line of defence.

The modules: `page` (assembling the page from the template, and writing it), `trials` (a row
and a trace per trial), `charts` (the score bars, the latency histogram, the cost bars) and
`diff` (the baseline diff section).
"""

from agenteval.report.html.diff import BaselineDiff, DiffTable, diff_from_comparison
from agenteval.report.html.page import json_for_script, render_html, write_html

__all__ = [
    "BaselineDiff",
    "DiffTable",
    "diff_from_comparison",
    "json_for_script",
    "render_html",
    "write_html",
]
