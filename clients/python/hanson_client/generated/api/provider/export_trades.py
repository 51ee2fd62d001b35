import datetime
from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    *,
    format_: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    market_id: str | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["format"] = format_

    json_from_: str | Unset = UNSET
    if not isinstance(from_, Unset):
        json_from_ = from_.isoformat()
    params["from"] = json_from_

    json_to: str | Unset = UNSET
    if not isinstance(to, Unset):
        json_to = to.isoformat()
    params["to"] = json_to

    params["market_id"] = market_id

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/providers/exports/trades",
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | str | None:
    if response.status_code == 200:
        response_200 = response.text
        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

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
) -> Response[Problem | str]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient,
    format_: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    market_id: str | Unset = UNSET,
) -> Response[Problem | str]:
    """Export the provider's trades (every trade of its markets, in apply order).

     The trade record's fields; CSV with a header row of their names. Streamed: the body ends
    early (the connection is cut, not closed cleanly) if the export fails part-way.

    Args:
        format_ (str | Unset):
        from_ (datetime.datetime | Unset): RFC 3339 time in UTC
        to (datetime.datetime | Unset): RFC 3339 time in UTC
        market_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        format_=format_,
        from_=from_,
        to=to,
        market_id=market_id,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient,
    format_: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    market_id: str | Unset = UNSET,
) -> Problem | str | None:
    """Export the provider's trades (every trade of its markets, in apply order).

     The trade record's fields; CSV with a header row of their names. Streamed: the body ends
    early (the connection is cut, not closed cleanly) if the export fails part-way.

    Args:
        format_ (str | Unset):
        from_ (datetime.datetime | Unset): RFC 3339 time in UTC
        to (datetime.datetime | Unset): RFC 3339 time in UTC
        market_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return sync_detailed(
        client=client,
        format_=format_,
        from_=from_,
        to=to,
        market_id=market_id,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient,
    format_: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    market_id: str | Unset = UNSET,
) -> Response[Problem | str]:
    """Export the provider's trades (every trade of its markets, in apply order).

     The trade record's fields; CSV with a header row of their names. Streamed: the body ends
    early (the connection is cut, not closed cleanly) if the export fails part-way.

    Args:
        format_ (str | Unset):
        from_ (datetime.datetime | Unset): RFC 3339 time in UTC
        to (datetime.datetime | Unset): RFC 3339 time in UTC
        market_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | str]
    """

    kwargs = _get_kwargs(
        format_=format_,
        from_=from_,
        to=to,
        market_id=market_id,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient,
    format_: str | Unset = UNSET,
    from_: datetime.datetime | Unset = UNSET,
    to: datetime.datetime | Unset = UNSET,
    market_id: str | Unset = UNSET,
) -> Problem | str | None:
    """Export the provider's trades (every trade of its markets, in apply order).

     The trade record's fields; CSV with a header row of their names. Streamed: the body ends
    early (the connection is cut, not closed cleanly) if the export fails part-way.

    Args:
        format_ (str | Unset):
        from_ (datetime.datetime | Unset): RFC 3339 time in UTC
        to (datetime.datetime | Unset): RFC 3339 time in UTC
        market_id (str | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | str
    """

    return (
        await asyncio_detailed(
            client=client,
            format_=format_,
            from_=from_,
            to=to,
            market_id=market_id,
        )
    ).parsed
