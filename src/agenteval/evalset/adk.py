"""Google ADK eval sets (`*.evalset.json`) and test files (`*.test.json`) as agenteval cases.

Three shapes are read, with snake_case or camelCase keys (`eval_cases` or `evalCases`,
`user_content` or `userContent`, ...):

- **ADK's `EvalSet`** (`eval_set_id`, `name`, `description`, `eval_cases`), the format of
  `*.evalset.json` files and of current `*.test.json` files.
- **The legacy test file**: a list of turns `{query, expected_tool_use: [{tool_name,
  tool_input}], reference}`, one file being one multi-turn case named after the file. Its
  session comes from ADK's initial session file (`{state, app_name, user_id}`).
- **The legacy eval set**: a list of `{name, data: [turns...], initial_session}`.

How ADK's fields land on `EvalCase`:

| ADK | agenteval |
|---|---|
| `eval_set_id`, `name`, `description` | `EvalSet.id`, `.name`, `.description` |
| `eval_cases[].eval_id` | `EvalCase.id` |
| `conversation[]` (one invocation per user turn) | `EvalCase.conversation[]` (`Invocation`) |
| `user_content.parts[].text` | `Invocation.input` (text parts joined by a newline) |
| `final_response.parts[].text` | `Invocation.expected_final_response` |
| `intermediate_data.tool_uses[]` `{name, args, id}` | `Invocation.expected_tool_trajectory[]` (`ToolCall(name, arguments, id)`) |
| `intermediate_data.tool_responses[]` `{id, name, response}` | `.result` of the matching expected `ToolCall` |
| `intermediate_data.invocation_events[]` | tool calls and responses as above, text as intermediate responses |
| `intermediate_data.intermediate_responses[]` `[author, parts]` | `metadata["adk"]["intermediate_responses"]` (per turn) |
| `conversation[].invocation_id` | `metadata["adk"]["invocation_ids"]` (per turn) |
| `conversation[].rubrics[]` | `Invocation.rubrics[]` |
| `eval_cases[].rubrics[]` | `EvalCase.rubrics[]` |
| `rubric_id`, `rubric_content.text_property` | `Rubric.rubric_id`, `Rubric.content` |
| `session_input` `{app_name, user_id, session_id, state}` | `metadata["session_input"]` (same keys) |
| `final_session_state` | `metadata["final_session_state"]` (checked by `final_session_state_match`) |
| legacy `query`, `reference` | `Invocation.input`, `.expected_final_response` |
| legacy `expected_tool_use[]` `{tool_name, tool_input, mock_tool_output}` | `expected_tool_trajectory[]` (`name`, `arguments`, `result`) |
| legacy `expected_intermediate_agent_responses[]` `{author, text}` | `metadata["adk"]["intermediate_responses"]` |
| legacy `initial_session` / session file | `metadata["session_input"]` |

Not carried over: timestamps, `app_details`, rubric `description` and `type`, thought parts.
A `conversation_scenario` (ADK's simulated user) becomes the case's `user_simulation`
(`starting_prompt`, `conversation_plan` → `goal`, `user_persona` → `persona`), with the
`user_simulator_config` of the `test_config.json` beside the file (`casefiles.adk_scenario`). A key ADK's models do not take is refused, naming the key meant (`adk_keys`).

What agenteval writes, google-adk's models accept. ADK keeps an eval case's extra keys and
refuses them below it, so agenteval's own data goes on the case: `tags`, `metadata` (other
metadata keys), and `agenteval` (`AGENTEVAL_KEY`: each turn's `expected_node_order` and rubric
weights, the case rubrics' weights, and the case fields ADK has none for, `CASE_ONLY`:
`expected_tools`, `keywords`, `max_tool_calls`, ...). A tool result that is not a JSON object is written
`{"result": value}`, as ADK's tools return it; a session without `app_name` or `user_id` gets
"" for them, as ADK's converter of legacy sessions does. Files from earlier agenteval versions
(`expected_node_order` on an invocation, `weight` on a rubric) are still read.

This module is the ADK API over `EvalSet`; the reader and the writer are case-file readers like
the others, in `agenteval.casefiles` (`read_adk`, `write_adk`, `adk_keys`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenteval.casefiles.adk_keys import (
    ADK_METADATA,
    AGENTEVAL_KEY,
    CASE_ONLY,
    FINAL_SESSION_STATE,
    SESSION_INPUT,
)
from agenteval.casefiles.read_adk import (
    ADK_SUFFIXES,
    INITIAL_SESSION_FILE,
    adk_from_data,
    has_adk_name,
    has_adk_shape,
    is_adk_file,
    load_adk_cases,
    read_adk,
)
from agenteval.casefiles.read_adk import (
    read_adk_folder as read_adk_set_folder,
)
from agenteval.casefiles.write_adk import adk_json, write_adk
from agenteval.evalset.evalset import EvalSet, eval_set_of

__all__ = [
    "ADK_METADATA",
    "ADK_SUFFIXES",
    "AGENTEVAL_KEY",
    "CASE_ONLY",
    "FINAL_SESSION_STATE",
    "INITIAL_SESSION_FILE",
    "SESSION_INPUT",
    "eval_set_from_adk",
    "eval_set_to_adk",
    "has_adk_name",
    "has_adk_shape",
    "is_adk_file",
    "load_adk_cases",
    "read_adk_file",
    "read_adk_folder",
    "write_adk_file",
]


def read_adk_file(
    path: str | Path,
    *,
    initial_session: Mapping[str, Any] | str | Path | None = None,
) -> EvalSet:
    """Read an ADK eval set or test file (see the module's docstring for the mapping)."""
    return eval_set_of(read_adk(path, initial_session=initial_session))


def read_adk_folder(
    folder: str | Path,
    *,
    initial_session: Mapping[str, Any] | str | Path | None = None,
) -> EvalSet:
    """Every ADK file under `folder` (recursively), as one set named after the folder."""
    return eval_set_of(read_adk_set_folder(folder, initial_session=initial_session))


def eval_set_from_adk(data: Any, *, source: str = "<eval set>") -> EvalSet:
    """An eval set from ADK data already parsed from JSON."""
    return eval_set_of(adk_from_data(data, source=source))


def eval_set_to_adk(eval_set: EvalSet, *, file: str = "<eval set>") -> dict[str, Any]:
    """The set as ADK's `EvalSet` JSON (see `EvalSet.to_adk`)."""
    return adk_json(eval_set, file=file)


def write_adk_file(eval_set: EvalSet, path: str | Path) -> Path:
    """Write the set as an ADK eval set JSON file and return its path."""
    return write_adk(eval_set, path)
