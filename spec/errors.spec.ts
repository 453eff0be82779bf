import { expect } from 'chai';
import {
  AcpWireError,
  AlreadyAnsweredError,
  ConnectionClosedError,
  ErrorCode,
  ForwardingError,
  FrameTooLargeError,
  JsonParseError,
  NotificationHandlerError,
  ProtocolError,
  RequestAlreadySentError,
  RequestDetachedError,
  RequestTimeoutError,
  RpcError,
  SerializationError,
} from '../lib';
import { deeplyNestedArray } from './helpers/fuzz';

describe('ErrorCode', () => {
  it('holds the JSON-RPC and ACP codes', () => {
    expect(ErrorCode).to.deep.equal({
      ParseError: -32700,
      InvalidRequest: -32600,
      MethodNotFound: -32601,
      InvalidParams: -32602,
      InternalError: -32603,
      AuthRequired: -32000,
      ResourceNotFound: -32002,
      UnsupportedProtocolVersion: -32022,
      RequestCancelled: -32800,
    });
  });
});

describe('RpcError', () => {
  describe('constructor', () => {
    it('keeps code, message and data and is an Error named RpcError', () => {
      const error = new RpcError(-1, 'custom', { why: [1] });
      expect(error).to.be.instanceOf(Error).and.include({ name: 'RpcError', code: -1, message: 'custom' });
      expect(error.data).to.deep.equal({ why: [1] });
    });

    it('passes the cause through', () => {
      const cause = new Error('root');
      expect(new RpcError(1, 'x', undefined, { cause }).cause).to.equal(cause);
    });

    for (const code of [1.5, Number.NaN, '1' as unknown as number]) {
      it(`throws TypeError for the code ${String(code)}`, () => {
        expect(() => new RpcError(code, 'x')).to.throw(TypeError, /code/);
      });
    }
  });

  describe('#toJSON()', () => {
    it('omits data when it is undefined', () => {
      const json = new RpcError(-32000, 'x').toJSON();
      expect(json).to.deep.equal({ code: -32000, message: 'x' });
      expect(Object.hasOwn(json, 'data')).to.equal(false);
    });

    it('keeps data when it is null or falsy', () => {
      expect(new RpcError(1, 'x', null).toJSON()).to.deep.equal({ code: 1, message: 'x', data: null });
      expect(new RpcError(1, 'x', 0).toJSON()).to.deep.equal({ code: 1, message: 'x', data: 0 });
    });

    it('is what JSON.stringify writes', () => {
      expect(JSON.stringify(new RpcError(2, 'y', 'd'))).to.equal('{"code":2,"message":"y","data":"d"}');
    });
  });

  describe('.fromJSON()', () => {
    it('builds an RpcError that serializes back to the same error object', () => {
      const wire = { code: -32602, message: 'Invalid params', data: { field: 'a' } };
      const error = RpcError.fromJSON(wire);
      expect(error).to.be.instanceOf(RpcError);
      expect(error.toJSON()).to.deep.equal(wire);
    });
  });

  describe('factories', () => {
    const cases: [string, RpcError, object][] = [
      ['parseError()', RpcError.parseError(), { code: -32700, message: 'Parse error' }],
      ['invalidRequest(data)', RpcError.invalidRequest('why'), { code: -32600, message: 'Invalid Request', data: 'why' }],
      ['methodNotFound(method)', RpcError.methodNotFound('x/y'), { code: -32601, message: 'Method not found', data: 'x/y' }],
      ['invalidParams()', RpcError.invalidParams(), { code: -32602, message: 'Invalid params' }],
      ['internalError(data)', RpcError.internalError({ a: 1 }), { code: -32603, message: 'Internal error', data: { a: 1 } }],
      ['requestCancelled()', RpcError.requestCancelled(), { code: -32800, message: 'Request cancelled' }],
    ];
    for (const [name, error, json] of cases) {
      it(`${name} serializes to ${JSON.stringify(json)}`, () => {
        expect(error.toJSON()).to.deep.equal(json);
      });
    }
  });

  describe('.fromThrown()', () => {
    it("returns an RpcError's own error object", () => {
      expect(RpcError.fromThrown(new RpcError(-32001, 'mine', [1]))).to.deep.equal({ code: -32001, message: 'mine', data: [1] });
    });

    it('answers any other Error -32603 with "Name: message" as data', () => {
      expect(RpcError.fromThrown(new TypeError('boom'))).to.deep.equal({
        code: -32603,
        message: 'Internal error',
        data: 'TypeError: boom',
      });
    });

    const described: [string, unknown, string][] = [
      ['a string', 'plain', 'plain'],
      ['an object', { a: 1 }, '{"a":1}'],
      ['undefined', undefined, 'undefined'],
      ['a symbol', Symbol('s'), 'Symbol(s)'],
      ['a BigInt', 5n, '5'],
    ];
    for (const [name, thrown, data] of described) {
      it(`describes ${name} as the string data ${JSON.stringify(data)}`, () => {
        expect(RpcError.fromThrown(thrown)).to.deep.equal({ code: -32603, message: 'Internal error', data });
      });
    }

    it('describes a cyclic object without throwing', () => {
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect(RpcError.fromThrown(cyclic)).to.deep.equal({ code: -32603, message: 'Internal error', data: '[object Object]' });
    });

    it('describes a 100,000-level nested array without throwing', () => {
      const deep: unknown = JSON.parse(deeplyNestedArray(100_000));
      expect(RpcError.fromThrown(deep)).to.deep.equal({ code: -32603, message: 'Internal error', data: '[object Array]' });
    });

    it('describes an object that cannot become a string without throwing', () => {
      const hostile = Object.create(null) as Record<string, unknown>;
      Object.defineProperty(hostile, 'toJSON', {
        value: () => {
          throw new Error('no');
        },
      });
      expect(RpcError.fromThrown(hostile)).to.deep.equal({ code: -32603, message: 'Internal error', data: '[object Object]' });
    });
  });
});

