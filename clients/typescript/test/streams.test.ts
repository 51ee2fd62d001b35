// The stream helpers against a live server: a market stream that loses its connection resumes
// with Last-Event-ID and misses nothing and repeats nothing; it ends by itself after the
// market's final event; the user stream; refusals end a subscription. And the SSE parser at
// the edges of the format.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createHansonClient, HansonError, marketEvents, Session, subscribe, tickerEvents, unwrap, userEvents, type HansonClient, type StreamEvent } from '../src/index.js';
import { readEvents } from '../src/sse.js';
import { ONE, startServer, testWallet, USER_ADDRESS, USER_KEY, type Server } from './support.js';

let server: Server;
let ops: HansonClient;
let providerId: string;
let tokenId: string;

before(async () => {
  server = await startServer('--stream-ping-secs', '1');
  const provider = server.cli('provider', 'create', '--name', 'Streams');
  providerId = provider.provider_id;
  tokenId = server.cli('token', 'create', '--symbol', 'USDC', '--name', 'USD Coin', '--decimals', '18').token_id;
  ops = createHansonClient({ baseUrl: server.base, apiKey: provider.api_key });
  unwrap(await ops.POST('/v1/providers/treasury/deposits', { body: { token_id: tokenId, amount: String(10_000n * ONE), reference: 't-1' } }));
});
after(async () => {
  await server.stop();
});

async function newMarket(): Promise<{ marketId: string; yes: string }> {
  const creator = unwrap(await ops.POST('/v1/providers/wallets/deposits', {
    body: { wallet_address: '0x00000000000000000000000000000000000000c1', token_id: tokenId, amount: '1', reference: `c-${Math.random()}` },
  }));
  const created = unwrap(await ops.POST('/v1/providers/markets', {
    body: {
      question: 'Will it stream?', token_id: tokenId, liquidity: String(100n * ONE), ends_at: '2030-01-01T00:00:00Z',
      starts_at: '2020-01-01T00:00:00Z', creator_wallet_id: creator.wallet_id,
      outcomes: [{ title: 'Yes', outcome_index: 0 }, { title: 'No', outcome_index: 1 }],
    },
  }));
  return { marketId: created.market.id, yes: created.outcomes[0].id };
}

async function loggedIn(): Promise<{ session: Session; user: HansonClient }> {
  const wallet = testWallet(USER_KEY);
  const session = await Session.login({ baseUrl: server.base, providerId, walletAddress: USER_ADDRESS, signer: wallet.sign });
  return { session, user: createHansonClient({ baseUrl: server.base, session }) };
}

/** A fetch whose first response body breaks off after its first complete event, as a dropped
 *  connection would; every request's Last-Event-ID is recorded. */
function droppingFetch(sent: (string | null)[]): typeof fetch {
  let calls = 0;
  return async (input, init) => {
    sent.push(new Headers(init?.headers).get('last-event-id'));
    const response = await fetch(input, init);
    if (calls++ > 0 || !response.body) return response;
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) return controller.close();
        text += decoder.decode(value, { stream: true });
        const end = text.indexOf('\n\n');
        if (end >= 0) {
          controller.enqueue(new TextEncoder().encode(text.slice(0, end + 2)));
          controller.error(new TypeError('terminated'));
          await reader.cancel();
        }
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}

