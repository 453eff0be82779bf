/**
 * connectWebSocket() over TLS (`wss://`) against a server with a self-signed certificate for
 * 127.0.0.1 (spec/fixtures/tls/, a test-only key valid for a century): trusted through `ca`,
 * refused without it. A fixture, not openssl at test time: `npm test` needs only Node and npm.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { WebSocketServer } from 'ws';
import { connectWebSocket } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { expectTcpHandles, tcpHandles } from './remote-helpers';

/** The test certificate and its key (made once with `openssl req -x509 -newkey rsa:2048 -nodes -days 36500 -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1`). */
const TLS_FIXTURES = join(__dirname, '..', 'fixtures', 'tls');

describe('connectWebSocket() over wss://', () => {
  let cert: string;
  let server: Server;
  let port: number;
  let baseline: number;

  before(() => {
    cert = readFileSync(join(TLS_FIXTURES, 'cert.pem'), 'utf8');
    server = createServer({ cert, key: readFileSync(join(TLS_FIXTURES, 'key.pem'), 'utf8') });
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
