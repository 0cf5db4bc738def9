"""How a criterion is configured: `CriterionConfig` (one model for every criterion, each reading
the fields it needs) and `MatchType` (how expected tool calls or nodes are matched)."""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agenteval.case import Rubric

__all__ = ["DEFAULT_JUDGE_MODEL", "DEFAULT_THRESHOLD", "CriterionConfig", "MatchType"]

DEFAULT_THRESHOLD = 0.8
"""The pass mark of every criterion unless its config says otherwise."""

DEFAULT_JUDGE_MODEL = "gemini-2.5-flash"
"""The judge model of the LLM criteria unless their config names another (Google's Gemini)."""


def _given(**values: str | None) -> dict[str, str]:
    """The values that were given (not None)."""
    return {name: value for name, value in values.items() if value is not None}


class MatchType(StrEnum):
    """How expected items (tool calls, graph nodes) are matched against what the agent did.

    Read case-insensitively, by name or value (`"IN_ORDER"`, `"in_order"`, `"in-order"`), as
    Google ADK eval configs write it.
    """

    EXACT = "exact"
    """The same items in the same positions: nothing missing, nothing extra, nothing moved."""
    IN_ORDER = "in_order"
    """The expected items in their order; other items in between are allowed."""
    ANY_ORDER = "any_order"
    """The expected items anywhere, in any order; other items are allowed."""

    @classmethod
    def _missing_(cls, value: object) -> MatchType | None:
        if isinstance(value, str):
            key = value.strip().lower().replace("-", "_").replace(" ", "_")
            for member in cls:
                if member.value == key:
                    return member
        return None


