// Webhook verification against a real delivery: an endpoint registered at a local receiver,
// a test event and a deposit sent by the server, each verified with the endpoint's secret;
// a changed body, another secret or an old timestamp is refused.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createHansonClient, unwrap, verifyWebhook, WebhookVerificationError } from '../src/index.js';
import { startServer, webhookReceiver, type Server } from './support.js';

let server: Server;
let receiver: Awaited<ReturnType<typeof webhookReceiver>>;
before(async () => {
  server = await startServer();
  receiver = await webhookReceiver();
});
after(async () => {
  await receiver.close();
  await server.stop();
});

test('a delivery verifies with the endpoint secret, and nothing else does', async () => {
  const provider = server.cli('provider', 'create', '--name', 'Hooks');
  const tokenId: string = server.cli('token', 'create', '--symbol', 'USDC', '--name', 'USD Coin', '--decimals', '18').token_id;
  const ops = createHansonClient({ baseUrl: server.base, apiKey: provider.api_key });
  const endpoint = unwrap(await ops.POST('/v1/providers/webhooks', { body: { url: receiver.url, event_types: ['*'] } }));
  assert.match(endpoint.secret, /^whsec_/);

  unwrap(await ops.POST('/v1/providers/webhooks/{webhook_id}/test', { params: { path: { webhook_id: endpoint.id } } }));
  const delivery = await receiver.next();
  const event = verifyWebhook(endpoint.secret, delivery.body, delivery.headers);
  assert.equal(event.type, 'webhook.test');
  assert.equal(event.id, delivery.headers['webhook-id']);
  assert.equal(event.market_id, null);

  const deposit = unwrap(await ops.POST('/v1/providers/treasury/deposits', { body: { token_id: tokenId, amount: '5', reference: 'hook-1' } }));
  const second = await receiver.next();
  const completed = verifyWebhook(endpoint.secret, new TextEncoder().encode(second.body), new Headers(second.headers as Record<string, string>));
  assert.equal(completed.type, 'deposit.completed');
  assert.equal(completed.data.deposit_id, deposit.deposit_id);

  const refused = (body: string, headers: Record<string, any>, secret = endpoint.secret) =>
    assert.throws(() => verifyWebhook(secret, body, headers), WebhookVerificationError);
  refused(delivery.body.replace('webhook.test', 'webhook.tost'), delivery.headers);
  refused(delivery.body, delivery.headers, 'whsec_' + Buffer.alloc(32, 7).toString('base64'));
  refused(delivery.body, { ...delivery.headers, 'webhook-timestamp': String(Math.floor(Date.now() / 1000) - 600) });
  refused(delivery.body, { ...delivery.headers, 'webhook-signature': undefined });
});
