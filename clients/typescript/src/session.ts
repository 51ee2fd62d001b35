// Wallet login (nonce, a signer callback, login) and an access token that is refreshed before
// it expires. A refresh rotates the refresh token and presenting a spent one revokes the whole
// session, so concurrent callers share one refresh.

import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { unwrap } from './errors.js';
import type { components, paths } from './openapi.js';

/** Signs the login message as EIP-191 `personal_sign` does (a wallet, or a key in a test) and
 *  returns the 65-byte signature as 0x-hex. */
export type Signer = (message: string) => string | Promise<string>;

export type TokenGrant = components['schemas']['TokenGrant'];

export interface LoginOptions {
  /** The service, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  providerId: string;
  walletAddress: string;
  signer: Signer;
  /** Refresh once fewer than this many seconds of the access token remain (default 60, or
   *  half the token's lifetime when that is shorter). */
  refreshMarginSeconds?: number;
  fetch?: typeof globalThis.fetch;
}

/** A logged-in wallet: its session id (trades name it) and an access token kept fresh. */
export class Session {
  readonly providerId: string;
  readonly walletAddress: string;
  readonly sessionId: string;
  #api: Client<paths>;
  #grant: TokenGrant;
  #expiresAt = 0;
  #margin: number;
  #marginOption?: number;
  #refreshing?: Promise<void>;

  private constructor(api: Client<paths>, options: LoginOptions, grant: TokenGrant) {
    this.#api = api;
    this.providerId = options.providerId;
    this.walletAddress = options.walletAddress;
    this.sessionId = grant.session_id;
    this.#marginOption = options.refreshMarginSeconds;
    this.#grant = grant;
    this.#margin = 0;
    this.#take(grant);
  }

  /** Logs in: asks for a nonce, has `signer` sign its message, and logs in with the signature. */
  static async login(options: LoginOptions): Promise<Session> {
    const api = createClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch });
    const body = { wallet_address: options.walletAddress, provider_id: options.providerId };
    const nonce = unwrap(await api.POST('/v1/auth/nonce', { body }));
    const signature = await options.signer(nonce.message);
    const grant = unwrap(await api.POST('/v1/auth/login', { body: { ...body, signature, nonce: nonce.nonce } }));
    return new Session(api, options, grant);
  }

  /** The current refresh token (rotated by every refresh). */
  get refreshToken(): string {
    return this.#grant.refresh_token;
  }

  /** An access token with more than the margin left, refreshing first when needed. */
  async accessToken(): Promise<string> {
    if (Date.now() >= this.#expiresAt - this.#margin) await this.refresh();
    return this.#grant.access_token;
  }

  /** Rotates the refresh token and gets a new access token now (one refresh at a time). */
  refresh(): Promise<void> {
    this.#refreshing ??= (async () => {
      try {
        const body = { refresh_token: this.#grant.refresh_token, provider_id: this.providerId };
        this.#take(unwrap(await this.#api.POST('/v1/auth/refresh', { body })));
      } finally {
        this.#refreshing = undefined;
      }
    })();
    return this.#refreshing;
  }

  /** An openapi-fetch middleware that sends a fresh access token with each request:
   *  `api.use(session.middleware)`. */
  readonly middleware: Middleware = {
    onRequest: async ({ request }) => {
      request.headers.set('Authorization', `Bearer ${await this.accessToken()}`);
      return request;
    },
  };

  /** Ends the session: its access and refresh tokens stop working at once. */
  async logout(): Promise<void> {
    const token = await this.accessToken();
    unwrap(await this.#api.POST('/v1/auth/logout', { headers: { Authorization: `Bearer ${token}` } }));
  }

  #take(grant: TokenGrant): void {
    const lifetime = grant.expires_in * 1000;
    this.#grant = grant;
    this.#expiresAt = Date.now() + lifetime;
    this.#margin = this.#marginOption !== undefined ? this.#marginOption * 1000 : Math.min(60_000, lifetime / 2);
  }
}
