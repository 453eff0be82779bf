/**
 * Safe by default: the remote server binds 127.0.0.1, refuses a browser page of another origin
 * and a wrong bearer token before anything reaches the agent.
 */
import { expect } from 'chai';
import { setImmediate } from 'node:timers/promises';
import { HttpStatusError, connectWebSocket, listenRemote, type LogLevel, type RemoteListener, type RemoteServerOptions } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { expectTcpHandles, serveEcho, tcpHandles, upgradeStatus } from './remote-helpers';

describe('remote server access', () => {
  let baseline: number;
  let listener: RemoteListener | undefined;
  let reached: number;

  async function listen(options: RemoteServerOptions = {}): Promise<RemoteListener> {
    listener = await listenRemote(options, (connection) => {
      reached++;
      serveEcho(connection);
    });
    return listener;
  }

  /** A POST as a browser page would send it (the initialize of Streamable HTTP). */
  function post(url: string, headers: Record<string, string>): Promise<Response> {
    return fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: 2 } }),
    });
  }

  beforeEach(() => {
    baseline = tcpHandles();
    reached = 0;
  });

  afterEach(async () => {
    await listener?.close();
    listener = undefined;
    await expectTcpHandles(baseline);
  });

  it('binds 127.0.0.1 unless a host is given', async () => {
    const { server, host, url } = await listen();
    expect(host).to.equal('127.0.0.1');
    expect(server.address()).to.include({ address: '127.0.0.1' });
    expect(url).to.match(/^ws:\/\/127\.0\.0\.1:\d+\/acp$/);
  });

  describe('Origin', () => {
    it('refuses a cross-origin WebSocket upgrade with 403, and nothing reaches the agent', async () => {
      const { url } = await listen();
      expect(await upgradeStatus(url, { Origin: 'https://evil.example' })).to.deep.equal({ status: 403, body: 'Origin not allowed' });
      expect(reached).to.equal(0);
      expect(listener!.clientCount).to.equal(0);
    });

    it('refuses a cross-origin Streamable HTTP POST with 403, and nothing reaches the agent', async () => {
      const { httpUrl } = await listen();
      const response = await post(httpUrl, { Origin: 'https://evil.example' });
      expect(response.status).to.equal(403);
      expect(await response.text()).to.equal('Origin not allowed');
      expect(reached).to.equal(0);
    });

    it('refuses the "null" origin of a sandboxed page or a file', async () => {
      const { url } = await listen({ allowedOrigins: ['https://editor.example'] });
      expect((await upgradeStatus(url, { Origin: 'null' })).status).to.equal(403);
      expect(reached).to.equal(0);
    });

    it('accepts an origin of the allow-list, compared as an origin (case, default port)', async () => {
      const { url } = await listen({ allowedOrigins: ['https://Editor.example:443'] });
      const client = await connectWebSocket(url, { headers: { Origin: 'https://editor.example' } });
      expect(await client.sendRequest('echo', ['in'])).to.deep.equal(['in']);
      await client.close();
      expect(reached).to.equal(1);
    });

    it('accepts a request without Origin (not from a browser)', async () => {
      const { url } = await listen();
      const client = await connectWebSocket(url);
      expect(await client.sendRequest('echo', ['in'])).to.deep.equal(['in']);
      await client.close();
    });

    it('answers a CORS preflight from an allowed origin, and only from one', async () => {
      const { httpUrl } = await listen({ allowedOrigins: ['https://editor.example'] });
      const preflight = (origin: string): Promise<Response> =>
        fetch(httpUrl, { method: 'OPTIONS', headers: { Origin: origin, 'Access-Control-Request-Method': 'POST' } });
      const allowed = await preflight('https://editor.example');
      expect(allowed.status).to.equal(204);
      expect(allowed.headers.get('access-control-allow-origin')).to.equal('https://editor.example');
      expect(allowed.headers.get('access-control-allow-headers')).to.include('Acp-Connection-Id');
      expect((await preflight('https://evil.example')).status).to.equal(403);
    });
  });

  describe('bearer token', () => {
    it('refuses a wrong token with 401, and nothing reaches the agent', async () => {
      const { url } = await listen({ token: 's3cret' });
      const error = await rejectionOf(connectWebSocket(url, { token: 's3cret-not' }));
      expect(error).to.be.instanceOf(HttpStatusError).and.include({ status: 401 });
      expect(await upgradeStatus(url, { Authorization: 'Bearer s3cre' })).to.deep.include({ status: 401 });
      expect(await upgradeStatus(url, { Authorization: 's3cret' })).to.deep.include({ status: 401 });
      expect(reached).to.equal(0);
    });

    it('refuses a missing token with 401 over WebSocket and Streamable HTTP', async () => {
      const { url, httpUrl } = await listen({ token: 's3cret' });
      expect(await upgradeStatus(url)).to.deep.equal({ status: 401, body: 'Missing or invalid bearer token' });
      expect((await post(httpUrl, {})).status).to.equal(401);
      expect((await post(httpUrl, { Authorization: 'Bearer wrong' })).status).to.equal(401);
      expect(reached).to.equal(0);
    });

    it('accepts the right token', async () => {
      const { url } = await listen({ token: 's3cret' });
      const client = await connectWebSocket(url, { token: 's3cret' });
      expect(await client.sendRequest('echo', [1])).to.deep.equal([1]);
      await client.close();
      expect(reached).to.equal(1);
    });

    it('checks the origin too when the token is right', async () => {
      const { url } = await listen({ token: 's3cret' });
      expect((await upgradeStatus(url, { Authorization: 'Bearer s3cret', Origin: 'https://evil.example' })).status).to.equal(403);
      expect(reached).to.equal(0);
    });
  });

  describe('maxClients', () => {
    it('refuses a client beyond it with 503 over WebSocket and Streamable HTTP, with a warn line, until a client leaves', async () => {
      const warnings: string[] = [];
      const logger = { traces: false, log: (level: LogLevel, message: string) => void (level === 'warn' && warnings.push(message)) };
      const { url, httpUrl } = await listen({ maxClients: 1, logger });
      const first = await connectWebSocket(url);
      expect(await first.sendRequest('echo', [1])).to.deep.equal([1]);
      expect(await upgradeStatus(url)).to.deep.equal({ status: 503, body: 'Too many clients' });
      const refused = await post(httpUrl, {});
      expect(refused.status).to.equal(503);
      expect(await refused.text()).to.equal('Too many clients');
      expect(reached).to.equal(1);
      expect(warnings).to.have.length(2);
      for (const warning of warnings) expect(warning).to.match(/^refused a client from 127\.0\.0\.1:\d+: client limit reached \(1 open\)$/);
      await first.close();
      // The server notices the close a few turns of the event loop later (no event tells the listener's user).
      for (let turn = 0; turn < 50 && listener!.clientCount > 0; turn++) await setImmediate();
      expect(listener!.clientCount).to.equal(0);
      const second = await connectWebSocket(url);
      expect(await second.sendRequest('echo', [2])).to.deep.equal([2]);
      await second.close();
      expect(reached).to.equal(2);
    });
  });

  describe('options', () => {
    it('throws TypeError or RangeError naming a bad option', async () => {
      const noop = (): void => {};
      const errors = await Promise.all(
        [
          { token: 'two words' },
          { allowedOrigins: 'https://a.example' as unknown as string[] },
          { port: 70_000 },
          { path: 'acp' },
          { transports: [] },
          { maxPayload: 1.5 },
          { maxClients: 0 },
        ].map((options) => rejectionOf<Error>(listenRemote(options, noop))),
      );
      expect(errors.map((error) => `${error.name}: ${error.message.split(' ')[0]}`)).to.deep.equal([
        'TypeError: token',
        'TypeError: allowedOrigins',
        'RangeError: port',
        'TypeError: path',
        'TypeError: transports',
        'RangeError: maxPayload',
        'RangeError: maxClients',
      ]);
    });
  });
});
