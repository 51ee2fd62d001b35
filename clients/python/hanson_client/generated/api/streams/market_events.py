from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...models.server_sent_event import ServerSentEvent
from ...types import UNSET, Response, Unset


def _get_kwargs(
    market_id: str,
    *,
    after_seq: int | Unset = UNSET,
    last_event_id: int | Unset = UNSET,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}
    if not isinstance(last_event_id, Unset):
        headers["Last-Event-ID"] = str(last_event_id)

    params: dict[str, Any] = {}

    params["after_seq"] = after_seq

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/markets/{market_id}/events".format(
            market_id=quote(str(market_id), safe=""),
        ),
        "params": params,
    }

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | ServerSentEvent | None:
    if response.status_code == 200:
        response_200 = ServerSentEvent.from_dict(response.text)

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 404:
        response_404 = Problem.from_dict(response.json())

        return response_404

    if response.status_code == 414:
        response_414 = Problem.from_dict(response.json())

        return response_414

    if response.status_code == 422:
        response_422 = Problem.from_dict(response.json())

        return response_422

    if response.status_code == 429:
        response_429 = Problem.from_dict(response.json())

        return response_429

    if response.status_code == 431:
        response_431 = Problem.from_dict(response.json())

        return response_431

    if response.status_code == 500:
        response_500 = Problem.from_dict(response.json())

        return response_500

    if response.status_code == 503:
        response_503 = Problem.from_dict(response.json())

        return response_503

    if client.raise_on_unexpected_status:
        raise errors.UnexpectedStatus(response.status_code, response.content)
    else:
        return None


def _build_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Response[Problem | ServerSentEvent]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_seq: int | Unset = UNSET,
    last_event_id: int | Unset = UNSET,
) -> Response[Problem | ServerSentEvent]:
    """A market's events, live (Server-Sent Events).

     First `event: snapshot` (`id` = the market's current seq, data `{seq, market}`), then every
    market event after it as `event: <type>`, `id: <seq>`, `data: <envelope>`. With
    `Last-Event-ID` or `after_seq`: the events after that seq instead of the snapshot (a
    snapshot when they are no longer kept). `: ping` comments keep the connection alive. The
    stream ends after `market.cancelled`, `market.finalized`, or a `market.resolved` without a
    dispute window, and for a subscriber more than
    10,000 events behind (it resumes with `Last-Event-ID`).

    Args:
        market_id (str):
        after_seq (int | Unset):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ServerSentEvent]
    """

    kwargs = _get_kwargs(
        market_id=market_id,
        after_seq=after_seq,
        last_event_id=last_event_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_seq: int | Unset = UNSET,
    last_event_id: int | Unset = UNSET,
) -> Problem | ServerSentEvent | None:
    """A market's events, live (Server-Sent Events).

     First `event: snapshot` (`id` = the market's current seq, data `{seq, market}`), then every
    market event after it as `event: <type>`, `id: <seq>`, `data: <envelope>`. With
    `Last-Event-ID` or `after_seq`: the events after that seq instead of the snapshot (a
    snapshot when they are no longer kept). `: ping` comments keep the connection alive. The
    stream ends after `market.cancelled`, `market.finalized`, or a `market.resolved` without a
    dispute window, and for a subscriber more than
    10,000 events behind (it resumes with `Last-Event-ID`).

    Args:
        market_id (str):
        after_seq (int | Unset):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ServerSentEvent
    """

    return sync_detailed(
        market_id=market_id,
        client=client,
        after_seq=after_seq,
        last_event_id=last_event_id,
    ).parsed


async def asyncio_detailed(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_seq: int | Unset = UNSET,
    last_event_id: int | Unset = UNSET,
) -> Response[Problem | ServerSentEvent]:
    """A market's events, live (Server-Sent Events).

     First `event: snapshot` (`id` = the market's current seq, data `{seq, market}`), then every
    market event after it as `event: <type>`, `id: <seq>`, `data: <envelope>`. With
    `Last-Event-ID` or `after_seq`: the events after that seq instead of the snapshot (a
    snapshot when they are no longer kept). `: ping` comments keep the connection alive. The
    stream ends after `market.cancelled`, `market.finalized`, or a `market.resolved` without a
    dispute window, and for a subscriber more than
    10,000 events behind (it resumes with `Last-Event-ID`).

    Args:
        market_id (str):
        after_seq (int | Unset):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | ServerSentEvent]
    """

    kwargs = _get_kwargs(
        market_id=market_id,
        after_seq=after_seq,
        last_event_id=last_event_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    market_id: str,
    *,
    client: AuthenticatedClient | Client,
    after_seq: int | Unset = UNSET,
    last_event_id: int | Unset = UNSET,
) -> Problem | ServerSentEvent | None:
    """A market's events, live (Server-Sent Events).

     First `event: snapshot` (`id` = the market's current seq, data `{seq, market}`), then every
    market event after it as `event: <type>`, `id: <seq>`, `data: <envelope>`. With
    `Last-Event-ID` or `after_seq`: the events after that seq instead of the snapshot (a
    snapshot when they are no longer kept). `: ping` comments keep the connection alive. The
    stream ends after `market.cancelled`, `market.finalized`, or a `market.resolved` without a
    dispute window, and for a subscriber more than
    10,000 events behind (it resumes with `Last-Event-ID`).

    Args:
        market_id (str):
        after_seq (int | Unset):
        last_event_id (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | ServerSentEvent
    """

    return (
        await asyncio_detailed(
            market_id=market_id,
            client=client,
            after_seq=after_seq,
            last_event_id=last_event_id,
        )
    ).parsed
