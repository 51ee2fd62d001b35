from http import HTTPStatus
from typing import Any

import httpx

from ... import errors
from ...client import AuthenticatedClient, Client
from ...models.login_input import LoginInput
from ...models.problem import Problem
from ...models.token_grant import TokenGrant
from ...types import Response


def _get_kwargs(
    *,
    body: LoginInput,
) -> dict[str, Any]:
    headers: dict[str, Any] = {}

    _kwargs: dict[str, Any] = {
        "method": "post",
        "url": "/v1/auth/login",
    }

    _kwargs["json"] = body.to_dict()

    headers["Content-Type"] = "application/json"

    _kwargs["headers"] = headers
    return _kwargs


def _parse_response(
    *, client: AuthenticatedClient | Client, response: httpx.Response
) -> Problem | TokenGrant | None:
    if response.status_code == 200:
        response_200 = TokenGrant.from_dict(response.json())

        return response_200

    if response.status_code == 400:
        response_400 = Problem.from_dict(response.json())

        return response_400

    if response.status_code == 401:
        response_401 = Problem.from_dict(response.json())

        return response_401

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
) -> Response[Problem | TokenGrant]:
    return Response(
        status_code=HTTPStatus(response.status_code),
        content=response.content,
        headers=response.headers,
        parsed=_parse_response(client=client, response=response),
    )


def sync_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: LoginInput,
) -> Response[Problem | TokenGrant]:
    """Log in with an EIP-191 signature (of the spec's message or of a Sign-In with Ethereum one), or an
    alt-network account key (wallet_type alt).

    Args:
        body (LoginInput): A login as sent: an EIP-191 signature of the nonce's message, or an
            alt-network
            account key's signature (`wallet_type` alt).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TokenGrant]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = client.get_httpx_client().request(
        **kwargs,
    )

    return _build_response(client=client, response=response)


def sync(
    *,
    client: AuthenticatedClient | Client,
    body: LoginInput,
) -> Problem | TokenGrant | None:
    """Log in with an EIP-191 signature (of the spec's message or of a Sign-In with Ethereum one), or an
    alt-network account key (wallet_type alt).

    Args:
        body (LoginInput): A login as sent: an EIP-191 signature of the nonce's message, or an
            alt-network
            account key's signature (`wallet_type` alt).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TokenGrant
    """

    return sync_detailed(
        client=client,
        body=body,
    ).parsed


async def asyncio_detailed(
    *,
    client: AuthenticatedClient | Client,
    body: LoginInput,
) -> Response[Problem | TokenGrant]:
    """Log in with an EIP-191 signature (of the spec's message or of a Sign-In with Ethereum one), or an
    alt-network account key (wallet_type alt).

    Args:
        body (LoginInput): A login as sent: an EIP-191 signature of the nonce's message, or an
            alt-network
            account key's signature (`wallet_type` alt).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Response[Problem | TokenGrant]
    """

    kwargs = _get_kwargs(
        body=body,
    )

    response = await client.get_async_httpx_client().request(**kwargs)

    return _build_response(client=client, response=response)


async def asyncio(
    *,
    client: AuthenticatedClient | Client,
    body: LoginInput,
) -> Problem | TokenGrant | None:
    """Log in with an EIP-191 signature (of the spec's message or of a Sign-In with Ethereum one), or an
    alt-network account key (wallet_type alt).

    Args:
        body (LoginInput): A login as sent: an EIP-191 signature of the nonce's message, or an
            alt-network
            account key's signature (`wallet_type` alt).

    Raises:
        errors.UnexpectedStatus: If the server returns an undocumented status code and Client.raise_on_unexpected_status is True.
        httpx.TimeoutException: If the request takes longer than Client.timeout.

    Returns:
        Problem | TokenGrant
    """

    return (
        await asyncio_detailed(
            client=client,
            body=body,
        )
    ).parsed
