// @hanson/client: typed calls generated from the service's OpenAPI document (openapi-fetch
// over openapi-typescript's types), plus wallet login with refresh, resumable event streams
// and webhook verification.

import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { paths } from './openapi.js';
import type { Session } from './session.js';

export type { components, operations, paths, webhooks } from './openapi.js';
export { HansonError, unwrap, type Problem } from './errors.js';
export { Session, type LoginOptions, type Signer, type TokenGrant } from './session.js';
export {
  endsMarketStream,
  marketEvents,
  settledTick,
  subscribe,
  tickerEvents,
  userEvents,
  type EventHandler,
  type StreamEvent,
  type SubscribeOptions,
  type Subscription,
} from './streams.js';
export { verifyWebhook, WebhookVerificationError, type WebhookEvent } from './webhooks.js';

export type HansonClient = Client<paths>;

export interface HansonClientOptions extends ClientOptions {
  /** The service, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** A provider's API key (`hk_...`) for the provider routes. */
  apiKey?: string;
  /** A logged-in wallet for the user routes: each request carries a fresh access token. */
  session?: Session;
}

/** A typed client of every operation: `api.POST('/v1/markets/search', { body: {} })`. */
export function createHansonClient({ apiKey, session, ...options }: HansonClientOptions): HansonClient {
  const headers = apiKey ? { ...(options.headers as Record<string, string> | undefined), Authorization: `Bearer ${apiKey}` } : options.headers;
  const client = createClient<paths>({ ...options, headers });
  if (session) client.use(session.middleware);
  return client;
}
