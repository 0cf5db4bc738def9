"""Whether the answer rests on what the tools returned, and whether search found the documents:
`ToolFaithfulness` and `RetrievalRecall`.

Neither needs a reference answer or an LLM. Crossed with `exact_match`, `retrieval_recall` tells
a wrong answer that came from the search (a document was missed) from one that came from the
model (it had them all).
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from agenteval.case import EvalCase
from agenteval.score import Score
from agenteval.scorers.text import (
    NumberMention,
    content_words,
    find_numbers,
    fold,
    numbers_equal,
    words,
)
from agenteval.trace import Trial

__all__ = ["RetrievalRecall", "ToolFaithfulness", "returned_doc_ids"]


def _strings_and_numbers(value: Any) -> Iterator[str | float]:
    # Every string and number inside a tool result: dict keys and values, list items, and the
    # text of anything else.
    if value is None or isinstance(value, bool):
        return
    if isinstance(value, int | float):
        yield float(value)
    elif isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _strings_and_numbers(key)
            yield from _strings_and_numbers(item)
    elif isinstance(value, list | tuple | set | frozenset):
        for item in value:
            yield from _strings_and_numbers(item)
    else:
        yield str(value)


def _input_texts(case: EvalCase) -> list[str]:
    texts: list[str] = []
    if isinstance(case.input, str):
        texts.append(case.input)
    elif case.input is not None:
        texts.extend(message.content for message in case.input)
    for turn in case.conversation or []:
        if turn.input:
            texts.append(turn.input)
    return texts


@dataclass(frozen=True)
class _Sources:
    """The numbers and words an answer may draw on: from tool results and from the input."""

    numbers: list[float]
    words: set[str]

    @classmethod
    def gather(cls, results: Iterable[Any], inputs: Iterable[str]) -> _Sources:
        numbers: list[float] = []
        texts: list[str] = list(inputs)
        for result in results:
            for item in _strings_and_numbers(result):
                if isinstance(item, float):
                    numbers.append(item)
                else:
                    texts.append(item)
        found: set[str] = set()
        for text in texts:
            numbers.extend(mention.value for mention in find_numbers(fold(text)))
            found.update(words(text))
        return cls(numbers=numbers, words=found)

    def supports(self, mention: NumberMention) -> bool:
        # Signs are ignored: text often says them in words ("a loss of 200", "fell 3.5").
        wanted = abs(mention.value)
        return any(
            numbers_equal(wanted, abs(number))
            or (mention.percent and numbers_equal(wanted, abs(number) * 100))
            for number in self.numbers
        )


@dataclass(frozen=True)
class ToolFaithfulness:
    """Every number in the answer, or else its wording, appears in what the tools returned.

    A deterministic hallucination check. It measures faithfulness to the tool results, not
    truth: a right answer worked out in the model's head fails it.

    - **Numbers.** When the answer contains numbers, each must appear, by value within 0.01,
      among the numbers anywhere in the tool results (strings, numbers, dict keys and values,
      nested): `19,753` in the answer matches `19753` in a result. Signs are ignored, and a
      percentage (`12%`) is also supported by its fraction (`0.12`). Numbers in the case's
      input count as supported too: echoing the question is not inventing. The value is the
      share of the answer's numbers supported; it passes only when all are (`threshold` 1.0).
    - **Words.** When the answer has no numbers, its content words (casefolded, without
      accents, three letters or more, not a stopword) must appear as words of the tool results
      or of the input. The value is the share that do; it passes at `text_threshold` (0.8).

    Applies when the trial has an answer and at least one tool call returned a result. An answer
    with no numbers and no content words ("Yes.") is not scored: there is nothing to check.
    """

    name: str = "tool_faithfulness"
    threshold: float = 1.0
    text_threshold: float = 0.8

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        answer = trial.output or ""
        if not answer.strip():
            return Score(name=self.name, reason="the trial gave no answer")
        results = [call.result for call in trial.tool_calls if call.result is not None]
        if not results:
            return Score(name=self.name, reason="no tool call returned a result")
        sources = _Sources.gather(results, _input_texts(case))
        mentions = find_numbers(fold(answer))
        if mentions:
            return self._numbers(mentions, sources, len(results))
        return self._words(answer, sources, len(results))

    def _numbers(self, mentions: list[NumberMention], sources: _Sources, results: int) -> Score:
        unsupported = [mention.text for mention in mentions if not sources.supports(mention)]
        supported = len(mentions) - len(unsupported)
        value = supported / len(mentions)
        details: dict[str, Any] = {
            "rule": "numbers",
            "checked": len(mentions),
            "supported": supported,
            "unsupported": unsupported,
            "results": results,
        }
        if not unsupported:
            reason = f"all {len(mentions)} numbers in the answer appear in tool results"
        else:
            listed = ", ".join(unsupported[:5]) + (", …" if len(unsupported) > 5 else "")
            reason = (
                f"{len(unsupported)} of {len(mentions)} numbers in the answer appear in no tool "
                f"result nor the input: {listed}"
            )
        return Score(
            name=self.name,
            value=value,
            passed=value >= self.threshold,
            reason=reason,
            details=details,
        )

    def _words(self, answer: str, sources: _Sources, results: int) -> Score:
        checked = list(dict.fromkeys(content_words(answer)))
        if not checked:
            return Score(
                name=self.name,
                reason="nothing to check: the answer has no numbers and no content words",
            )
        unsupported = [word for word in checked if word not in sources.words]
        value = (len(checked) - len(unsupported)) / len(checked)
        details: dict[str, Any] = {
            "rule": "words",
            "checked": len(checked),
            "supported": len(checked) - len(unsupported),
            "unsupported": unsupported,
            "results": results,
        }
        reason = (
            f"{len(checked) - len(unsupported)} of {len(checked)} content words of the answer "
            f"appear in tool results ({value:.0%}, needs {self.text_threshold:.0%})"
        )
        if unsupported:
            listed = ", ".join(unsupported[:8]) + (", …" if len(unsupported) > 8 else "")
            reason += f"; not found: {listed}"
        return Score(
            name=self.name,
            value=value,
            passed=value >= self.text_threshold,
            reason=reason,
            details=details,
        )


def returned_doc_ids(
    result: Any,
    doc_keys: Iterable[str] = ("id", "doc_id", "url"),
    list_keys: Iterable[str] = ("results", "documents", "docs", "items"),
) -> list[str]:
    """The ids of the documents a search call returned, in order.

    A result is a list of items, or a dict holding that list under one of `list_keys`, or a
    single item. An item is a dict, identified by its first non-empty `doc_keys` value, or a
    string (or number), which is the id itself. A string that holds a JSON list or object is
    read as that JSON first.
    """
    doc_keys, list_keys = tuple(doc_keys), tuple(list_keys)
    if isinstance(result, str) and result.strip()[:1] in ("[", "{"):
        with contextlib.suppress(ValueError):  # not JSON after all: a plain string id
            result = json.loads(result)
    items: Iterable[Any] = [result]
    if isinstance(result, list | tuple):
        items = result
    elif isinstance(result, Mapping):
        for key in list_keys:
            if isinstance(result.get(key), list | tuple):
                items = result[key]
                break
    ids: list[str] = []
    for item in items:
        identity = _item_id(item, doc_keys)
        if identity is not None:
            ids.append(identity)
    return ids


def _item_id(item: Any, doc_keys: tuple[str, ...]) -> str | None:
    if isinstance(item, Mapping):
        for key in doc_keys:
            value = item.get(key)
            if value is not None and not isinstance(value, Mapping | list) and str(value).strip():
                return str(value).strip()
        return None
    if isinstance(item, str) or (isinstance(item, int | float) and not isinstance(item, bool)):
        return str(item).strip() or None
    return None


@dataclass(frozen=True)
class RetrievalRecall:
    """The share of the case's `relevant_docs` that any search returned.

    When the trial lists `retrieved_docs`, those are the returned documents. Otherwise they are
    read from the results of search calls: calls of a tool whose name contains one of
    `search_tools` (case-insensitive), read by `returned_doc_ids` with `doc_keys` (an item's id
    is its `id`, else `doc_id`, else `url`). Ids compare exactly.

    Applies when the case lists `relevant_docs`. Not judged when the model never responded.
    Passes when every relevant document was returned (`threshold` 1.0).
    """

    name: str = "retrieval_recall"
    threshold: float = 1.0
    search_tools: tuple[str, ...] = ("search", "retriev")
    doc_keys: tuple[str, ...] = ("id", "doc_id", "url")

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        relevant = list(dict.fromkeys(doc.strip() for doc in case.relevant_docs or []))
        if not relevant:
            return Score(name=self.name, reason="no relevant_docs in the case")
        if not trial.responded:
            return Score(
                name=self.name,
                reason="not judged: the model never responded (an infrastructure failure)",
            )
        if trial.retrieved_docs is not None:
            returned = [doc.strip() for doc in trial.retrieved_docs]
            source, searches = "retrieved_docs", None
        else:
            patterns = [pattern.casefold() for pattern in self.search_tools]
            calls = [
                call
                for call in trial.tool_calls
                if any(pattern in call.name.casefold() for pattern in patterns)
            ]
            returned = [
                doc for call in calls for doc in returned_doc_ids(call.result, self.doc_keys)
            ]
            source, searches = "search calls", len(calls)
        returned_set = set(returned)
        found = [doc for doc in relevant if doc in returned_set]
        missed = [doc for doc in relevant if doc not in returned_set]
        value = len(found) / len(relevant)
        details: dict[str, Any] = {
            "found": found,
            "missed": missed,
            "returned": len(returned_set),
            "source": source,
        }
        if searches is not None:
            details["search_calls"] = searches
        if searches == 0:
            names = " or ".join(repr(pattern) for pattern in self.search_tools)
            reason = f"no search tool was called (tool names containing {names})"
        elif not missed:
            reason = f"all {len(relevant)} relevant documents were returned"
        else:
            listed = ", ".join(missed[:5]) + (", …" if len(missed) > 5 else "")
            reason = f"{len(found)} of {len(relevant)} relevant documents returned; missed {listed}"
        return Score(
            name=self.name,
            value=value,
            passed=value >= self.threshold,
            reason=reason,
            details=details,
        )
