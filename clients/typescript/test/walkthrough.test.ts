// The README's walkthrough through the TypeScript client, against a live `hanson serve`:
// provider and token by the CLI, deposits, a market, a wallet login with a real EIP-191
// signature, a preview, a bet, a sell, holdings, resolve, claim, a clean audit, and the
// market's events replayed from `Last-Event-ID: 0`.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createHansonClient, marketEvents, Session, unwrap, type StreamEvent } from '../src/index.js';
import { ONE, startServer, testWallet, USER_ADDRESS, USER_KEY, type Server } from './support.js';

let server: Server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.stop();
});

test('the README walkthrough, from a fresh start to a settled market', async () => {
  const base = server.base;
  const provider = server.cli('provider', 'create', '--name', 'Acme Games');
  const tokenId: string = server.cli('token', 'create', '--symbol', 'USDC', '--name', 'USD Coin', '--decimals', '18').token_id;
  const ops = createHansonClient({ baseUrl: base, apiKey: provider.api_key });
  const anyone = createHansonClient({ baseUrl: base });

  const treasury = unwrap(await ops.POST('/v1/providers/treasury/deposits', { body: { token_id: tokenId, amount: String(5000n * ONE), reference: 'bank-tx-1' } }));
  assert.equal(treasury.balance_after, String(5000n * ONE));
  const creator = unwrap(await ops.POST('/v1/providers/wallets/deposits', {
    body: { wallet_address: '0x00000000000000000000000000000000000000c1', token_id: tokenId, amount: '1', reference: 'seed-1' },
  }));
  const created = unwrap(await ops.POST('/v1/providers/markets', {
    body: {
      question: 'Will the home team win?', description: 'Resolves on the final whistle.',
      pricing_method: 'lmsr', token_id: tokenId,
      min_bet_amount: '1000', max_bet_amount: String(100n * ONE), liquidity: String(1000n * ONE),
      starts_at: '2020-01-01T00:00:00Z', ends_at: '2030-01-01T00:00:00Z',
      creator_wallet_id: creator.wallet_id, creator_fee_percentage: 1, platform_fee_percentage: 1,
      metadata: { category: 'sports', resolution_source: 'league.example.com' },
      outcomes: [{ title: 'Yes', outcome_index: 0 }, { title: 'No', outcome_index: 1 }],
    },
  }));
  const marketId = created.market.id;
  const found = unwrap(await anyone.POST('/v1/markets/search', { body: { filters: { category: 'sports' } } }));
  assert.deepEqual(found.data.map((m) => m.id), [marketId]);

  // A user logs in with a wallet: the signer callback signs the nonce's message.
  const wallet = testWallet(USER_KEY);
  assert.equal(wallet.address, USER_ADDRESS);
  const session = await Session.login({ baseUrl: base, providerId: provider.provider_id, walletAddress: USER_ADDRESS, signer: wallet.sign });
  const user = createHansonClient({ baseUrl: base, session });
  const profile = unwrap(await user.GET('/v1/auth/profile'));
  assert.equal(profile.wallet_address, USER_ADDRESS);
  assert.equal(profile.session_id, session.sessionId);

  // Trading.
  const funded = unwrap(await ops.POST('/v1/providers/wallets/deposits', {
    body: { wallet_address: USER_ADDRESS, token_id: tokenId, amount: String(50n * ONE), reference: 'user-dep-1' },
  }));
  assert.equal(funded.balance_after, String(50n * ONE));
  const market = unwrap(await anyone.GET('/v1/markets/{market_id}', { params: { path: { market_id: marketId } } }));
  const yes = market.outcomes[0].id;
  const amount = String(10n * ONE);
  const preview = unwrap(await anyone.POST('/v1/markets/bet-preview', { body: { outcome_id: yes, amount } }));
  const betRequest = {
    params: { path: { market_id: marketId }, header: { 'Idempotency-Key': 'walkthrough-bet-1' } },
    body: { session_id: session.sessionId, outcome_id: yes, amount },
  };
  const bet = unwrap(await user.POST('/v1/markets/{market_id}/bet', betRequest));
  // The preview runs the trade's own code on the same state: the same shares, the same fee.
  assert.equal(bet.shares_purchased, preview.estimated_shares);
  assert.equal(bet.transaction_fee, preview.estimated_fee);
  assert.equal(bet.net_amount, preview.net_amount);
  assert.equal(BigInt(bet.transaction_fee), (10n * ONE * 2n + 99n) / 100n);
  assert.equal(bet.balance_after, String(40n * ONE));
  // The same Idempotency-Key runs once: the retry answers the stored receipt.
  const replay = await user.POST('/v1/markets/{market_id}/bet', betRequest);
  assert.equal(replay.response.headers.get('idempotent-replayed'), 'true');
  assert.deepEqual(replay.data, bet);

  const target = String(2n * ONE);
  const salePreview = unwrap(await anyone.POST('/v1/markets/sell-preview', { body: { outcome_id: yes, target_proceeds: target } }));
  const sale = unwrap(await user.POST('/v1/markets/{market_id}/sell', {
    params: { path: { market_id: marketId } },
    body: { session_id: session.sessionId, outcome_id: yes, target_proceeds: target },
  }));
  assert.equal(sale.shares_sold, salePreview.estimated_shares);
  assert.equal(sale.net_proceeds, salePreview.estimated_net_proceeds);
  assert.ok(BigInt(sale.net_proceeds) >= 2n * ONE);
  assert.equal(sale.balance_after, String(40n * ONE + BigInt(sale.net_proceeds)));

  const holdings = unwrap(await user.POST('/v1/markets/holdings/search', { body: {} }));
  assert.equal(holdings.data.length, 1);
  const position = holdings.data[0];
  const shares = BigInt(bet.shares_purchased) - BigInt(sale.shares_sold);
  assert.equal(position.shares, String(shares));

  // The provider resolves "Yes"; the user claims 1 wei per share.
  const resolution = unwrap(await ops.POST('/v1/providers/markets/{market_id}/resolve', {
    params: { path: { market_id: marketId } },
    body: { winning_outcome_id: yes, resolver_wallet_id: 'ops', resolution_source: 'league.example.com', resolution_data: { score: '2-1' } },
  }));
  assert.equal(resolution.payout_ratio, '1');
  assert.equal(resolution.winning_pool, String(shares));
  const claim = unwrap(await user.POST('/v1/markets/positions/{position_id}/claim', {
    params: { path: { position_id: position.id } },
    body: { session_id: session.sessionId },
  }));
  assert.equal(claim.claimed_amount, String(shares));
  assert.equal(claim.balance_after, String(40n * ONE + BigInt(sale.net_proceeds) + shares));
  assert.equal(server.status('audit'), 0, 'hanson audit finds every invariant holding');

  // The market's events replay in order from its creation to its resolution, where the
  // subscription ends by itself.
  const events: StreamEvent[] = [];
  const stream = marketEvents(base, marketId, (e) => void events.push(e), { lastEventId: '0' });
  await stream.done;
  assert.deepEqual(events.map((e) => e.type), ['market.created', 'trade.created', 'trade.created', 'market.resolved']);
  assert.deepEqual(events.map((e) => e.id), ['1', '2', '3', '4']);
  assert.deepEqual(events.map((e) => e.data.seq), [1, 2, 3, 4]);
  assert.equal(events[1].data.data.trade.id, bet.bet_id);
  assert.equal(events[2].data.data.trade.id, sale.transaction_id);
  assert.equal(events[3].data.data.winning_outcome_id, yes);
  assert.equal(stream.lastEventId, '4');
});
