"""Whether the answer rests on what the tools returned, and whether search found the documents:
`ToolFaithfulness` and `RetrievalRecall`.

Neither needs a reference answer or an LLM. Crossed with `exact_match`, `retrieval_recall` tells
a wrong answer that came from the search (a document was missed) from one that came from the
model (it had them all). Neither judges a trial that failed for an infrastructure reason (see
`agenteval.scorers.answer.not_judged`).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from agenteval.case import EvalCase
from agenteval.jsonsafe import CUT_HEAD, cuts_in
from agenteval.judge.played import user_words
from agenteval.score import Score
from agenteval.scorers.answer import no_answer_reason, not_judged
from agenteval.scorers.redacted import holds_redacted, undecidable, undecided
from agenteval.scorers.scores import no_score, threshold_score
from agenteval.scorers.text import (
    content_words,
    excerpts,
    fold,
    folded,
    json_value,
    number_matches,
    number_value,
    number_values,
    numbers_equal,
    word_list,
)
from agenteval.trace import Trial

__all__ = ["RetrievalRecall", "ToolFaithfulness", "returned_doc_ids"]


def _collect(value: Any, numbers: list[float], texts: list[str]) -> None:
    # Every string and number inside a tool result, into `texts` and `numbers`: dict keys and
    # values, list items, and the text of anything else. The usual JSON shapes (a plain dict or
    # list of strings, numbers and more of the same) are walked here; anything else by
    # `_collect_any`, in the same order. (W5's two results a trial: 7.4 -> ~2 us.)
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is str:
                texts.append(key)
            else:
                _collect_any(key, numbers, texts)
            _collect_item(item, numbers, texts)
    elif kind is list:
        for item in value:
            _collect_item(item, numbers, texts)
    else:
        _collect_any(value, numbers, texts)


def _collect_item(item: Any, numbers: list[float], texts: list[str]) -> None:
    kind = type(item)
    if kind is str:
        texts.append(item)
    elif kind is int or kind is float:  # not a bool, whose type is bool
        numbers.append(float(item))
    elif kind is dict or kind is list:
        _collect(item, numbers, texts)
    else:
        _collect_any(item, numbers, texts)


_CONTAINERS = (dict, Mapping, list, tuple, set, frozenset)


def _collect_any(value: Any, numbers: list[float], texts: list[str]) -> None:
    # `_collect` for any value, by kind, in the same order. Containers are walked on a stack of
    # this function's own, not Python's: a result nested past the interpreter's depth, or one
    # that contains itself (a trial the agent built, never copied), is read all the same, each
    # container once.
    if not isinstance(value, _CONTAINERS):
        _collect_scalar(value, numbers, texts)
        return
    stack = [value]
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if not isinstance(value, _CONTAINERS):
            _collect_scalar(value, numbers, texts)
        elif id(value) not in seen:
            seen.add(id(value))
            if isinstance(value, dict | Mapping):  # a dict is by far the most common
                for key, item in reversed(list(value.items())):
                    stack += (item, key)  # read the key, then its item
            else:
                stack.extend(reversed(list(value)))


def _collect_scalar(value: Any, numbers: list[float], texts: list[str]) -> None:
    if isinstance(value, str):
        texts.append(value)
    elif value is None or isinstance(value, bool):
        return
    elif isinstance(value, int | float):
        numbers.append(float(value))
    else:
        texts.append(str(value))


# Between texts read together: no number, word or space, so each text's numbers and words are
# exactly those it has read on its own (a number cannot run on into the next text).
_APART = "\x00"


def _folded(texts: Iterable[str]) -> str:
    """The texts folded as one (`fold` once, not once per text), kept apart by `_APART`."""
    return fold(_APART.join(texts))


def _input_texts(case: EvalCase, trial: Trial) -> list[str]:
    # What the agent was told (which an answer may echo): a simulated user's messages as played.
    if trial.simulation is None and isinstance(case.input, str) and not case.conversation:
        # `user_words`' one written input, without building it (3.5 -> 0.3 us a trial).
        return [case.input] if case.input else []
    words = user_words(case, trial)
    return [content for _, content in words.before] + [turn for turn in words.turns if turn]


_Mention: TypeAlias = tuple[str, float, bool]
"""A number of the answer as `find_numbers` reads it: its text, value and whether a percentage
(without the rest of a `NumberMention`, which the answer's numbers do not need)."""


def _holds(numbers: Iterable[float], values: frozenset[float], value: float, percent: bool) -> bool:
    # Whether a number of the answer (`value`, a percentage or not) is among `numbers`. Signs
    # are ignored: text often says them in words
    # ("a loss of 200", "fell 3.5"); a percentage is also its fraction (12% is 0.12).
    wanted = abs(value)
    # `values` holds `abs` of each number: a finite number found there is equal to one of them
    # (at no distance: `numbers_equal` says so), without comparing it with each in turn. Not
    # found, or not finite, it is compared with each (within the tolerance, or as a fraction).
    if wanted in values and wanted - wanted == 0.0:  # `inf - inf` is nan, and nan is not 0
        return True
    return any(
        numbers_equal(wanted, abs(number)) or (percent and numbers_equal(wanted, abs(number) * 100))
        for number in numbers
    )


class _Sources:
    """What an answer may draw on: the numbers of the tool results, the numbers of the input
    (which an answer may echo), and the words of both.

    Each is worked out when first asked for: an answer's number is looked for among the
    results' own numbers (`found`, their JSON numbers) first, and only when it is not there
    among the numbers written in their texts; the words only for an answer without numbers to
    check. W5's answers are mostly found at once: with the rest of this module's quicker
    ways, tool_faithfulness went from 38-44 to 18-20 us a trial (`_holds` by value, `_collect`).
    (Plain attributes filled in on first use: `functools.cached_property` takes a lock on
    every read in Python 3.11, which cost more than the lookups it saved.)"""

    __slots__ = (
        "_found_values",
        "_input_numbers",
        "_inputs_text",
        "_results_text",
        "_words",
        "_written",
        "found",
        "inputs",
        "texts",
    )

    def __init__(self, found: list[float], texts: list[str], inputs: list[str]) -> None:
        self.found = found
        """The numbers of the tool results that are numbers (not text), in order."""
        self.texts = texts
        """The texts of the tool results, as they are (kept for the rescore's redaction check)."""
        self.inputs = inputs
        """The texts of the input."""
        self._results_text: str | None = None
        self._inputs_text: str | None = None
        self._found_values: frozenset[float] | None = None
        self._written: tuple[list[float], frozenset[float]] | None = None
        self._input_numbers: tuple[list[float], frozenset[float]] | None = None
        self._words: set[str] | None = None

    def results_text(self) -> str:
        """The texts of the tool results folded as one (`_folded`)."""
        if self._results_text is None:
            self._results_text = _folded(self.texts)
        return self._results_text

    def inputs_text(self) -> str:
        """The texts of the input folded as one."""
        if self._inputs_text is None:
            self._inputs_text = _folded(self.inputs)
        return self._inputs_text

    def written(self) -> tuple[list[float], frozenset[float]]:
        """The numbers written in the texts of the tool results, in order, and their `abs`."""
        if self._written is None:
            numbers = number_values(self.results_text())
            self._written = (numbers, frozenset(map(abs, numbers)))
        return self._written

    def input_numbers(self) -> tuple[list[float], frozenset[float]]:
        """The numbers written in the input, in order, and their `abs`."""
        if self._input_numbers is None:
            numbers = number_values(self.inputs_text())
            self._input_numbers = (numbers, frozenset(map(abs, numbers)))
        return self._input_numbers

    @property
    def numbers(self) -> list[float]:
        """Every number of the tool results: their numbers, then those written in their texts."""
        return self.found + self.written()[0]

    @property
    def words(self) -> set[str]:
        """The words of the tool results and of the input."""
        if self._words is None:
            self._words = set(word_list(self.results_text()))
            self._words.update(word_list(self.inputs_text()))
        return self._words

    @classmethod
    def gather(cls, results: Iterable[Any], inputs: Iterable[str]) -> _Sources:
        results = list(results)
        numbers: list[float] = []
        texts: list[str] = []
        try:
            for result in results:
                _collect(result, numbers, texts)
        except RecursionError:  # nested past what the quick walk (two frames a level) reaches
            numbers, texts = [], []
            for result in results:
                _collect_any(result, numbers, texts)
        return cls(numbers, texts, list(inputs))

    def echoes_input(self, mention: _Mention) -> bool:
        return _holds(*self.input_numbers(), mention[1], mention[2])

    def supports(self, mention: _Mention) -> bool:
        # Among all the numbers (`numbers`), looked for in their two parts in turn.
        _, value, percent = mention
        if self._found_values is None:
            self._found_values = frozenset(map(abs, self.found))
        if _holds(self.found, self._found_values, value, percent):
            return True
        return _holds(*self.written(), value, percent)


@dataclass(frozen=True)
class ToolFaithfulness:
    """Every number in the answer, or else its wording, appears in what the tools returned.

    A deterministic hallucination check. It measures faithfulness to the tool results, not
    truth: a right answer worked out in the model's head fails it.

    - **Echoes.** A number of the answer that is also in the case's input (the `2024` of "What
      was revenue in 2024?") only echoes the question: it is neither checked nor counted, so it
      can neither pass nor fail the answer (`details["echoed"]` lists them).
    - **Numbers.** When the answer has numbers left to check, each must appear, by value within
      0.01, among the numbers anywhere in the tool results (strings, numbers, dict keys and
      values, nested): `19,753` in the answer matches `19753` in a result. Signs are ignored,
      and a percentage (`12%`) is also supported by its fraction (`0.12`). The value is the
      share of those numbers supported; it passes only when all are (`threshold` 1.0).
    - **Words.** When no number is left to check (the answer has none, or only echoes), its
      content words (casefolded, without accents, three letters or more, not a stopword, not a
      number) must appear as words of the tool results or of the input. The value is the share
      that do; it passes at `text_threshold` (0.8).

    Applies when the trial has an answer and at least one tool call returned a result. Not
    judged when the trial failed for an infrastructure reason. An answer with no number left to
    check and no content words ("Yes.", "2024.") is not scored: there is nothing to check. In a
    rescore, an answer holding a masked secret, or a failure where a tool result holds one, is
    not decided (`scorers.redacted`: the rescore keeps the stored verdict). Nor is a failure
    where a result was cut before it was stored (`jsonsafe`: nested past 64 levels, say): what
    the answer says may be in the part cut.
    """

    name: str = "tool_faithfulness"
    threshold: float = 1.0
    reads: ClassVar[frozenset[str]] = frozenset({"output", "tool_calls", "tool_results"})
    """The trial fields it reads (`scorers.recorded`)."""
    text_threshold: float = 0.8

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        answer = trial.output or ""
        if not answer.strip():
            return no_score(self.name, no_answer_reason(trial))
        results = [call.result for call in trial.tool_calls if call.result is not None]
        if not results:
            return no_score(self.name, "no tool call returned a result")
        # A rescore reads masked secrets: a number or word inside one is gone, and two read the
        # same.
        unsure = undecidable(self.name, answer)
        if unsure is not None:
            return unsure
        sources = _Sources.gather(results, _input_texts(case, trial))
        score = self._score(answer, case, sources, len(results))
        # A failure may come of a masked result (the number it had is gone), or of a part of a
        # result cut before it was stored: only then looked at.
        if score.passed is False and holds_redacted(*sources.texts):
            return undecided(self.name)
        if score.passed is False:
            # Each cut is a text of its own (the marker stands where the value was).
            cut = list(
                dict.fromkeys(
                    reason
                    for text in sources.texts
                    if text.startswith(CUT_HEAD)
                    for reason in cuts_in(text)
                )
            )
            if cut:
                unsupported = score.details.get("unsupported") or []
                return Score(
                    name=self.name,
                    reason=f"not decided: a tool result was cut before it was stored "
                    f"({'; '.join(cut)}), and what the answer says may be in the part cut: "
                    + ", ".join(map(str, unsupported)),
                    details={"cut": cut, "unsupported": unsupported},
                )
        return score

    def _score(self, answer: str, case: EvalCase, sources: _Sources, results: int) -> Score:
        mentions: list[_Mention] = []
        echoed: list[str] = []
        for match in number_matches(folded(answer)):
            mention = (match[0], number_value(match), match["percent"] is not None)
            if sources.echoes_input(mention):
                echoed.append(mention[0])
            else:
                mentions.append(mention)
        if mentions:
            return self._numbers(mentions, echoed, sources, results)
        return self._words(answer, echoed, sources, results)

    def _numbers(
        self, mentions: list[_Mention], echoed: list[str], sources: _Sources, results: int
    ) -> Score:
        unsupported = [mention[0] for mention in mentions if not sources.supports(mention)]
        supported = len(mentions) - len(unsupported)
        value = supported / len(mentions)
        details: dict[str, Any] = {
            "rule": "numbers",
            "checked": len(mentions),
            "supported": supported,
            "unsupported": excerpts(unsupported),
            "echoed": excerpts(echoed),
            "results": results,
        }
        if not unsupported:
            reason = f"all {len(mentions)} numbers in the answer appear in tool results"
        else:
            listed = ", ".join(unsupported[:5]) + (", …" if len(unsupported) > 5 else "")
            reason = (
                f"{len(unsupported)} of {len(mentions)} numbers in the answer appear in no tool "
                f"result: {listed}"
            )
        reason += _echo_note(echoed)
        return threshold_score(self.name, value, self.threshold, reason, details)

    def _words(self, answer: str, echoed: list[str], sources: _Sources, results: int) -> Score:
        checked = list(dict.fromkeys(content_words(answer)))
        if not checked:
            numbers = "only numbers that echo the input" if echoed else "no numbers"
            return Score(
                name=self.name,
                reason=f"nothing to check: the answer has {numbers} and no content words",
                details={"echoed": excerpts(echoed)} if echoed else {},
            )
        unsupported = [word for word in checked if word not in sources.words]
        value = (len(checked) - len(unsupported)) / len(checked)
        details: dict[str, Any] = {
            "rule": "words",
            "checked": len(checked),
            "supported": len(checked) - len(unsupported),
            "unsupported": excerpts(unsupported),
            "echoed": excerpts(echoed),
            "results": results,
        }
        reason = (
            f"{len(checked) - len(unsupported)} of {len(checked)} content words of the answer "
            f"appear in tool results or the input ({value:.0%}, needs {self.text_threshold:.0%})"
        )
        if unsupported:
            listed = ", ".join(unsupported[:8]) + (", …" if len(unsupported) > 8 else "")
            reason += f"; not found: {listed}"
        reason += _echo_note(echoed)
        return threshold_score(self.name, value, self.text_threshold, reason, details)


def _echo_note(echoed: list[str]) -> str:
    if not echoed:
        return ""
    listed = ", ".join(echoed[:5]) + (", …" if len(echoed) > 5 else "")
    return f"; not checked, as they echo the input: {listed}"


def returned_doc_ids(
    result: Any,
    doc_keys: Iterable[str] = ("id", "doc_id", "url"),
    list_keys: Iterable[str] = ("results", "documents", "docs", "items"),
) -> list[str]:
    """The ids of the documents a search call returned, in order.

    A result is a list of items, or a dict holding that list under one of `list_keys`, or a
    single item. An item is a dict, identified by its first non-empty `doc_keys` value, or a
    string (or number), which is the id itself. A string that holds a JSON list or object is
    read as that JSON first (`text.json_value`).
    """
    doc_keys, list_keys = tuple(doc_keys), tuple(list_keys)
    result = json_value(result)
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
    if type(item) is dict:  # the usual item, and its usual id, a text: as below, sooner
        for key in doc_keys:
            value = item.get(key)
            if type(value) is str:
                if value.strip():
                    return value.strip()
            elif value is not None and not isinstance(value, Mapping | list) and str(value).strip():
                return str(value).strip()
        return None
    if isinstance(item, Mapping):
        for key in doc_keys:
            value = item.get(key)
            if value is not None and not isinstance(value, Mapping | list) and str(value).strip():
                return str(value).strip()
        return None
    if isinstance(item, str) or (isinstance(item, int | float) and not isinstance(item, bool)):
        return str(item).strip() or None
    return None


@functools.lru_cache(maxsize=64)  # a scorer's few search patterns, casefolded once
def _casefolded(patterns: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(pattern.casefold() for pattern in patterns)


def _searches(name: str, patterns: tuple[str, ...]) -> bool:
    # Whether a tool called `name` is a search: its name (casefolded) holds one of `patterns`.
    # A loop rather than `any()` over a generator, which costs more than the test itself.
    name = name.casefold()
    for pattern in patterns:  # noqa: SIM110
        if pattern in name:
            return True
    return False


@dataclass(frozen=True)
class RetrievalRecall:
    """The share of the case's `relevant_docs` that any search returned.

    When the trial lists `retrieved_docs`, those are the returned documents. Otherwise they are
    read from the results of search calls: calls of a tool whose name contains one of
    `search_tools` (case-insensitive), read by `returned_doc_ids` with `doc_keys` (an item's id
    is its `id`, else `doc_id`, else `url`). Ids compare exactly.

    Applies when the case lists `relevant_docs`. Not judged when the trial failed for an
    infrastructure reason; a trial the agent itself failed is judged on the searches it made.
    Passes when every relevant document was returned (`threshold` 1.0).
    """

    name: str = "retrieval_recall"
    threshold: float = 1.0
    reads: ClassVar[frozenset[str]] = frozenset({"tool_calls", "tool_results"})
    """The trial fields it reads (`scorers.recorded`)."""
    search_tools: tuple[str, ...] = ("search", "retriev")
    doc_keys: tuple[str, ...] = ("id", "doc_id", "url")

    def declines(self, case: EvalCase) -> str | None:
        """Why it does not apply to `case`, whatever the trial did (`scorers.recorded`)."""
        if not any(doc.strip() for doc in case.relevant_docs or []):
            return "no relevant_docs in the case"
        return None

    def __call__(self, case: EvalCase, trial: Trial) -> Score:
        relevant = list(dict.fromkeys(doc.strip() for doc in case.relevant_docs or []))
        if not relevant:
            return no_score(self.name, "no relevant_docs in the case")
        skipped = not_judged(self.name, trial)
        if skipped is not None:
            return skipped
        if trial.retrieved_docs is not None:
            returned = [doc.strip() for doc in trial.retrieved_docs]
            source, searches = "retrieved_docs", None
        else:
            patterns = (
                _casefolded(self.search_tools)
                if type(self.search_tools) is tuple
                else tuple(pattern.casefold() for pattern in self.search_tools)
            )
            calls = [call for call in trial.tool_calls if _searches(call.name, patterns)]
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
        return threshold_score(self.name, value, self.threshold, reason, details)