test('a dropped market stream resumes after the last event seen, then ends after the resolution', async () => {
  const { marketId, yes } = await newMarket();
  const { session, user } = await loggedIn();
  unwrap(await ops.POST('/v1/providers/wallets/deposits', { body: { wallet_address: USER_ADDRESS, token_id: tokenId, amount: String(10n * ONE), reference: `u-${marketId}` } }));
  const bet = (amount: bigint) => user.POST('/v1/markets/{market_id}/bet', {
    params: { path: { market_id: marketId } },
    body: { session_id: session.sessionId, outcome_id: yes, amount: String(amount) },
  }).then(unwrap);
  await bet(ONE);
  await bet(ONE);

  const sent: (string | null)[] = [];
  const drops: unknown[] = [];
  const events: StreamEvent[] = [];
  let sawSecondTrade!: () => void;
  const secondTrade = new Promise<void>((done) => (sawSecondTrade = done));
  const stream = marketEvents(server.base, marketId, (e) => {
    events.push(e);
    if (e.id === '3') sawSecondTrade();
  }, { lastEventId: '0', retryMs: 50, fetch: droppingFetch(sent), onDisconnect: (e) => drops.push(e) });
  await secondTrade;
  // Live after the replay: a third trade, then the resolution that ends the stream.
  const third = await bet(ONE);
  unwrap(await ops.POST('/v1/providers/markets/{market_id}/resolve', {
    params: { path: { market_id: marketId } },
    body: { winning_outcome_id: yes, resolver_wallet_id: 'ops' },
  }));
  await stream.done;
  assert.deepEqual(sent, ['0', '1']);
  assert.equal(drops.length, 1);
  assert.deepEqual(events.map((e) => e.id), ['1', '2', '3', '4', '5']);
  assert.deepEqual(events.map((e) => e.type), ['market.created', 'trade.created', 'trade.created', 'trade.created', 'market.resolved']);
  assert.equal(events[3].data.data.trade.id, third.bet_id);
});

test('without a resume point the market stream starts with a snapshot; close() ends it', async () => {
  const { marketId } = await newMarket();
  const events: StreamEvent[] = [];
  let first!: () => void;
  const got = new Promise<void>((done) => (first = done));
  const stream = marketEvents(server.base, marketId, (e) => {
    events.push(e);
    first();
  });
  await got;
  stream.close();
  await stream.done;
  assert.equal(events[0].type, 'snapshot');
  assert.equal(events[0].id, '1');
  assert.deepEqual(events[0].data.seq, 1);
  assert.equal(events[0].data.market.id, marketId);
});

test('the ticker: the state now, then a tick listing the trade, then the settled state that ends it', async () => {
  const { marketId, yes } = await newMarket();
  const { session, user } = await loggedIn();
  unwrap(await ops.POST('/v1/providers/wallets/deposits', { body: { wallet_address: USER_ADDRESS, token_id: tokenId, amount: String(10n * ONE), reference: `t-${marketId}` } }));
  const ticks: StreamEvent[] = [];
  let joined!: () => void;
  const first = new Promise<void>((done) => (joined = done));
  let traded!: () => void;
  const sawTrade = new Promise<void>((done) => (traded = done));
  let betId = '';
  const ticker = tickerEvents(server.base, marketId, (e) => {
    ticks.push(e);
    joined();
    if (e.data.trades.some((t: { id: string }) => t.id === betId)) traded();
  });
  await first;
  assert.equal(ticks[0].type, 'ticker');
  assert.equal(ticks[0].data.market_id, marketId);
  assert.equal(ticks[0].data.status, 'active');
  assert.deepEqual(ticks[0].data.prices.map((p: { price: string }) => p.price), ['0.500000000000000000', '0.500000000000000000']);
  const bet = unwrap(await user.POST('/v1/markets/{market_id}/bet', {
    params: { path: { market_id: marketId } },
    body: { session_id: session.sessionId, outcome_id: yes, amount: String(ONE) },
  }));
  betId = bet.bet_id;
  if (ticks.some((e) => e.data.trades.some((t: { id: string }) => t.id === betId))) traded();
  await sawTrade;
  unwrap(await ops.POST('/v1/providers/markets/{market_id}/resolve', {
    params: { path: { market_id: marketId } },
    body: { winning_outcome_id: yes, resolver_wallet_id: 'ops' },
  }));
  await ticker.done;
  const last = ticks[ticks.length - 1];
  assert.equal(last.data.status, 'resolved');
  assert.equal(last.data.total_volume, String(ONE));
  assert.equal(Number(last.id), last.data.seq);
});

