/**
 * What a request handler's outcome answers on the wire, exactly: errors thrown by other JSON-RPC
 * libraries keep their code, anything else is -32603.
 */
import { RequestError } from '@agentclientprotocol/sdk';
import { expect } from 'chai';
import { ResponseError } from 'vscode-jsonrpc';
import { ConnectionClosedError, ErrorCode } from '../lib';
import { RawPeer } from './helpers/peers';

describe('request handler outcomes', () => {
  let peer: RawPeer;
  beforeEach(() => {
    peer = new RawPeer();
  });
  afterEach(() => peer.connection.close());

  /** Registers a handler that throws (or rejects with) `thrown`, calls it, and returns the answer line. */
  async function answerTo(thrown: unknown, how: 'throw' | 'reject' = 'throw'): Promise<string> {
    peer.connection.onRequest('fail', () => {
      if (how === 'reject') return Promise.reject(thrown);
      throw thrown;
    });
    peer.send({ jsonrpc: '2.0', id: 1, method: 'fail' });
    const [line] = await peer.out.waitForLines(1);
    return line!;
  }

  describe('a foreign JSON-RPC error (integer code, string message)', () => {
    it("answers the ACP SDK's RequestError.invalidParams() with its code, message and data", async () => {
      expect(await answerTo(RequestError.invalidParams({ field: 'cwd' }))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"Invalid params","data":{"field":"cwd"}}}',
      );
    });

    it("answers the ACP SDK's RequestError.authRequired() -32000 when a handler rejects with it", async () => {
      expect(await answerTo(RequestError.authRequired(), 'reject')).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Authentication required"}}',
      );
    });

    it("answers vscode-jsonrpc's ResponseError with its code, message and data", async () => {
      expect(await answerTo(new ResponseError(-32001, 'custom failure', { retry: false }))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"custom failure","data":{"retry":false}}}',
      );
    });

    it('answers a plain object with code and message as that error object', async () => {
      expect(await answerTo({ code: ErrorCode.ResourceNotFound, message: 'Resource not found', data: 'file:///x' })).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32002,"message":"Resource not found","data":"file:///x"}}',
      );
    });

    it('leaves out data that JSON cannot serialize, keeping code and message', async () => {
      expect(await answerTo(new ResponseError(-32001, 'big', { n: 1n }))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"big"}}',
      );
    });
  });

  describe('anything else', () => {
    it('answers an Error with a string code (a Node system error) -32603', async () => {
      const error = Object.assign(new Error('no such file'), { code: 'ENOENT' });
      expect(await answerTo(error)).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"Error: no such file"}}',
      );
    });

    it("answers acp-wire's own local errors -32603: their code is a string", async () => {
      expect(await answerTo(new ConnectionClosedError('input ended'))).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"ConnectionClosedError: connection closed (input ended)"}}',
      );
    });

    it('answers an AbortError DOMException -32603, not with its legacy DOM code 20', async () => {
      const abort = AbortSignal.abort().reason as DOMException;
      expect(await answerTo(abort)).to.equal(
        `{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"AbortError: ${abort.message}"}}`,
      );
    });

    it('answers an object whose code is not an integer -32603', async () => {
      expect(await answerTo({ code: 1.5, message: 'not an integer code' })).to.equal(
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"{\\"code\\":1.5,\\"message\\":\\"not an integer code\\"}"}}',
      );
    });
  });

  describe('a returned value that looks like a promise but is not one', () => {
    beforeEach(() => {
      peer.connection.onRequest('ping', () => 'pong');
    });

    it('answers -32603 when reading its then throws, and the connection goes on', async () => {
      peer.connection.onRequest('hostile', () => ({
        get then(): never {
          throw new Error('then getter');
        },
      }));
      peer.send({ jsonrpc: '2.0', id: 1, method: 'hostile' }, { jsonrpc: '2.0', id: 2, method: 'ping' });
      expect(await peer.out.waitForLines(2)).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"Error: then getter"}}',
        '{"jsonrpc":"2.0","id":2,"result":"pong"}',
      ]);
    });

    it('answers -32603 when its then() throws', async () => {
      peer.connection.onRequest('hostile', () => ({
        then(): never {
          throw new TypeError('then call');
        },
      }));
      peer.send({ jsonrpc: '2.0', id: 1, method: 'hostile' }, { jsonrpc: '2.0', id: 2, method: 'ping' });
      expect(await peer.out.waitForLines(2)).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"Internal error","data":"TypeError: then call"}}',
        '{"jsonrpc":"2.0","id":2,"result":"pong"}',
      ]);
    });
  });
});
