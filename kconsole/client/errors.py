"""Predicates over API errors and the conflict-retry loop (client-go's apierrors and retry packages).

Every failed request raises :class:`~kconsole.api.types.StatusError`; callers branch on its
reason with these helpers instead of comparing codes by hand.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from kconsole.api.types import StatusError
from kconsole.clock import Clock

T = TypeVar("T")

log = logging.getLogger(__name__)


def _reason(err: BaseException) -> str:
    return err.reason if isinstance(err, StatusError) else ""


def _code(err: BaseException) -> int:
    return err.code if isinstance(err, StatusError) else 0


def is_not_found(err: BaseException) -> bool:
    return _reason(err) == "NotFound" or (_code(err) == 404 and not _reason(err))


def is_already_exists(err: BaseException) -> bool:
    return _reason(err) == "AlreadyExists"


def is_conflict(err: BaseException) -> bool:
    """An optimistic-concurrency failure: re-read and try again (AlreadyExists is not one)."""
    return _reason(err) == "Conflict" or (_code(err) == 409 and _reason(err) not in ("AlreadyExists",))


def is_gone(err: BaseException) -> bool:
    """410 Expired/Gone: a resourceVersion or continue token is too old; relist."""
    return _code(err) == 410


def is_forbidden(err: BaseException) -> bool:
    return _code(err) == 403


def is_invalid(err: BaseException) -> bool:
    return _code(err) == 422


def is_too_many_requests(err: BaseException) -> bool:
    return _code(err) == 429


def is_server_unavailable(err: BaseException) -> bool:
    """503/504/500-class answers: worth retrying later, not a verdict on the request."""
    return _code(err) >= 500


async def retry_on_conflict(
    fn: Callable[[], Awaitable[T]], attempts: int = 5, *, clock: Clock | None = None, delay: float = 0.01
) -> T:
    """Run ``fn`` (which must re-read what it modifies) until it does not raise a Conflict.

    As client-go's ``retry.RetryOnConflict`` with ``DefaultRetry``: up to ``attempts`` tries, waiting
    ``delay`` simulated seconds between them when a clock is given. The last Conflict propagates.
    """
    if attempts < 1:
        raise ValueError(f"retry_on_conflict: attempts must be at least 1, got {attempts}")
    for attempt in range(1, attempts + 1):
        try:
            return await fn()
        except StatusError as err:
            if not is_conflict(err) or attempt == attempts:
                raise
            log.debug("conflict (attempt %d of %d): %s", attempt, attempts, err)
        if clock is not None:
            await clock.sleep(delay)
    raise AssertionError("unreachable")
