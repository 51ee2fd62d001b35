from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.page_leaderboard_row import PageLeaderboardRow
from ...models.problem import Problem
from ...types import UNSET, Response, Unset


def _get_kwargs(
    provider_id: str,
    *,
    token_id: str,
    by: str | Unset = UNSET,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
) -> dict[str, Any]:

    params: dict[str, Any] = {}

    params["token_id"] = token_id

    params["by"] = by

    params["page"] = page

    params["per_page"] = per_page

    params = {k: v for k, v in params.items() if v is not UNSET and v is not None}

    _kwargs: dict[str, Any] = {
        "method": "get",
        "url": "/v1/providers/{provider_id}/leaderboard".format(
            provider_id=quote(str(provider_id), safe=""),
        ),
        "params": params,
    }

    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> PageLeaderboardRow | Problem | None:
    if response.status_code == 200:
        response_200 = PageLeaderboardRow.from_dict(response.json())

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
) -> Response[PageLeaderboardRow | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    provider_id: str,
    *,
    client: AuthenticatedClient | Client,
    token_id: str,
    by: str | Unset = UNSET,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
) -> Response[PageLeaderboardRow | Problem]:
    """A provider's leaderboard over its markets in one token, by profit or volume (may lag up to 5 s).

    Args:
        provider_id (str):
        token_id (str):
        by (str | Unset):
        page (int | Unset):
        per_page (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PageLeaderboardRow | Problem]
    """

    kwargs = _get_kwargs(
        provider_id=provider_id,
        token_id=token_id,
        by=by,
        page=page,
        per_page=per_page,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    provider_id: str,
    *,
    client: AuthenticatedClient | Client,
    token_id: str,
    by: str | Unset = UNSET,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
) -> PageLeaderboardRow | Problem | None:
    """A provider's leaderboard over its markets in one token, by profit or volume (may lag up to 5 s).

    Args:
        provider_id (str):
        token_id (str):
        by (str | Unset):
        page (int | Unset):
        per_page (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PageLeaderboardRow | Problem
    """

    return sync_detailed(
        provider_id=provider_id,
        client=client,
        token_id=token_id,
        by=by,
        page=page,
        per_page=per_page,
    ).parsed


async def asyncio_detailed(
    provider_id: str,
    *,
    client: AuthenticatedClient | Client,
    token_id: str,
    by: str | Unset = UNSET,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
) -> Response[PageLeaderboardRow | Problem]:
    """A provider's leaderboard over its markets in one token, by profit or volume (may lag up to 5 s).

    Args:
        provider_id (str):
        token_id (str):
        by (str | Unset):
        page (int | Unset):
        per_page (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[PageLeaderboardRow | Problem]
    """

    kwargs = _get_kwargs(
        provider_id=provider_id,
        token_id=token_id,
        by=by,
        page=page,
        per_page=per_page,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    provider_id: str,
    *,
    client: AuthenticatedClient | Client,
    token_id: str,
    by: str | Unset = UNSET,
    page: int | Unset = UNSET,
    per_page: int | Unset = UNSET,
) -> PageLeaderboardRow | Problem | None:
    """A provider's leaderboard over its markets in one token, by profit or volume (may lag up to 5 s).

    Args:
        provider_id (str):
        token_id (str):
        by (str | Unset):
        page (int | Unset):
        per_page (int | Unset):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        PageLeaderboardRow | Problem
    """

    return (
        await asyncio_detailed(
            provider_id=provider_id,
            client=client,
            token_id=token_id,
            by=by,
            page=page,
            per_page=per_page,
        )
    ).parsed