test('the user stream: a snapshot, then the wallet\'s own changes', async () => {
  const { session } = await loggedIn();
  const events: StreamEvent[] = [];
  let snapshot!: () => void;
  let deposit!: () => void;
  const gotSnapshot = new Promise<void>((done) => (snapshot = done));
  const gotDeposit = new Promise<void>((done) => (deposit = done));
  const stream = userEvents(server.base, session, (e) => {
    events.push(e);
    if (e.type === 'snapshot') snapshot();
    if (e.type === 'deposit.completed') deposit();
  });
  await gotSnapshot;
  const funded = unwrap(await ops.POST('/v1/providers/wallets/deposits', { body: { wallet_address: USER_ADDRESS, token_id: tokenId, amount: '7', reference: 'user-stream-1' } }));
  await gotDeposit;
  stream.close();
  await stream.done;
  assert.equal(events[0].type, 'snapshot');
  const balance = events.find((e) => e.type === 'balance.updated');
  assert.deepEqual(balance?.data.data, { token_id: tokenId, balance: funded.balance_after });
  assert.equal(events.find((e) => e.type === 'deposit.completed')?.data.data.id, funded.id);
});

test('a refused stream ends the subscription with the problem', async () => {
  const told: unknown[] = [];
  const stream = subscribe(server.base, '/v1/markets/no-such-market/events', () => {}, { onError: (e) => told.push(e) });
  await assert.rejects(stream.done, (e: unknown) => e instanceof HansonError && e.status === 404 && e.code === 'not_found');
  assert.equal(told.length, 1);
  assert.ok(told[0] instanceof HansonError);
});

test('a refresh rotates the refresh token and keeps the session', async () => {
  const short = await startServer('--access-token-ttl', '2');
  try {
    const provider = short.cli('provider', 'create', '--name', 'Short tokens');
    const wallet = testWallet(USER_KEY);
    const session = await Session.login({ baseUrl: short.base, providerId: provider.provider_id, walletAddress: USER_ADDRESS, signer: wallet.sign });
    const user = createHansonClient({ baseUrl: short.base, session });
    const [token, refreshToken] = [await session.accessToken(), session.refreshToken];
    // Half of the 2 s lifetime is the margin: past it, the next request refreshes first.
    await new Promise((done) => setTimeout(done, 1100));
    const profile = unwrap(await user.GET('/v1/auth/profile'));
    assert.equal(profile.session_id, session.sessionId);
    assert.notEqual(await session.accessToken(), token);
    assert.notEqual(session.refreshToken, refreshToken);
    // Concurrent callers share one refresh (a spent refresh token would revoke the session).
    await Promise.all([session.refresh(), session.refresh(), session.accessToken()]);
    await new Promise((done) => setTimeout(done, 2100));
    unwrap(await user.GET('/v1/auth/profile'));
    await session.logout();
    const after = await user.GET('/v1/auth/profile');
    assert.equal(after.response.status, 401);
  } finally {
    await short.stop();
  }
});

async function parse(chunks: string[]) {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const c of chunks) controller.enqueue(encoder.encode(c));
      controller.close();
    },
  });
  const out = [];
  for await (const e of readEvents(body)) out.push(e);
  return out;
}

test('the SSE parser: split chunks, CRLF, comments, multi-line data, retry, and a cut-off event', async () => {
  assert.deepEqual(await parse(['ev', 'ent: a\r', '\nid: 7\r\ndata: {"x"', ':1}\r\n\r\n']), [{ event: 'a', id: '7', data: '{"x":1}', retry: undefined }]);
  assert.deepEqual(await parse([': ping\n\n', 'data: one\ndata: two\nretry: 250\n\n']), [{ event: 'message', id: undefined, data: 'one\ntwo', retry: 250 }]);
  assert.deepEqual(await parse(['data:no space\r\r', 'event: cut\ndata: lost']), [{ event: 'message', id: undefined, data: 'no space', retry: undefined }]);
});
