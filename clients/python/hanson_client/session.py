"""Wallet login (nonce, a signer callback, login) and an access token refreshed before it
expires. A refresh rotates the refresh token and presenting a spent one revokes the whole
session, so one lock makes concurrent callers share one refresh."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator
from typing import Any

import httpx

from .errors import unwrap
from .generated import AuthenticatedClient, Client
from .generated.api.auth import login, logout, nonce, refresh
from .generated.models import LoginInput, NonceInput, RefreshInput, TokenGrant

Signer = Callable[[str], str]
"""Signs the login message as EIP-191 ``personal_sign`` does (a wallet, or a key in a test)
and returns the 65-byte signature as 0x-hex."""


class Session(httpx.Auth):
    """A logged-in wallet: its ``session_id`` (trades name it) and an access token kept fresh.

    It is an ``httpx.Auth``: every request of ``session.client()`` (or of any httpx client
    given ``auth=session``) carries a fresh access token.
    """

    def __init__(
        self,
        base_url: str,
        provider_id: str,
        wallet_address: str,
        grant: TokenGrant,
        *,
        refresh_margin: float | None = None,
        httpx_args: dict[str, Any] | None = None,
    ):
        self.base_url = base_url
        self.provider_id = provider_id
        self.wallet_address = wallet_address
        self.session_id = grant.session_id
        self._httpx_args = httpx_args or {}
        self._api = Client(base_url=base_url, httpx_args=self._httpx_args)
        self._margin_option = refresh_margin
        self._lock = threading.Lock()
        self._take(grant)

    @classmethod
    def login(
        cls,
        base_url: str,
        provider_id: str,
        wallet_address: str,
        signer: Signer,
        *,
        refresh_margin: float | None = None,
        httpx_args: dict[str, Any] | None = None,
    ) -> Session:
        """Logs in: asks for a nonce, has ``signer`` sign its message, and logs in with the
        signature. ``refresh_margin``: refresh once fewer seconds than this remain (default 60,
        or half the token's lifetime when that is shorter)."""
        with Client(base_url=base_url, httpx_args=httpx_args or {}) as client:
            grant = unwrap(nonce.sync_detailed(client=client, body=NonceInput(wallet_address=wallet_address, provider_id=provider_id)))
            signature = signer(grant.message)
            body = LoginInput(provider_id=provider_id, wallet_address=wallet_address, signature=signature, nonce=grant.nonce)
            token = unwrap(login.sync_detailed(client=client, body=body))
        return cls(base_url, provider_id, wallet_address, token, refresh_margin=refresh_margin, httpx_args=httpx_args)

    @property
    def refresh_token(self) -> str:
        """The current refresh token (rotated by every refresh)."""
        return self._grant.refresh_token

    def access_token(self) -> str:
        """An access token with more than the margin left, refreshing first when needed."""
        with self._lock:
            if time.monotonic() >= self._expires_at - self._margin:
                self._refresh_locked()
            return self._grant.access_token

    def refresh(self) -> None:
        """Rotates the refresh token and gets a new access token now."""
        with self._lock:
            self._refresh_locked()

    def client(self, **kwargs: Any) -> AuthenticatedClient:
        """A generated client whose every request carries a fresh access token."""
        httpx_args = {**self._httpx_args, **kwargs.pop("httpx_args", {}), "auth": self}
        return AuthenticatedClient(base_url=self.base_url, token="", httpx_args=httpx_args, **kwargs)

    def logout(self) -> None:
        """Ends the session: its access and refresh tokens stop working at once."""
        with self.client() as client:
            unwrap(logout.sync_detailed(client=client))

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.access_token()}"
        yield request

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        token = await asyncio.to_thread(self.access_token)
        request.headers["Authorization"] = f"Bearer {token}"
        yield request

    def _refresh_locked(self) -> None:
        body = RefreshInput(refresh_token=self._grant.refresh_token, provider_id=self.provider_id)
        self._take(unwrap(refresh.sync_detailed(client=self._api, body=body)))

    def _take(self, grant: TokenGrant) -> None:
        lifetime = float(grant.expires_in)
        self._grant = grant
        self._expires_at = time.monotonic() + lifetime
        self._margin = self._margin_option if self._margin_option is not None else min(60.0, lifetime / 2)
