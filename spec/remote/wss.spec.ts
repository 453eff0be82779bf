/**
 * connectWebSocket() over TLS (`wss://`) against a server with a self-signed certificate made by
 * the test with openssl: trusted through `ca`, refused without it.
 */
import { expect } from 'chai';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { connectWebSocket } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { expectTcpHandles, tcpHandles } from './remote-helpers';

describe('connectWebSocket() over wss://', () => {
  let cert: string;
  let server: Server;
  let port: number;
  let baseline: number;

  before(function () {
    this.timeout(30_000);
    const dir = mkdtempSync(join(tmpdir(), 'acp-wire-tls-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'rsa:2048',
          '-nodes',
          '-subj',
          '/CN=127.0.0.1',
          '-addext',
          'subjectAltName=IP:127.0.0.1',
          '-days',
          '1',
          '-keyout',
          join(dir, 'key.pem'),
          '-out',
          join(dir, 'cert.pem'),
        ],
        { stdio: 'ignore' },
      );
      cert = readFileSync(join(dir, 'cert.pem'), 'utf8');
      const key = readFileSync(join(dir, 'key.pem'), 'utf8');
      server = createServer({ cert, key });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // A raw JSON-RPC echo over TLS: one message per frame, answered with its params.
    const wss = new WebSocketServer({ server });
    wss.on('connection', (ws) => {
      ws.on('message', (data: Buffer) => {
        const { id, params } = JSON.parse(data.toString('utf8')) as { id: number; params: unknown };
        ws.send(JSON.stringify({ jsonrpc: '2.0', id, result: params }));
      });
    });
  });

  beforeEach(async () => {
    baseline = tcpHandles();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });

  afterEach(async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
    await expectTcpHandles(baseline);
  });

  it('connects to a server whose certificate it trusts through ca, and runs requests', async () => {
    const connection = await connectWebSocket(`wss://127.0.0.1:${port}/`, { ca: cert });
    expect(await connection.sendRequest('echo', ['over TLS'])).to.deep.equal(['over TLS']);
    await connection.close();
  });

  it('rejects (without crashing) when the certificate is not trusted', async () => {
    const error = await rejectionOf<Error>(connectWebSocket(`wss://127.0.0.1:${port}/`));
    expect(error.message).to.match(/self[- ]signed/i);
  });
});
