/**
 * Safe when exposed: a server on an address other machines can reach needs a bearer token, or
 * an explicit opt-out. Nothing here binds such an address: the refusals are checked through the
 * check functions and argument parsing, and the entry points with 192.0.2.1 (TEST-NET-1, on no
 * interface), where a missing refusal would end in a failed listen, never in an exposed server.
 */
import { expect } from 'chai';
import { isLoopbackHost } from '../../lib/hosting';
import { listenConductor, listenRemote, listenRemoteStreams } from '../../lib';
import { UsageError } from '../../lib/cli/arguments';
import { parseServeArgs } from '../../lib/cli/serve';
import { checkExposure } from '../../lib/transports/remote/limits';
import { rejectionOf } from '../helpers/async';

const UNASSIGNED = '192.0.2.1';
const REFUSED =
  /^token is required to listen on "[^"]+", which other machines can reach; set insecureNoToken: true to serve anyone who reaches it$/;

/** Runs `body` with `ACP_WIRE_TOKEN` set to `token` (unset when undefined), then restores it. */
function withToken<T>(token: string | undefined, body: () => T): T {
  const saved = process.env.ACP_WIRE_TOKEN;
  if (token === undefined) delete process.env.ACP_WIRE_TOKEN;
  else process.env.ACP_WIRE_TOKEN = token;
  try {
    return body();
  } finally {
    if (saved === undefined) delete process.env.ACP_WIRE_TOKEN;
    else process.env.ACP_WIRE_TOKEN = saved;
  }
}

describe('a remote server exposed to other machines', () => {
  describe('isLoopbackHost()', () => {
    const loopback = ['127.0.0.1', '127.8.9.10', 'localhost', 'LocalHost', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1'];
    const reachable = [
      '0.0.0.0',
      '::',
      '192.168.1.20',
      '10.0.0.1',
      '::ffff:10.0.0.1',
      'fe80::1',
      'example.com',
      'localhost.example',
      '128.0.0.1',
    ];
    for (const host of loopback) it(`is true for ${host}`, () => expect(isLoopbackHost(host)).to.equal(true));
    for (const host of reachable) it(`is false for ${host}`, () => expect(isLoopbackHost(host)).to.equal(false));
  });

  describe('the library (listenRemote and the servers built on it)', () => {
    it('refuses 0.0.0.0 and :: without a token, with a TypeError naming token and insecureNoToken', () => {
      for (const host of ['0.0.0.0', '::', UNASSIGNED]) {
        expect(() => checkExposure(host, {})).to.throw(TypeError, REFUSED);
        expect(() => checkExposure(host, { insecureNoToken: false })).to.throw(TypeError, REFUSED);
      }
    });

    it('accepts a reachable host with a token, or with insecureNoToken: true, and a loopback host without either', () => {
      expect(() => checkExposure('0.0.0.0', { token: 's3cret' })).to.not.throw();
      expect(() => checkExposure('::', { insecureNoToken: true })).to.not.throw();
      expect(() => checkExposure('127.0.0.1', {})).to.not.throw();
      expect(() => checkExposure('::1', {})).to.not.throw();
    });

    it('throws TypeError for an insecureNoToken that is not a boolean', () => {
      expect(() => checkExposure('127.0.0.1', { insecureNoToken: 'yes' as unknown as boolean })).to.throw(TypeError, /^insecureNoToken /);
    });

    it('listenRemote(), listenRemoteStreams() and listenConductor() reject a reachable host without a token before listening', async () => {
      const errors = await Promise.all([
        rejectionOf<Error>(listenRemote({ host: UNASSIGNED }, () => {})),
        rejectionOf<Error>(listenRemoteStreams({ host: UNASSIGNED }, () => {})),
        rejectionOf<Error>(Promise.resolve().then(() => listenConductor(`ws://${UNASSIGNED}:0/acp`, { components: ['node agent.js'] }))),
      ]);
      for (const error of errors) {
        expect(error).to.be.instanceOf(TypeError);
        expect(error.message).to.match(REFUSED);
      }
    });
  });

  describe('acp-wire serve (argument parsing, before anything listens)', () => {
    const AGENT = 'node agent.js';
    const refusal = (host: string): string =>
      `--host ${host} is reachable from other machines: set ACP_WIRE_TOKEN, or pass --insecure-no-token to serve anyone who reaches it`;

    it('refuses --host 0.0.0.0 and --host :: without ACP_WIRE_TOKEN, as a usage error naming the way out', () => {
      withToken(undefined, () => {
        for (const host of ['0.0.0.0', '::']) {
          expect(() => parseServeArgs(['--host', host, AGENT]))
            .to.throw(UsageError)
            .with.property('message', refusal(host));
        }
      });
    });

    it('accepts --host 0.0.0.0 with ACP_WIRE_TOKEN, or with --insecure-no-token (then passed on as insecureNoToken)', () => {
      const withTokenArgs = withToken('s3cret', () => parseServeArgs(['--host', '0.0.0.0', AGENT]));
      expect(withTokenArgs).to.include({ host: '0.0.0.0', token: 's3cret', insecureNoToken: false });
      const insecure = withToken(undefined, () => parseServeArgs(['--host', '0.0.0.0', '--insecure-no-token', AGENT]));
      expect(insecure).to.include({ host: '0.0.0.0', token: undefined, insecureNoToken: true });
    });

    it('needs neither on the default host or another loopback one', () => {
      withToken(undefined, () => {
        expect(parseServeArgs([AGENT])).to.include({ host: '127.0.0.1', token: undefined });
        expect(parseServeArgs(['--host', '::1', AGENT])).to.include({ host: '::1' });
      });
    });
  });
});
