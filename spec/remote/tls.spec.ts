/**
 * The remote server over TLS (`tls: { cert, key }`): `wss://` and `https://` with no proxy in
 * front, checked with acp-wire's own clients trusting the test-only certificate for 127.0.0.1
 * (spec/fixtures/tls/) through `ca`.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connectHttp, connectWebSocket, listenRemote, type RemoteListener } from '../../lib';
import { rejectionOf } from '../helpers/async';
import { expectTcpHandles, serveEcho, tcpHandles } from './remote-helpers';

const TLS_FIXTURES = join(__dirname, '..', 'fixtures', 'tls');

describe('listenRemote() over TLS', () => {
  const cert = readFileSync(join(TLS_FIXTURES, 'cert.pem'), 'utf8');
  const key = readFileSync(join(TLS_FIXTURES, 'key.pem'));
  let baseline: number;
  let listener: RemoteListener | undefined;

  async function listen(): Promise<RemoteListener> {
    listener = await listenRemote({ tls: { cert, key }, logger: { traces: false, log: () => {} } }, (connection) => {
      connection.onRequest('initialize', () => ({ protocolVersion: 2 }));
      serveEcho(connection);
    });
    return listener;
  }

  beforeEach(() => {
    baseline = tcpHandles();
  });

  afterEach(async () => {
    await listener?.close();
    listener = undefined;
    await expectTcpHandles(baseline);
  });

  it('has wss:// and https:// URLs', async () => {
    const { url, httpUrl, port } = await listen();
    expect(url).to.equal(`wss://127.0.0.1:${port}/acp`);
    expect(httpUrl).to.equal(`https://127.0.0.1:${port}/acp`);
  });

  it('serves connectWebSocket() over wss:// to a client that trusts the certificate through ca', async () => {
    const { url } = await listen();
    const client = await connectWebSocket(url, { ca: cert });
    expect(await client.sendRequest('echo', ['over wss'])).to.deep.equal(['over wss']);
    await client.close();
  });

  it('serves connectHttp() over https:// to a client that trusts the certificate through ca', async () => {
    const { httpUrl } = await listen();
    const client = connectHttp(httpUrl, { ca: cert });
    expect(await client.sendRequest('initialize', { protocolVersion: 2 })).to.deep.equal({ protocolVersion: 2 });
    expect(await client.sendRequest('echo', ['over https'])).to.deep.equal(['over https']);
    await client.close();
  });

  it('is refused by a client that does not trust the certificate', async () => {
    const { url } = await listen();
    const error = await rejectionOf<Error>(connectWebSocket(url));
    expect(error.message).to.match(/self[- ]signed/i);
    expect(listener!.clientCount).to.equal(0);
  });

  it('throws TypeError naming tls.cert or tls.key when one is missing, and rejects a key that is not PEM', async () => {
    const noop = (): void => {};
    const missingKey = await rejectionOf<Error>(listenRemote({ tls: { cert } as never }, noop));
    expect(missingKey).to.be.instanceOf(TypeError);
    expect(missingKey.message).to.match(/^tls\.key /);
    const missingCert = await rejectionOf<Error>(listenRemote({ tls: { key } as never }, noop));
    expect(missingCert.message).to.match(/^tls\.cert /);
    const notPem = await rejectionOf<Error>(listenRemote({ tls: { cert, key: 'not a key' } }, noop));
    expect(notPem).to.be.an.instanceOf(Error);
  });
});