class CriterionConfig(BaseModel):
    """The settings of a criterion. Each criterion reads only the fields it needs:

    - every criterion: `threshold` (the pass mark, 0..1) and `enabled`;
    - the LLM-judged ones: `judge_model`, `num_samples`, `api_style`, and `rubrics` for
      `RubricBasedCriterion`;
    - `ContainsKeywordsCriterion`: `keywords`;
    - `TrajectoryMatchCriterion`: `match_type` and `check_args`; `NodeOrderMatchCriterion`:
      `match_type`.

    The factory methods (`CriterionConfig.trajectory(...)`, ...) build the config of one
    criterion with its settings named.
    """

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    threshold: float = Field(default=DEFAULT_THRESHOLD, ge=0.0, le=1.0)
    """The score at or above which the criterion passes."""
    enabled: bool = True
    """A disabled criterion gives no result in a run."""
    judge_model: str = DEFAULT_JUDGE_MODEL
    """The judge of the LLM criteria: `provider:model` (`openai:gpt-4o-mini`), or a bare model
    name whose provider is told by its name (`gemini-*` → google, `gpt-*`/`o1`… → openai,
    `claude-*` → anthropic; any other → openai, for OpenAI-compatible servers)."""
    num_samples: int = Field(default=3, ge=1)
    """How many judge samples the LLM criteria average."""
    api_style: str = "responses"
    """The OpenAI API style asked for: `responses` or `chat` (agenteval's openai judge serves
    both through chat completions with a strict JSON-schema verdict; other providers ignore it)."""
    rubrics: list[Rubric] = Field(default_factory=list)
    """The grading rules of `RubricBasedCriterion`."""
    keywords: list[str] = Field(default_factory=list)
    """The words `ContainsKeywordsCriterion` looks for."""
    match_type: MatchType = MatchType.EXACT
    """How `TrajectoryMatchCriterion` and `NodeOrderMatchCriterion` match."""
    check_args: bool = False
    """Whether `TrajectoryMatchCriterion` also compares tool arguments."""

    @field_validator("keywords", mode="before")
    @classmethod
    def _keyword_list(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    # --- one factory per criterion with settings ----------------------------------------------

    @classmethod
    def exact_match(cls, threshold: float = DEFAULT_THRESHOLD) -> CriterionConfig:
        """For `ExactMatchCriterion`."""
        return cls(threshold=threshold)

    @classmethod
    def contains_keywords(
        cls, keywords: Sequence[str], threshold: float = DEFAULT_THRESHOLD
    ) -> CriterionConfig:
        """For `ContainsKeywordsCriterion`: the keywords to look for."""
        return cls(keywords=list(keywords), threshold=threshold)

    @classmethod
    def rouge_match(cls, threshold: float = DEFAULT_THRESHOLD) -> CriterionConfig:
        """For `RougeMatchCriterion`."""
        return cls(threshold=threshold)

    @classmethod
    def llm_judge(
        cls,
        threshold: float = DEFAULT_THRESHOLD,
        num_samples: int = 3,
        judge_model: str | None = None,
        api_style: str | None = None,
    ) -> CriterionConfig:
        """For `LLMJudgeCriterion`. `judge_model` and `api_style` left out keep their defaults
        (and the default judge gives way to the run's judge inside `agenteval.evaluate`)."""
        return cls(
            threshold=threshold,
            num_samples=num_samples,
            **_given(judge_model=judge_model, api_style=api_style),
        )

    @classmethod
    def response_match(
        cls,
        threshold: float = DEFAULT_THRESHOLD,
        num_samples: int = 3,
        judge_model: str | None = None,
        api_style: str | None = None,
    ) -> CriterionConfig:
        """For `ResponseMatchCriterion`."""
        return cls.llm_judge(threshold, num_samples, judge_model, api_style)

    @classmethod
    def factual_accuracy(
        cls,
        threshold: float = DEFAULT_THRESHOLD,
        num_samples: int = 3,
        judge_model: str | None = None,
        api_style: str | None = None,
    ) -> CriterionConfig:
        """For `FactualAccuracyCriterion`."""
        return cls.llm_judge(threshold, num_samples, judge_model, api_style)

    @classmethod
    def hallucination(
        cls,
        threshold: float = DEFAULT_THRESHOLD,
        num_samples: int = 3,
        judge_model: str | None = None,
        api_style: str | None = None,
    ) -> CriterionConfig:
        """For `HallucinationCriterion`."""
        return cls.llm_judge(threshold, num_samples, judge_model, api_style)

    @classmethod
    def safety(
        cls,
        threshold: float = DEFAULT_THRESHOLD,
        num_samples: int = 3,
        judge_model: str | None = None,
        api_style: str | None = None,
    ) -> CriterionConfig:
        """For `SafetyCriterion`."""
        return cls.llm_judge(threshold, num_samples, judge_model, api_style)

    @classmethod
    def rubric_based(
        cls,
        rubrics: Sequence[Rubric | str],
        threshold: float = DEFAULT_THRESHOLD,
        num_samples: int = 3,
        judge_model: str | None = None,
        api_style: str | None = None,
    ) -> CriterionConfig:
        """For `RubricBasedCriterion`: the grading rules."""
        return cls(
            rubrics=[Rubric.model_validate(rubric) for rubric in rubrics],
            threshold=threshold,
            num_samples=num_samples,
            **_given(judge_model=judge_model, api_style=api_style),
        )

    @classmethod
    def trajectory(
        cls,
        threshold: float = DEFAULT_THRESHOLD,
        match_type: MatchType | str = MatchType.EXACT,
        check_args: bool = False,
    ) -> CriterionConfig:
        """For `TrajectoryMatchCriterion`: how calls match, and whether arguments count."""
        return cls(threshold=threshold, match_type=MatchType(match_type), check_args=check_args)

    @classmethod
    def node_order(
        cls,
        threshold: float = DEFAULT_THRESHOLD,
        match_type: MatchType | str = MatchType.EXACT,
    ) -> CriterionConfig:
        """For `NodeOrderMatchCriterion`: how visited nodes match."""
        return cls(threshold=threshold, match_type=MatchType(match_type))

    @classmethod
    def tool_name_match(cls, threshold: float = DEFAULT_THRESHOLD) -> CriterionConfig:
        """For `ToolNameMatchCriterion`."""
        return cls(threshold=threshold)
