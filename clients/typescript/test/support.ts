// What the tests share: a real `hanson serve` on a fresh SQLite file and a free port, the
// CLI against the same database, a wallet that signs with a private key (EIP-191
// personal_sign, as a browser wallet would), and an HTTP receiver for webhook deliveries.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';

// build/test/support.js -> the repository.
const REPO = resolve(fileURLToPath(import.meta.url), '../../../../..');

/** A well-known test key and its address (the README's); never use it for anything real. */
export const USER_KEY = '0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318';
export const USER_ADDRESS = '0x2c7536e3605d9c16a7a3d7b1898e529396a65c23';
export const ONE = 10n ** 18n;

export function hansonBinary(): string {
  const path = resolve(REPO, process.env.HANSON_BIN ?? 'target/debug/hanson');
  const probe = spawnSync(path, ['--help']);
  if (probe.error) throw new Error(`no hanson binary at ${path}: build it (cargo build -p hanson) or set HANSON_BIN`);
  return path;
}

export interface Server {
  base: string;
  /** Runs `hanson ARGS` on the server's database and parses its JSON output. */
  cli(...args: string[]): any;
  /** Runs `hanson ARGS` and returns its exit status. */
  status(...args: string[]): number;
  stop(): Promise<void>;
}

/** `hanson serve` on a free port and a fresh SQLite file; webhooks may go to loopback. */
export async function startServer(...extra: string[]): Promise<Server> {
  const binary = hansonBinary();
  const dir = mkdtempSync(join(tmpdir(), 'hanson-client-ts-'));
  const env = { ...process.env, HANSON_DATABASE_URL: `sqlite://${dir}/hanson.db` };
  const args = ['serve', '--listen', '127.0.0.1:0', '--webhook-allow-private', '--auth-rate-per-ip', '0', ...extra];
  const child: ChildProcess = spawn(binary, args, { env, stdio: ['ignore', 'pipe', 'ignore'] });
  const first = await new Promise<string>((done, fail) => {
    const lines = createInterface({ input: child.stdout! });
    lines.once('line', done);
    child.once('exit', (code) => fail(new Error(`hanson serve exited with ${code}`)));
  });
  const base = /listening on (http:\/\/\S+)/.exec(first)?.[1];
  if (!base) throw new Error(`hanson serve did not start: ${first}`);
  const run = (args: string[]) => spawnSync(binary, args, { env, encoding: 'utf8' });
  return {
    base,
    cli(...args) {
      const out = run(args);
      if (out.status !== 0) throw new Error(`hanson ${args.join(' ')}: ${out.stderr}`);
      return JSON.parse(out.stdout);
    },
    status: (...args) => run(args).status ?? -1,
    async stop() {
      const exited = new Promise((done) => child.once('exit', done));
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A wallet holding `privateKey`: its address and an EIP-191 `personal_sign` of a message. */
export function testWallet(privateKey: string) {
  const secret = hexToBytes(privateKey.replace(/^0x/, ''));
  const publicKey = secp256k1.getPublicKey(secret, false);
  const address = '0x' + bytesToHex(keccak_256(publicKey.slice(1)).slice(-20));
  const sign = (message: string): string => {
    const text = new TextEncoder().encode(message);
    const prefix = new TextEncoder().encode(`\x19Ethereum Signed Message:\n${text.length}`);
    const digest = keccak_256(new Uint8Array([...prefix, ...text]));
    // `recovered`: the recovery bit, then r and s; EIP-191 wants r, s, then v = 27 + bit.
    const signature = secp256k1.sign(digest, secret, { prehash: false, format: 'recovered' });
    return '0x' + bytesToHex(signature.slice(1)) + (27 + signature[0]).toString(16);
  };
  return { address, sign };
}

export interface Delivery {
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP server on a free loopback port that answers 204 to every POST and hands over
 *  each request's headers and raw body. */
export async function webhookReceiver() {
  const deliveries: Delivery[] = [];
  const waiting: ((d: Delivery) => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      res.writeHead(204).end();
      const delivery = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
      const waiter = waiting.shift();
      if (waiter) waiter(delivery);
      else deliveries.push(delivery);
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/hanson`,
    /** The next delivery (waits up to `ms`). */
    next(ms = 10_000): Promise<Delivery> {
      const ready = deliveries.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((done, fail) => {
        const timer = setTimeout(() => fail(new Error('no delivery arrived')), ms);
        waiting.push((d) => {
          clearTimeout(timer);
          done(d);
        });
      });
    },
    close: () => new Promise<void>((done) => server.close(() => done())),
  };
}