describe('local errors', () => {
  const cause = new Error('underlying');
  const cases: [AcpWireError, string, string][] = [
    [new ConnectionClosedError('input ended', 'm', { cause }), 'ConnectionClosedError', 'ACP_WIRE_CONNECTION_CLOSED'],
    [new FrameTooLargeError(16, { cause }), 'FrameTooLargeError', 'ACP_WIRE_FRAME_TOO_LARGE'],
    [new JsonParseError('{x', { cause }), 'JsonParseError', 'ACP_WIRE_JSON_PARSE'],
    [new ProtocolError('bad', { cause }), 'ProtocolError', 'ACP_WIRE_PROTOCOL'],
    [new AlreadyAnsweredError('m', { cause }), 'AlreadyAnsweredError', 'ACP_WIRE_ALREADY_ANSWERED'],
    [new NotificationHandlerError('n', { cause }), 'NotificationHandlerError', 'ACP_WIRE_NOTIFICATION_HANDLER'],
    [new RequestTimeoutError('m', 50, { cause }), 'RequestTimeoutError', 'ACP_WIRE_REQUEST_TIMEOUT'],
    [new SerializationError('nope', { cause }), 'SerializationError', 'ACP_WIRE_SERIALIZATION'],
    [new RequestDetachedError('m', { cause }), 'RequestDetachedError', 'ACP_WIRE_REQUEST_DETACHED'],
    [new RequestAlreadySentError('m', { cause }), 'RequestAlreadySentError', 'ACP_WIRE_REQUEST_ALREADY_SENT'],
    [new ForwardingError('m', 'cannot forward', { cause }), 'ForwardingError', 'ACP_WIRE_FORWARDING'],
  ];
  for (const [error, name, code] of cases) {
    describe(`${name} (shared contract)`, () => {
      it(`has name ${name} and code ${code}`, () => {
        expect(error).to.include({ name, code });
      });

      it('is an AcpWireError and an Error, not an RpcError', () => {
        expect(error).to.be.instanceOf(AcpWireError).and.instanceOf(Error).and.not.instanceOf(RpcError);
      });
    });
  }

  it('use distinct codes', () => {
    expect(new Set(cases.map(([error]) => error.code)).size).to.equal(cases.length);
  });

  describe('ConnectionClosedError', () => {
    it('names the reason and the method', () => {
      const error = new ConnectionClosedError('peer exited', 'session/prompt');
      expect(error).to.include({ reason: 'peer exited', method: 'session/prompt' });
      expect(error.message).to.include('peer exited').and.include('session/prompt');
    });

    it('names only the reason when there is no method', () => {
      expect(new ConnectionClosedError('closed locally').message).to.equal('connection closed (closed locally)');
    });
  });

  describe('FrameTooLargeError', () => {
    it('keeps the limit and says it in the message', () => {
      const error = new FrameTooLargeError(1024);
      expect(error.limit).to.equal(1024);
      expect(error.message).to.include('1024');
    });
  });

  describe('JsonParseError', () => {
    it('keeps the whole line but shows at most 80 characters of it in the message', () => {
      const line = 'x'.repeat(500);
      const error = new JsonParseError(line);
      expect(error.line).to.equal(line);
      expect(error.message.length).to.be.below(120);
    });
  });

  describe('RequestTimeoutError', () => {
    it('keeps the method and the timeout', () => {
      expect(new RequestTimeoutError('slow', 250)).to.include({ method: 'slow', timeout: 250 });
    });
  });
});
