// Verifying a webhook delivery: the Standard Webhooks signature over
// "{webhook-id}.{webhook-timestamp}.{body}" with the endpoint's `whsec_` secret, any of the
// space-separated signatures sent while a rotated secret still applies, and a timestamp within
// five minutes of now.

import { Webhook, WebhookVerificationError } from 'standardwebhooks';

export { WebhookVerificationError };

/** The envelope every delivery carries (the streams' envelope). */
export interface WebhookEvent<T = any> {
  id: string;
  type: string;
  timestamp: string;
  market_id: string | null;
  seq: number | null;
  data: T;
}

type HeaderSource = Headers | Record<string, string | string[] | undefined>;

/**
 * The delivered event if `body` (the raw request body, exactly as received) carries a valid
 * signature by `secret`; otherwise throws WebhookVerificationError. Deduplicate by `id`: a
 * delivery may come more than once.
 */
export function verifyWebhook(secret: string, body: string | Uint8Array, headers: HeaderSource): WebhookEvent {
  const get = (name: string): string => {
    const value = headers instanceof Headers ? headers.get(name) : headers[name] ?? headers[name.toLowerCase()];
    return (Array.isArray(value) ? value.join(' ') : value) ?? '';
  };
  const payload = typeof body === 'string' ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
  return new Webhook(secret).verify(payload, {
    'webhook-id': get('webhook-id'),
    'webhook-timestamp': get('webhook-timestamp'),
    'webhook-signature': get('webhook-signature'),
  }) as WebhookEvent;
}
