"""Case files: reading and writing them, with one clear error for every mistake in them.

`load_cases` reads a file of `EvalCase`s; the format comes from the extension:

- **YAML** (`.yaml`, `.yml`) and **JSON** (`.json`): a list of cases, or a mapping whose only
  key is `cases:`, holding that list. In YAML the text fields `id`, `input`, `expected_output`
  and `context` are read as written: `expected_output: 1.50` is the text "1.50", not the number
  1.5, and `input: yes` is the text "yes".
- **JSONL** (`.jsonl`): one JSON object (one case) per line; blank lines are skipped.
- **CSV** (`.csv`, comma-separated, UTF-8): a header row, then one row per case; blank rows are
  skipped. The columns are

  - text: `id`, `input`, `expected_output`, `context`;
  - a whole number: `max_tool_calls`;
  - lists: `expected_tools` (or its other name `expected_tool_calls`), `expected_trajectory`
    (tool names, or a JSON array of `{"name": ..., "arguments": {...}}` objects),
    `relevant_docs`, `must_not_contain`, `keywords`, `tags`, `rubrics`. A list cell is either a
    JSON array (`["a", "b"]`) or items separated by `|` (`a|b`); each item is stripped of
    surrounding spaces;
  - `metadata.<key>`: one column per metadata key; the cell's text becomes `metadata[<key>]`;
  - a JSON object: `tool_mocks`, `initial_state`, `expected_state`; true or false:
    `tool_mocks_only`;
  - a simulated user (`user_simulation`): `user_goal`, `user_persona`,
    `user_starting_prompt`, `user_max_turns`, `user_script`; a mistake in them is named by
    its column.

  An empty cell leaves its field unset. Cases with a `conversation` or an `agent_trace` need a
  YAML, JSON or JSONL file.
- **Google ADK** eval sets and test files (`*.evalset.json`, `*.test.json`, or a `.json` file
  holding ADK's shape): read as ADK writes them (`read_adk`; the mapping is documented in
  `agenteval.evalset.adk`).

Every mistake raises one `DatasetError` naming the file, the line, the case (its `id` when the
file gives one, else its 1-based position, as in "case 3"), the field (a dotted path such as
`agent_trace.0.tool_calls.1.arguments`, whose list positions count from 0 as in the file's
data), what is wrong and, as a hint, how to fix it. Only the first mistake in the file is
reported. For example::

    cases.yaml:14, case 'refund-policy', field 'expeted_output': unknown field — did you mean 'expected_output'?
      hint: rename 'expeted_output' to 'expected_output'

A scripted user's reference (`user_simulation: {script: users.py:refund_user}`) is relative to
the case file's folder: reading the file resolves it (`scripts`), and a run loads each script
before its first trial (`script_check`), a script that does not load named by file, line and
case.

`dump_cases` writes cases back as YAML, JSON or JSONL, so that reading the file gives the same
cases again; `case_file_schema` is the JSON Schema of a case file.

The modules, lowest first: `positions` (where things are: lines, keys given twice), `source`
(the file's text), `jsontext` (JSON parsed, explained, mapped to lines), `fields` (a case's
field names and what they mean), `records` (cases as read), `scripts` (a scripted user's
reference resolved), `explain` and `validation` (from records to `EvalCase`s); one reader a
format, `read_yaml`, `read_json`, `read_jsonl`, `read_csv` and `read_adk` (with `adk_keys`,
`adk_walk`, `adk_turns`, `adk_legacy`, `adk_evalset`); `streaming` (a JSONL or CSV file
checked whole, then read a case at a time: how a run reads one, `loading.open_cases`);
`loading` (the one entry point), `script_check` (scripts loaded before a run), `writing`
(`dump_cases`), `write_adk` (ADK's JSON) and `schema`.
"""

from agenteval.casefiles.loading import load_cases
from agenteval.casefiles.schema import case_file_schema
from agenteval.casefiles.writing import dump_cases

__all__ = ["case_file_schema", "dump_cases", "load_cases"]
