"""Every error the API answers is RFC 9457 application/problem+json with a stable ``code``."""

from __future__ import annotations

import json
from typing import Any, TypeVar

from .generated.models.problem import Problem
from .generated.types import Response

T = TypeVar("T")


class HansonError(Exception):
    """A non-2xx answer, carrying its problem+json body (``problem``)."""

    def __init__(self, status: int, problem: dict[str, Any]):
        self.status = status
        self.problem = problem
        self.code: str = problem.get("code") or "unknown"
        detail = problem.get("detail") or problem.get("title") or "the request failed"
        super().__init__(f"{status} {self.code}: {detail}")

    @classmethod
    def of(cls, status: int, body: bytes) -> HansonError:
        try:
            problem = json.loads(body)
        except ValueError:
            problem = None
        if not isinstance(problem, dict):
            problem = {"status": status, "detail": body[:200].decode(errors="replace")}
        return cls(status, problem)


def unwrap(response: Response[T]) -> T:
    """The parsed body of a successful ``sync_detailed``/``asyncio_detailed`` call, or a
    HansonError for a problem answer::

        market = unwrap(market_detail.sync_detailed(market_id, client=client))
    """
    parsed = response.parsed
    if 200 <= response.status_code < 300 and parsed is not None and not isinstance(parsed, Problem):
        return parsed
    raise HansonError.of(int(response.status_code), response.content)
