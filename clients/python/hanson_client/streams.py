"""Live event streams (Server-Sent Events) with reconnection: the market stream resumes after
a dropped connection with ``Last-Event-ID`` (the last ``id:`` seen), so nothing is missed or
seen twice; the user stream starts again with a fresh snapshot; any other stream of the service
(e.g. a market's ticker) fits ``subscribe`` as it is."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import httpx

from .errors import HansonError
from .session import Session
from .sse import read_events

# Statuses worth another try: the service is busy, restarting or briefly unavailable.
_TRANSIENT = {408, 429, 500, 502, 503, 504}


@dataclass(frozen=True)
class Event:
    """One event: its SSE ``event:`` name, its ``id:`` (a market event's seq) and its parsed data."""

    type: str
    id: str | None
    data: Any


class Subscription:
    """An iterator over a stream's events, reconnecting whenever the connection drops or ends,
    until ``close()``, an ``is_last`` event, or a refusal (a ``HansonError``: an unknown market
    is 404, an ended session 401)."""

    def __init__(
        self,
        base_url: str,
        path: str,
        *,
        resume: bool = True,
        last_event_id: str | None = None,
        headers: Callable[[], dict[str, str]] | dict[str, str] | None = None,
        is_last: Callable[[Event], bool] | None = None,
        retry: float = 1.0,
        read_timeout: float = 60.0,
        on_disconnect: Callable[[Exception], None] | None = None,
        client: httpx.Client | None = None,
    ):
        self.url = base_url.rstrip("/") + path
        self.resume = resume
        self.last_event_id = last_event_id
        """The last event id seen (sent as ``Last-Event-ID`` on the first connection too)."""
        self._headers = headers
        self._is_last = is_last
        self._retry = retry
        self._timeout = httpx.Timeout(10.0, read=read_timeout)
        self._on_disconnect = on_disconnect
        self._own_client = client is None
        self._client = client or httpx.Client()
        self._closed = False
        self._response: httpx.Response | None = None
        self._events = self._run()

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def __enter__(self) -> Subscription:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        """Ends the subscription and its connection (from another thread too: the iteration
        then ends at its next step)."""
        self._closed = True
        if self._response is not None:
            self._response.close()
        try:
            self._events.close()
        except ValueError:  # running in another thread
            pass

    def _run(self) -> Iterator[Event]:
        first = True
        try:
            while not self._closed:
                extra = self._headers() if callable(self._headers) else dict(self._headers or {})
                headers = {"accept": "text/event-stream", **extra}
                if self.last_event_id is not None and (first or self.resume):
                    headers["last-event-id"] = self.last_event_id
                first = False
                try:
                    with self._client.stream("GET", self.url, headers=headers, timeout=self._timeout) as response:
                        self._response = response
                        if response.status_code != 200:
                            error = HansonError.of(response.status_code, response.read())
                            if response.status_code not in _TRANSIENT:
                                raise error
                            raise _Disconnected(error)
                        for raw in read_events(response.iter_bytes()):
                            if raw.retry is not None:
                                self._retry = raw.retry / 1000
                            if raw.id is not None:
                                self.last_event_id = raw.id
                            event = Event(raw.event, raw.id, _parse(raw.data))
                            yield event
                            if self._is_last and self._is_last(event):
                                return
                    self._disconnected(ConnectionError("the stream ended"))
                except _Disconnected as e:
                    self._disconnected(e.cause)
                except (httpx.TransportError, httpx.StreamClosed) as e:
                    if self._closed:
                        return
                    self._disconnected(e)
                time.sleep(self._retry)
        finally:
            if self._own_client:
                self._client.close()

    def _disconnected(self, error: Exception) -> None:
        if self._on_disconnect:
            self._on_disconnect(error)


def subscribe(base_url: str, path: str, **options: Any) -> Subscription:
    """Follows the stream at ``path`` (e.g. ``/v1/markets/{id}/events``); ``options`` as
    ``Subscription`` takes them: ``resume``, ``last_event_id``, ``headers``, ``is_last``,
    ``retry``, ``read_timeout``, ``on_disconnect``, ``client``."""
    return Subscription(base_url, path, **options)


def market_events(base_url: str, market_id: str, **options: Any) -> Subscription:
    """A market's events (``GET /v1/markets/{market_id}/events``): first a ``snapshot`` (or,
    with ``last_event_id``, every event after that seq), then each event live, resuming by seq
    after a dropped connection. Ends by itself after the market's final event."""
    options.setdefault("is_last", ends_market_stream)
    return Subscription(base_url, f"/v1/markets/{quote(market_id, safe='')}/events", **{**options, "resume": True})


def user_events(base_url: str, session: Session, **options: Any) -> Subscription:
    """The logged-in wallet's own changes (``GET /v1/auth/events``): a ``snapshot`` of balances
    and positions, then balance, position, trade and claim events. A reconnection starts with a
    new snapshot (this stream has no resume point)."""
    extra = options.pop("headers", None)

    def headers() -> dict[str, str]:
        base = extra() if callable(extra) else dict(extra or {})
        return {**base, "authorization": f"Bearer {session.access_token()}"}

    return Subscription(base_url, "/v1/auth/events", **{**options, "headers": headers, "resume": False})


def ticker_events(base_url: str, market_id: str, **options: Any) -> Subscription:
    """A market's ticker (``GET /v1/markets/{market_id}/ticker``, on services that offer it):
    its first event is the state now, so a reconnection needs no resume point. It ends after a
    tick of a resolved or cancelled market (``settled_tick``)."""
    options.setdefault("resume", False)
    options.setdefault("is_last", settled_tick)
    return Subscription(base_url, f"/v1/markets/{quote(market_id, safe='')}/ticker", **options)


def settled_tick(event: Event) -> bool:
    """A tick of a resolved or cancelled market. A resolution still in its dispute window may
    change: subscribe again to follow it."""
    return event.type == "ticker" and isinstance(event.data, dict) and event.data.get("status") in ("resolved", "cancelled")


def ends_market_stream(event: Event) -> bool:
    """A market's last event: its cancellation, its finalization, or a resolution that is final
    at once (no dispute window: no ``final_at`` after ``resolved_at``)."""
    if event.type in ("market.cancelled", "market.finalized"):
        return True
    if event.type != "market.resolved":
        return False
    resolution = (event.data or {}).get("data") or {}
    final_at, resolved_at = _instant(resolution.get("final_at")), _instant(resolution.get("resolved_at"))
    return not (final_at and resolved_at and final_at > resolved_at)


def _instant(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None


def _parse(data: str) -> Any:
    try:
        return json.loads(data)
    except ValueError:
        return data


class _Disconnected(Exception):
    def __init__(self, cause: Exception):
        super().__init__("disconnected")
        self.cause = cause
