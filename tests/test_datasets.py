"""Reading and writing case files: each format's happy path, and one clear error per mistake."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import jsonschema
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.python_json import decode_error

from agenteval.case import EvalCase, ExpectedCall
from agenteval.datasets import case_file_schema, dump_cases, load_cases
from agenteval.errors import DatasetError
from agenteval.trace import AgentStep, ToolCall


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def load_error(path: Path) -> DatasetError:
    with pytest.raises(DatasetError) as info:
        load_cases(path)
    return info.value


# ---------------------------------------------------------------------------------------------
# Happy paths


def test_yaml_list_with_agent_trace_trajectory_and_args_alias(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yaml",
        """
        # Cases for the support agent.
        - id: refund-policy
          input: What is the refund policy?
          expected_output: 30 days
          expected_tool_calls: [search_docs]
          expected_trajectory:
            - search_docs
            - name: fetch_page
              args: {url: /refunds}
          max_tool_calls: 3
          tags: [policy]
        - input: Summarise the ticket
          agent_trace:
            - thought: look it up
              tool_calls:
                - name: get_ticket
                  args: {id: 42}
              output: The customer wants a refund.
        """,
    )
    refund, summary = load_cases(path)

    assert refund.id == "refund-policy"
    assert refund.expected_tools == ["search_docs"]
    assert refund.expected_trajectory == [
        ExpectedCall(name="search_docs"),
        ExpectedCall(name="fetch_page", arguments={"url": "/refunds"}),
    ]
    assert refund.max_tool_calls == 3
    assert summary.agent_trace is not None
    assert summary.agent_trace[0].tool_calls[0].arguments == {"id": 42}
    assert summary.id.startswith("case-")


def test_yaml_mapping_with_a_cases_list(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yml",
        """
        cases:
          - input: What is 2 + 2?
            expected_output: 4
        """,
    )
    [case] = load_cases(path)
    assert case.expected_output == "4"


def test_yaml_text_fields_are_read_as_written(tmp_path: Path) -> None:
    # Plain YAML would read these as the number 7, the number 1.5, a date and `True`.
    path = write(
        tmp_path,
        "cases.yaml",
        """
        - id: 007
          input: 2024-01-01
          expected_output: 1.50
          context: yes
        """,
    )
    [case] = load_cases(path)
    assert (case.id, case.input, case.expected_output, case.context) == (
        "007",
        "2024-01-01",
        "1.50",
        "yes",
    )


def test_yaml_anchors_and_merge_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yaml",
        """
        - &base
          input: first
          tags: [smoke]
        - <<: *base
          input: second
        """,
    )
    first, second = load_cases(path)
    assert first.input == "first"
    assert second.input == "second"
    assert second.tags == ["smoke"]


def test_json_list_and_cases_mapping(tmp_path: Path) -> None:
    listed = write(tmp_path, "list.json", '[{"id": "a", "input": "hi", "keywords": "hello"}]')
    mapped = write(tmp_path, "mapped.json", '{"cases": [{"id": "a", "input": "hi"}]}')

    [case] = load_cases(listed)
    assert case.keywords == ["hello"]
    assert [c.id for c in load_cases(mapped)] == ["a"]


def test_jsonl_reads_one_case_per_line_and_skips_blank_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.jsonl",
        """
        {"id": "a", "input": "first"}

        {"id": "b", "input": "second", "conversation": [{"user_content": "hi"}]}
        """,
    )
    first, second = load_cases(path)
    assert (first.id, second.id) == ("a", "b")
    assert second.turns == ["hi"]


def test_csv_with_list_number_and_metadata_columns(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.csv",
        """
        id,input,expected_output,expected_tool_calls,expected_trajectory,max_tool_calls,tags,metadata.difficulty,metadata.owner
        refund,What is the refund policy?,30 days,search|fetch,"[""search"", {""name"": ""fetch"", ""args"": {""page"": 2}}]",3,"[""policy"", ""smoke""]",easy,
        ,"Hello,
        world",,,,,,,support
        """,
    )
    refund, hello = load_cases(path)

    assert refund.expected_tools == ["search", "fetch"]
    assert refund.expected_trajectory == [
        ExpectedCall(name="search"),
        ExpectedCall(name="fetch", arguments={"page": 2}),
    ]
    assert refund.max_tool_calls == 3
    assert refund.tags == ["policy", "smoke"]
    assert refund.metadata == {"difficulty": "easy"}
    # Empty cells leave their fields unset; a quoted cell may span lines.
    assert hello.input == "Hello,\nworld"
    assert hello.expected_tools is None
    assert hello.max_tool_calls is None
    assert hello.metadata == {"owner": "support"}


def test_csv_written_by_a_spreadsheet_with_bom_and_empty_trailing_columns(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_bytes("id,input,,\r\na,hi,,\r\n,,,\r\n".encode("utf-8-sig"))
    assert [case.id for case in load_cases(path)] == ["a"]


def test_loading_the_same_file_twice_gives_the_same_ids(tmp_path: Path) -> None:
    path = write(tmp_path, "cases.yaml", "- input: one\n- input: two\n  tags: [x]\n")
    json_path = write(tmp_path, "cases.json", '[{"input": "one"}, {"input": "two", "tags": ["x"]}]')

    ids = [case.id for case in load_cases(path)]
    assert ids == [case.id for case in load_cases(path)]
    assert ids == [case.id for case in load_cases(json_path)]
    assert len(set(ids)) == 2


# ---------------------------------------------------------------------------------------------
# Writing


def rich_cases() -> list[EvalCase]:
    return [
        EvalCase(
            id="refund",
            input="What is the refund policy?\nAnswer briefly.",
            expected_output="30 days",
            expected_tools=["search"],
            expected_trajectory=[ExpectedCall(name="search", arguments={"q": "refund"})],
            max_tool_calls=2,
            rubrics=["Mentions the 30-day window"],
            metadata={"difficulty": "easy", "weight": 1.5},
            tags=["policy"],
        ),
        EvalCase(
            input="Summarise the ticket",
            agent_trace=[
                AgentStep(tool_calls=[ToolCall(name="get_ticket", arguments={"id": 7})]),
            ],
        ),
        EvalCase(conversation=[{"input": "hi"}, {"input": "bye"}]),
    ]


@pytest.mark.parametrize("name", ["cases.yaml", "cases.yml", "cases.json", "cases.jsonl"])
def test_dump_then_load_gives_the_same_cases(tmp_path: Path, name: str) -> None:
    cases = rich_cases()
    assert load_cases(dump_cases(cases, tmp_path / name)) == cases


def test_dump_omits_defaults_and_derived_ids(tmp_path: Path) -> None:
    path = dump_cases(rich_cases(), tmp_path / "out" / "cases.yaml")
    written = yaml.safe_load(path.read_text(encoding="utf-8"))

    assert written[0]["id"] == "refund"
    assert "id" not in written[1]  # derived from the content; reading derives it again
    assert "tags" not in written[1]
    assert "input: |" in path.read_text(encoding="utf-8")  # multi-line text as a block


def test_dump_refuses_an_unsupported_extension(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as info:
        dump_cases(rich_cases(), tmp_path / "cases.csv")
    assert "cannot write '.csv' files" in str(info.value)
    assert ".yaml, .yml, .json or .jsonl" in str(info.value)


text = st.text(st.characters(codec="utf-8"), max_size=30)
names = st.text("abcdefghij_", min_size=1, max_size=8)
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
simple_cases = st.builds(
    EvalCase,
    id=st.one_of(st.just(""), names),
    input=text,
    expected_output=st.none() | text,
    expected_tools=st.none() | st.lists(names, max_size=3),
    expected_trajectory=st.none()
    | st.lists(
        st.builds(ExpectedCall, name=names, arguments=st.dictionaries(names, scalars, max_size=2)),
        max_size=3,
    ),
    max_tool_calls=st.none() | st.integers(min_value=0, max_value=1000),
    keywords=st.none() | st.lists(text, max_size=3),
    context=st.none() | text,
    metadata=st.dictionaries(names, scalars, max_size=3),
    tags=st.lists(names, max_size=3),
)


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cases=st.lists(simple_cases, min_size=1, max_size=4, unique_by=lambda case: case.id))
@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_any_simple_cases_round_trip(tmp_path: Path, suffix: str, cases: list[EvalCase]) -> None:
    assert load_cases(dump_cases(cases, tmp_path / f"cases{suffix}")) == cases


json_values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=12,
)
case_like = st.dictionaries(
    st.sampled_from(["id", "input", "expected_tools", "agent_trace", "max_tool_calls", "inptu"]),
    json_values,
    max_size=4,
)


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=st.lists(case_like | json_values, max_size=3) | json_values)
@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_any_document_loads_or_raises_a_dataset_error(
    tmp_path: Path, suffix: str, document: object
) -> None:
    path = tmp_path / f"cases{suffix}"
    if suffix == ".yaml":
        path.write_text(yaml.safe_dump(document, allow_unicode=True), encoding="utf-8")
    elif suffix == ".json":
        path.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    else:
        items = document if isinstance(document, list) else [document]
        lines = [json.dumps(item, ensure_ascii=False) for item in items]
        path.write_text("\n".join(lines), encoding="utf-8")
    try:
        load_cases(path)
    except DatasetError as error:
        assert error.file == str(path)
        assert "\n" not in error.message


@settings(max_examples=100, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.text(max_size=80))
@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl", ".csv"])
def test_any_text_loads_or_raises_a_dataset_error(
    tmp_path: Path, suffix: str, content: str
) -> None:
    path = tmp_path / f"cases{suffix}"
    path.write_text(content, encoding="utf-8", errors="surrogatepass")
    try:
        load_cases(path)
    except DatasetError as error:
        assert error.file == str(path)


# ---------------------------------------------------------------------------------------------
# The case file's schema


def test_schema_accepts_case_files_and_rejects_unknown_fields() -> None:
    schema = case_file_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    case = {
        "id": "a",
        "input": "hi",
        "expected_tool_calls": ["search"],
        "expected_trajectory": ["search", {"name": "fetch", "args": {"page": 1}}],
        "rubrics": ["Is polite"],
    }

    assert validator.is_valid([case])
    assert validator.is_valid({"cases": [case]})
    assert not validator.is_valid([{"input": "hi", "expeted_output": "x"}])
    assert not validator.is_valid([{"expected_output": "x"}])  # no input
    assert not validator.is_valid({"cases": [case], "name": "x"})
    assert not validator.is_valid([])


# ---------------------------------------------------------------------------------------------
# Errors: the file


def test_missing_file_suggests_a_close_name(tmp_path: Path) -> None:
    write(tmp_path, "cases.yaml", "- input: hi\n")
    error = load_error(tmp_path / "case.yaml")
    assert error.file == str(tmp_path / "case.yaml")
    assert "file not found" in str(error)
    assert f"did you mean '{tmp_path / 'cases.yaml'}'?" in str(error)


def test_a_folder_is_not_a_case_file(tmp_path: Path) -> None:
    (tmp_path / "cases.yaml").mkdir()
    assert "folder, not a case file" in str(load_error(tmp_path / "cases.yaml"))


def test_unreadable_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = write(tmp_path, "cases.yaml", "- input: hi\n")

    def refuse(self: Path) -> bytes:
        raise PermissionError(13, "Permission denied", str(self))

    monkeypatch.setattr(Path, "read_bytes", refuse)
    error = load_error(path)
    assert error.message == "cannot read the file: permission denied"
    assert error.hint is not None
    assert "readable" in error.hint


def test_unknown_extension_names_the_supported_ones(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "cases.txt", "input: hi\n"))
    assert str(error) == (
        f"{tmp_path / 'cases.txt'}: cannot read '.txt' files\n"
        "  hint: use a case file ending in .yaml, .yml, .json, .jsonl or .csv"
    )


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("cases.yaml", ""),
        ("cases.yaml", "# nothing yet\n\n   \n"),
        ("cases.yaml", "[]\n"),
        ("cases.yaml", "cases:\n"),
        ("cases.json", "  \n"),
        ("cases.json", '{"cases": []}'),
        ("cases.jsonl", "\n\n"),
        ("cases.csv", ""),
        ("cases.csv", "id,input\n"),
    ],
)
def test_a_file_without_cases(tmp_path: Path, name: str, content: str) -> None:
    error = load_error(write(tmp_path, name, content))
    assert error.message == "no cases in the file"
    assert error.hint


def test_text_that_is_not_utf8_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "cases.yaml"
    path.write_bytes(b"- input: hi\n- input: caf\xe9\n")
    error = load_error(path)
    assert (error.line, error.hint) == (2, "save the file with UTF-8 encoding")
    assert "byte 0xe9 at column 13" in error.message


def test_invalid_yaml_gives_the_parsers_line_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yaml",
        """
        - input: hi
        - input: Note: this needs quotes
        """,
    )
    error = load_error(path)
    assert str(error) == (
        f"{path}:2: invalid YAML: text containing ': ' without quotes (column 14)\n"
        "  hint: text containing ': ' needs quotes: `- input: \"Note: this needs quotes\"`"
    )


def test_a_control_character_in_yaml(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "cases.yaml", "- input: hi\n- input: a\x07b\n"))
    assert error.line == 2
    assert error.message == "invalid YAML: the character 0x0007 is not allowed in YAML text"


def test_invalid_json_gives_the_parsers_line_and_column(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.json",
        """
        [
          {"input": "hi"},
          {"input": "there" "tags": []}
        ]
        """,
    )
    error = load_error(path)
    assert error.line == 3
    assert error.message == "invalid JSON: Expecting ',' delimiter (column 21)"


def test_a_jsonl_line_that_is_not_json(tmp_path: Path) -> None:
    path = write(tmp_path, "cases.jsonl", '{"input": "hi"}\n\n{"input": "there",}\n')
    error = load_error(path)
    assert error.line == 3
    # The reader's own words and column, which 3.13 changed (`tests/python_json.py`).
    reader = decode_error('{"input": "there",}')
    assert error.message == f"invalid JSON: {reader.msg} (column {reader.colno})"


@pytest.mark.parametrize("text", ['[{"input": "hi",}]', '{"input": "hi",}', '[{"input": "hi"},\n]'])
def test_a_trailing_comma_in_a_json_file_is_named_in_the_hint(tmp_path: Path, text: str) -> None:
    error = load_error(write(tmp_path, "cases.json", text))
    assert (
        error.line == decode_error(text).lineno
    )  # the bracket's on 3.11 and 3.12, the comma's on 3.13
    assert error.hint is not None and "cannot end with a comma" in error.hint, error.hint


@pytest.mark.parametrize(
    ("content", "message", "hint"),
    [
        (
            "just text\n",
            "expected a list of cases or a mapping with a `cases:` list, got text 'just text'",
            None,
        ),
        (
            "input: hi\n",
            "expected a list of cases or a mapping with a `cases:` list, got a single case",
            "put the case in a list",
        ),
        ("case:\n  - input: hi\n", None, "rename 'case' to 'cases'"),
        ("cases: 5\n", "`cases:` should hold a list of cases, got the number 5", None),
        (
            "name: support\ncases:\n  - input: hi\n",
            "unknown top-level key 'name'; a case file's mapping holds only `cases:`",
            None,
        ),
    ],
)
def test_a_file_that_is_not_a_list_of_cases(
    tmp_path: Path, content: str, message: str | None, hint: str | None
) -> None:
    error = load_error(write(tmp_path, "cases.yaml", content))
    assert error.line == 1
    if message:
        assert error.message == message
    if hint:
        assert error.hint is not None
        assert hint in error.hint


# ---------------------------------------------------------------------------------------------
# Errors: a case


def test_unknown_field_suggests_the_closest_name(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yaml",
        """
        - input: hi
        - id: refund-policy
          input: What is the refund policy?
          expeted_output: 30 days
        """,
    )
    error = load_error(path)
    assert str(error) == (
        f"{path}:4, case 'refund-policy', field 'expeted_output': unknown field"
        " — did you mean 'expected_output'?\n"
        "  hint: rename 'expeted_output' to 'expected_output'"
    )


def test_unknown_nested_field_names_its_path_and_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yaml",
        """
        - input: Summarise the ticket
          agent_trace:
            - tool_calls:
                - name: get_ticket
                - name: get_user
                  argumnts: {id: 1}
        """,
    )
    error = load_error(path)
    assert (error.line, error.case, error.field) == (
        6,
        1,
        "agent_trace.0.tool_calls.1.argumnts",
    )
    assert error.message == "unknown field — did you mean 'arguments'?"


def test_unknown_field_without_a_close_name_lists_the_fields(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "cases.json", '[{"input": "hi", "zzz": 1}]'))
    assert error.message == "unknown field"
    assert error.hint is not None
    assert "expected_output" in error.hint
    assert "expected_tool_calls" in error.hint


def test_both_names_of_one_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yaml",
        """
        - input: hi
          expected_tools: [search]
          expected_tool_calls: [fetch]
        """,
    )
    error = load_error(path)
    assert (error.line, error.field) == (3, "expected_tool_calls")
    assert "two names for one field" in error.message


@pytest.mark.parametrize(
    ("case_text", "field", "message", "hint"),
    [
        (
            'max_tool_calls: "three"',
            "max_tool_calls",
            "expected a whole number, got text 'three'",
            "write a whole number, e.g. 3",
        ),
        (
            "expected_tools: 5",
            "expected_tools",
            "expected a list, got the number 5",
            'write a list, e.g. ["first", "second"]',
        ),
        (
            "expected_tools: search",
            "expected_tools",
            "expected a list, got text 'search'",
            'write a list, e.g. ["search"]',
        ),
        (
            "tags: [ok, 3]",
            "tags.1",
            "expected text, got the number 3",
            'put the value in quotes: "3"',
        ),
        (
            "max_tool_calls: -1",
            "max_tool_calls",
            "must be 0 or more, got the number -1",
            "write a value of 0 or more",
        ),
        (
            "expected_trajectory: [5]",
            "expected_trajectory.0",
            "expected text or a mapping, got the number 5",
            "write the tool's name, or a mapping with `name:` (and `arguments:`)",
        ),
        (
            "agent_trace: [{tool_calls: [{args: {}}]}]",
            "agent_trace.0.tool_calls.0.name",
            "required field is missing",
            "add `name` to this tool call",
        ),
    ],
)
def test_wrong_type_names_the_field_what_was_expected_and_what_was_given(
    tmp_path: Path, case_text: str, field: str, message: str, hint: str
) -> None:
    path = write(tmp_path, "cases.yaml", f"- id: c1\n  input: hi\n  {case_text}\n")
    error = load_error(path)
    assert (error.file, error.line, error.case, error.field) == (str(path), 3, "c1", field)
    assert (error.message, error.hint) == (message, hint)


def test_wrong_type_in_input_explains_both_forms(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "cases.json", '[{"input": {"text": "hi"}}]'))
    assert error.message == "expected text or a list, got a mapping"
    assert error.hint is not None
    assert "list of messages" in error.hint


def test_wrong_type_inside_json_points_at_the_line(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.json",
        """
        {"cases": [
          {"input": "a"},
          {"input": "b",
           "agent_trace": [
             {"tool_calls": [{"name": "x"},
                             {"name": "y", "arguments": 5}]}
           ]}
        ]}
        """,
    )
    error = load_error(path)
    assert (error.line, error.case, error.field) == (6, 2, "agent_trace.0.tool_calls.1.arguments")
    assert error.message == "expected a mapping, got the number 5"


def test_a_case_without_input(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yaml",
        """
        - input: hi
        - id: no-question
          expected_output: 42
        """,
    )
    error = load_error(path)
    assert str(error) == (
        f"{path}:2, case 'no-question', field 'input': the case has no input:"
        " it needs an `input`, a `conversation`, a `user_simulation` or an `agent_trace`\n"
        "  hint: add `input:` with what to ask the agent"
    )


def test_a_case_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = write(tmp_path, "cases.yaml", "- input: hi\n- What is 2 + 2?\n")
    error = load_error(path)
    assert (error.line, error.case) == (2, 2)
    assert error.message == "a case must be a mapping of fields, got text 'What is 2 + 2?'"
    assert error.hint == 'write each case as a mapping, e.g. `- input: "What is 2 + 2?"`'


def test_a_jsonl_line_that_is_not_an_object(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "cases.jsonl", '{"input": "hi"}\n["hi"]\n'))
    assert (error.line, error.case) == (2, 2)
    assert error.message == "a case must be a mapping of fields, got a list"


def test_the_first_error_in_the_file_is_reported(tmp_path: Path) -> None:
    # The JSONL syntax error on line 3 comes after the bad case on line 2.
    path = write(tmp_path, "cases.jsonl", '{"input": "a"}\n{"input": "b", "tagz": []}\n{oops\n')
    error = load_error(path)
    assert (error.line, error.field) == (2, "tagz")
    assert error.message == "unknown field — did you mean 'tags'?"


def test_a_field_given_twice(tmp_path: Path) -> None:
    yaml_path = write(tmp_path, "cases.yaml", "- input: a\n  tags: [x]\n  tags: [y]\n")
    json_path = write(tmp_path, "cases.json", '[{"input": "a",\n  "input": "b"}]')

    yaml_error = load_error(yaml_path)
    assert (yaml_error.line, yaml_error.field) == (3, "tags")
    assert yaml_error.message == "the field is given twice (first on line 2)"
    json_error = load_error(json_path)
    assert (json_error.line, json_error.field) == (2, "input")
    assert json_error.message == "the field is given twice (first on line 1)"


# ---------------------------------------------------------------------------------------------
# Errors: duplicate ids


def test_duplicate_id_names_both_positions(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        "cases.yaml",
        """
        - id: refund
          input: one
        - id: other
          input: two
        - id: refund
          input: three
        """,
    )
    error = load_error(path)
    assert str(error) == (
        f"{path}:5, case 'refund', field 'id': duplicate id: case 1 (line 1) already has the id"
        " 'refund'\n"
        "  hint: give each case its own id"
    )


def test_duplicate_id_in_jsonl_and_csv(tmp_path: Path) -> None:
    jsonl = write(
        tmp_path, "cases.jsonl", '{"id": "a", "input": "1"}\n\n{"id": "a", "input": "2"}\n'
    )
    table = write(tmp_path, "cases.csv", "id,input\na,one\nb,two\na,three\n")

    assert load_error(jsonl).line == 3
    assert "case 1 (line 1)" in load_error(jsonl).message
    assert (load_error(table).line, load_error(table).case) == (4, "a")
    assert "case 1 (line 2)" in load_error(table).message


def test_two_identical_cases_without_ids(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "cases.yaml", "- input: hi\n- input: hi\n"))
    assert (error.line, error.case) == (2, 2)
    assert error.message.startswith("duplicate case: the same content as case 1 (line 1)")


# ---------------------------------------------------------------------------------------------
# Errors: CSV


def test_csv_unknown_column_suggests_the_closest_name(tmp_path: Path) -> None:
    path = write(tmp_path, "cases.csv", "id,input,expeted_output\na,hi,there\n")
    error = load_error(path)
    assert str(error) == (
        f"{path}:1, field 'expeted_output': unknown column — did you mean 'expected_output'?\n"
        "  hint: rename the column 'expeted_output' to 'expected_output'"
    )


def test_csv_columns_that_need_another_format(tmp_path: Path) -> None:
    conversation = load_error(write(tmp_path, "a.csv", "input,conversation\nhi,x\n"))
    metadata = load_error(write(tmp_path, "b.csv", "input,metadata\nhi,x\n"))

    assert conversation.message == "a conversation cannot be given in a CSV file"
    assert metadata.message == "metadata goes in one column per key, named `metadata.<key>`"


def test_csv_wrong_number_names_the_row(tmp_path: Path) -> None:
    path = write(tmp_path, "cases.csv", 'id,input,max_tool_calls\na,"multi\nline",2\nb,hi,three\n')
    error = load_error(path)
    assert (error.line, error.case, error.field) == (4, "b", "max_tool_calls")
    assert error.message == "expected a whole number, got text 'three'"


def test_csv_quoted_cell_that_never_ends(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "cases.csv", 'id,input\na,hi\nb,"never closed\n'))
    assert error.line == 3
    assert error.message == "invalid CSV: a quoted cell in this row never ends"


def test_csv_list_cell_that_is_not_a_json_array(tmp_path: Path) -> None:
    path = write(tmp_path, "cases.csv", "input,tags\nhi,[beta\n")
    error = load_error(path)
    assert (error.line, error.case, error.field) == (2, 1, "tags")
    assert "read as a JSON array" in error.message
    assert error.hint is not None
    assert "a|b" in error.hint


def test_csv_value_in_a_column_without_a_name(tmp_path: Path) -> None:
    error = load_error(write(tmp_path, "cases.csv", "id,input\na,hi\nb,hi,extra\n"))
    assert (error.line, error.case) == (3, "b")
    assert error.message == "a value in column 3, which has no name in the header (line 1)"
