"""The ground the ADK readers walk on: `AdkWalker`, which reads one mapping, list or text of ADK
data at a time and raises one `DatasetError` (file, line, case, field, hint) per mistake, and
`AdkEvalSet`, what reading an ADK file gives."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from agenteval.case import EvalCase
from agenteval.casefiles.adk_keys import AGENTEVAL_KEY, camel, unknown_key
from agenteval.casefiles.positions import Loc, dotted
from agenteval.errors import DatasetError
from agenteval.jsonsafe import MAX_DEPTH, model_json
from agenteval.mock_errors import explain_mock, written_path
from agenteval.tool_mocks import MOCK_FIXES

__all__ = ["AdkEvalSet", "AdkWalker", "adk_metadata", "describe_json"]


@dataclass
class AdkEvalSet:
    """An ADK eval set as read: its id, name, description and cases (`EvalSet`'s fields)."""

    id: str
    name: str | None = None
    description: str | None = None
    cases: list[EvalCase] = field(default_factory=list)


@dataclass
class AdkWalker:
    """Walks ADK data, raising one `DatasetError` (file, line, case, field, hint) per mistake."""

    file: str
    line_of: Callable[[Loc], int | None]
    stem: str

    # --- errors and access

    def error(
        self,
        message: str,
        loc: Loc,
        *,
        case: str | int | None = None,
        hint: str | None = None,
    ) -> DatasetError:
        return DatasetError(
            message,
            file=self.file,
            line=self.line_of(loc),
            case=case,
            field=dotted(loc) if loc else None,
            hint=hint,
        )

    def known(
        self, mapping: Mapping[str, Any], loc: Loc, what: str, case: str | int | None
    ) -> None:
        """Refuse a key ADK's model for `what` does not take (see `adk_keys`): read silently, a
        misspelt key drops an expectation."""
        found = unknown_key(mapping, what)
        if found is None:
            return
        other = _OTHER_FORMAT.get((what, found.key))
        if other is not None:
            hint = other
        elif found.meant is not None:
            hint = f"did you mean {found.meant!r}?"
        else:
            hint = f"{what} takes: " + ", ".join(found.known)
        raise self.error(
            f"unknown key {found.key!r} in {what}", (*loc, found.key), case=case, hint=hint
        )

    @staticmethod
    def key(mapping: Mapping[str, Any], name: str) -> str | None:
        """The key under which `mapping` gives the field `name` (snake_case or camelCase)."""
        if name in mapping:
            return name
        alias = camel(name)
        if alias in mapping:
            return alias
        return None

    def get(self, mapping: Mapping[str, Any], name: str) -> tuple[Any, str]:
        key = self.key(mapping, name)
        return (mapping[key], key) if key is not None else (None, name)

    def mapping(
        self, value: Any, loc: Loc, what: str, case: str | int | None, hint: str
    ) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.error(
                f"{what} should be a JSON object, got {describe_json(value)}",
                loc,
                case=case,
                hint=hint,
            )
        return value

    def checked(
        self, value: Any, loc: Loc, what: str, level: str, case: str | int | None, hint: str
    ) -> dict[str, Any]:
        """`value` as a JSON object (`what` in messages) holding only keys ADK's `level` takes."""
        mapping = self.mapping(value, loc, what, case, hint)
        self.known(mapping, loc, level, case)
        return mapping

    def items(self, value: Any, loc: Loc, what: str, case: str | int | None) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            raise self.error(
                f"{what} should be a list, got {describe_json(value)}",
                loc,
                case=case,
                hint=f"write {what} as a JSON array [ ... ]",
            )
        return value

    def entries(
        self,
        mapping: Mapping[str, Any],
        loc: Loc,
        key: str,
        what: str,
        level: str,
        case: str | int | None,
        hint: str,
    ) -> Iterator[tuple[Loc, dict[str, Any]]]:
        """Each item of the list under `key` of `mapping` (at `loc`), with its place: a JSON
        object (`what` in messages) holding only keys ADK's `level` takes."""
        for index, item in enumerate(self.items(mapping.get(key), (*loc, key), key, case)):
            where = (*loc, key, index)
            yield where, self.checked(item, where, what, level, case, hint)

    def text(self, value: Any, loc: Loc, what: str, case: str | int | None) -> str:
        if not isinstance(value, str):
            raise self.error(
                f"{what} should be text, got {describe_json(value)}",
                loc,
                case=case,
                hint=f"write {what} as a JSON string",
            )
        return value

    def mock_error(
        self, mocks: Any, exc: ValidationError, loc: Loc, label: str | int
    ) -> DatasetError:
        """A mistake in the `tool_mocks` agenteval keeps under an eval case's `agenteval`
        key, said as in any case file, at its line."""
        errors = exc.errors(include_url=False)
        path = written_path(errors[0]["loc"][1:], mocks)
        said = explain_mock(path, [e for e in errors if e["loc"] == errors[0]["loc"]], mocks)
        message, hint = said or (f"not a valid mock: {errors[0]['msg']}", MOCK_FIXES["mock_shape"])
        return DatasetError(
            message,
            file=self.file,
            line=self.line_of((*loc, AGENTEVAL_KEY, "case", "tool_mocks", *path)),
            case=label,
            field=dotted(("tool_mocks", *path)),
            hint=hint,
        )

    def validated(self, fields: dict[str, Any], loc: Loc, label: str | int) -> EvalCase:
        try:
            case = EvalCase(**fields)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = tuple(problem["loc"])
            if where[:1] == ("tool_mocks",):  # kept under the case's `agenteval` key
                raise self.mock_error(fields["tool_mocks"], exc, loc, label) from exc
            raise self.error(
                f"not a valid case: {problem['msg']}",
                loc,
                case=label,
                hint=f"check {dotted(where)}" if where else None,
            ) from exc
        # As for every case file: a case past `MAX_DEPTH` levels would be stored cut, and an
        # expected value cut short can compare equal to a wrong one when the run is rescored.
        # The usual case is told in a few C calls (`jsonsafe`'s look before pydantic writes).
        cuts = model_json(case).cuts
        if cuts:
            field, _, _ = cuts[0].rpartition(": ")
            raise DatasetError(
                f"nested more than {MAX_DEPTH} levels deep",
                file=self.file,
                line=self.line_of(loc),
                case=label,
                field=field or None,
                hint=f"flatten the data: a case keeps at most {MAX_DEPTH} levels "
                "(the case is level 1)",
            )
        return case

    def session_input(self, data: Any, loc: Loc, label: str | int) -> dict[str, Any]:
        session = self.checked(
            data,
            loc,
            "session_input",
            "session_input",
            label,
            'write {"app_name": ..., "user_id": ..., "state": {...}}',
        )
        result: dict[str, Any] = {}
        for name in ("app_name", "user_id", "session_id"):
            value, key = self.get(session, name)
            if value is not None:
                result[name] = self.text(value, (*loc, key), name, label)
        state, state_key = self.get(session, "state")
        result["state"] = (
            self.mapping(
                state, (*loc, state_key), "state", label, "write the session state as a JSON object"
            )
            if state is not None
            else {}
        )
        known = {k for n in ("app_name", "user_id", "session_id", "state") for k in (n, camel(n))}
        result.update({k: v for k, v in session.items() if k not in known})
        return result


# Keys of one ADK format written in the other: the fix is a different place, not a spelling.
_OTHER_FORMAT = {
    ("an invocation", "expected_tool_use"): "expected_tool_use belongs to ADK's legacy test "
    'format; in an eval set write the expected calls as "intermediate_data": {"tool_uses": '
    '[{"name": ..., "args": {...}}]} (an empty list expects no call)',
    ("an invocation", "reference"): "reference belongs to ADK's legacy test format; in an eval "
    'set write the expected answer as "final_response": {"parts": [{"text": "..."}]}',
    ("an invocation", "query"): "query belongs to ADK's legacy test format; in an eval set "
    'write the user\'s turn as "user_content": {"parts": [{"text": "..."}]}',
}


def adk_metadata(ids: list[str], intermediate: list[list[dict[str, str]]]) -> dict[str, Any]:
    """`EvalCase.metadata[ADK_METADATA]`: the invocation ids and intermediate responses given."""
    adk: dict[str, Any] = {}
    if any(ids):
        adk["invocation_ids"] = ids
    if any(intermediate):
        adk["intermediate_responses"] = intermediate
    return adk


def describe_json(value: Any) -> str:
    """A JSON value as an ADK message shows it: its kind and, when short, itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    if isinstance(value, int | float):
        return f"the number {value}"
    return type(value).__name__
