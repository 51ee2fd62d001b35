from http import HTTPStatus
from typing import Any
from urllib.parse import quote

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.alt_key import AltKey
from ...models.alt_key_input import AltKeyInput
from ...models.problem import Problem
from ...types import Response


def _get_kwargs(
    wallet_address: str,
    key_id: int,
    *,
    body: AltKeyInput,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "put",
        "url": "/v1/providers/alt-keys/{wallet_address}/{key_id}".format(
            wallet_address=quote(str(wallet_address), safe=""),
            key_id=quote(str(key_id), safe=""),
        ),
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> AltKey | Problem | None:
    if response.status_code == 200:
        response_200 = AltKey.from_dict(response.json())

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

    if response.status_code == 408:
        response_408 = Problem.from_dict(response.json())

        return response_408

    if response.status_code == 413:
        response_413 = Problem.from_dict(response.json())

        return response_413

    if response.status_code == 414:
        response_414 = Problem.from_dict(response.json())

        return response_414

    if response.status_code == 415:
        response_415 = Problem.from_dict(response.json())

        return response_415

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
) -> Response[AltKey | Problem]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    wallet_address: str,
    key_id: int,
    *,
    client: AuthenticatedClient,
    body: AltKeyInput,
) -> Response[AltKey | Problem]:
    """Create or replace an alt-network account key in the provider's registry.

    Args:
        wallet_address (str):
        key_id (int):
        body (AltKeyInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AltKey | Problem]
    """

    kwargs = _get_kwargs(
        wallet_address=wallet_address,
        key_id=key_id,
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    wallet_address: str,
    key_id: int,
    *,
    client: AuthenticatedClient,
    body: AltKeyInput,
) -> AltKey | Problem | None:
    """Create or replace an alt-network account key in the provider's registry.

    Args:
        wallet_address (str):
        key_id (int):
        body (AltKeyInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AltKey | Problem
    """

    return sync_detailed(
        wallet_address=wallet_address,
        key_id=key_id,
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    wallet_address: str,
    key_id: int,
    *,
    client: AuthenticatedClient,
    body: AltKeyInput,
) -> Response[AltKey | Problem]:
    """Create or replace an alt-network account key in the provider's registry.

    Args:
        wallet_address (str):
        key_id (int):
        body (AltKeyInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[AltKey | Problem]
    """

    kwargs = _get_kwargs(
        wallet_address=wallet_address,
        key_id=key_id,
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    wallet_address: str,
    key_id: int,
    *,
    client: AuthenticatedClient,
    body: AltKeyInput,
) -> AltKey | Problem | None:
    """Create or replace an alt-network account key in the provider's registry.

    Args:
        wallet_address (str):
        key_id (int):
        body (AltKeyInput):

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        AltKey | Problem
    """

    return (
        await asyncio_detailed(
            wallet_address=wallet_address,
            key_id=key_id,
            client=client,
            body=body,
        )
    ).parsed
