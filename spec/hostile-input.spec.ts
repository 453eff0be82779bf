import { expect } from 'chai';
import { FrameTooLargeError, JsonParseError, ProtocolError, type AcpWireError, type Connection, type Logger } from '../lib';
import { errorsOf } from './helpers/events';
import { deeplyNestedArray } from './helpers/fuzz';
import { RawPeer } from './helpers/peers';

const PARSE_ERROR = '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}';

/** Nesting depth of a value, measured without recursion. */
function depthOf(value: unknown): number {
  let depth = 0;
  let current = value;
  while (Array.isArray(current)) {
    depth++;
    current = current[0];
  }
  return depth;
}

/** Asserts `line` is a -32600 "Invalid Request" reply with `id` and a string `data`. */
function expectInvalidRequest(line: string | undefined, id: unknown): void {
  expect(line, 'a -32600 reply').to.be.a('string');
  const reply = JSON.parse(line!) as { jsonrpc: string; id: unknown; error: { code: number; message: string; data: unknown } };
  expect(Object.keys(reply)).to.deep.equal(['jsonrpc', 'id', 'error']);
  expect(reply).to.deep.include({ jsonrpc: '2.0', id });
  expect(reply.error).to.include({ code: -32600, message: 'Invalid Request' });
  expect(reply.error.data).to.be.a('string');
}

describe('Connection with hostile input', () => {
  let peer: RawPeer;
  let connection: Connection;
  let errors: AcpWireError[];
  beforeEach(() => {
    peer = new RawPeer();
    connection = peer.connection;
    errors = errorsOf(connection);
    connection.onRequest('echo', (params) => params ?? null);
    connection.onRequest('depth', (params) => depthOf(params));
  });
  afterEach(async () => {
    await peer.close();
  });

  describe('lines that are not JSON', () => {
    for (const [name, text] of [
      ['garbage', 'hello world'],
      ['a truncated request', '{"jsonrpc":"2.0","id":1,"method":"echo"'],
      ['a NUL byte', '{"jsonrpc":"2.0","id":1,"method":"e\u0000cho"}'],
      ['a trailing comma', '{"jsonrpc":"2.0","id":1,"method":"echo",}'],
    ] as const) {
      it(`answers ${name} with exactly the -32700 line, emits JsonParseError and goes on`, async () => {
        peer.send(text);
        expect(await peer.linesBeforeProbe()).to.deep.equal([PARSE_ERROR]);
        expect(errors).to.have.length(1);
        expect(errors[0]).to.be.instanceOf(JsonParseError);
        expect(errors[0]!.cause).to.be.instanceOf(SyntaxError);
      });
    }

    it('answers a first request preceded by a UTF-8 byte order mark as if there were none', async () => {
      peer.writeRaw(
        Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"jsonrpc":"2.0","id":1,"method":"echo","params":["first"]}\n')]),
      );
      expect(await peer.linesBeforeProbe()).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["first"]}']);
      expect(errors).to.deep.equal([]);
    });

    it('answers invalid UTF-8 bytes with -32700 and goes on', async () => {
      peer.writeRaw(Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0x0a]));
      expect(await peer.linesBeforeProbe()).to.deep.equal([PARSE_ERROR]);
    });

    it('decodes invalid UTF-8 inside a JSON string as U+FFFD and answers the request', async () => {
      const head = Buffer.from('{"jsonrpc":"2.0","id":1,"method":"echo","params":["a');
      peer.writeRaw(Buffer.concat([head, Buffer.from([0xff, 0xc3]), Buffer.from('"]}\n')]));
      expect(await peer.linesBeforeProbe()).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":["a\uFFFD\uFFFD"]}']);
    });

    it('skips blank lines and lone carriage returns without answering', async () => {
      peer.writeRaw('\n \n\t\n\r\n\r\r\n');
      expect(await peer.linesBeforeProbe()).to.deep.equal([]);
      expect(errors).to.deep.equal([]);
    });
  });

  describe('invalid requests', () => {
    const cases: [string, string, unknown][] = [
      ['a wrong jsonrpc', '{"jsonrpc":"1.0","id":1,"method":"echo"}', 1],
      ['a missing jsonrpc', '{"id":"a","method":"echo"}', 'a'],
      ['a numeric method', '{"jsonrpc":"2.0","id":2,"method":7}', 2],
      ['an array method', '{"jsonrpc":"2.0","id":3,"method":["echo"]}', 3],
      ['an object id', '{"jsonrpc":"2.0","id":{"n":1},"method":"echo"}', null],
      ['an array id', '{"jsonrpc":"2.0","id":[1],"method":"echo"}', null],
      ['a boolean id', '{"jsonrpc":"2.0","id":true,"method":"echo"}', null],
      ['string params', '{"jsonrpc":"2.0","id":4,"method":"echo","params":"p"}', 4],
      ['numeric params', '{"jsonrpc":"2.0","id":5,"method":"echo","params":5}', 5],
      ['null params', '{"jsonrpc":"2.0","id":6,"method":"echo","params":null}', 6],
      ['boolean params of a notification', '{"jsonrpc":"2.0","method":"note","params":true}', null],
      ['a number', '42', null],
      ['a string', '"echo"', null],
      ['null', 'null', null],
    ];
    for (const [name, text, id] of cases) {
      it(`answers ${name} with one -32600 with id ${JSON.stringify(id)}, emits ProtocolError and goes on`, async () => {
        peer.send(text);
        const lines = await peer.linesBeforeProbe();
        expect(lines).to.have.length(1);
        expectInvalidRequest(lines[0], id);
        expect(errors).to.have.length(1);
        expect(errors[0]).to.be.instanceOf(ProtocolError);
      });
    }

    it('answers a batch with one -32600 with id null and runs none of its requests', async () => {
      let calls = 0;
      connection.onRequest('count', () => ++calls);
      peer.send('[{"jsonrpc":"2.0","id":1,"method":"count"},{"jsonrpc":"2.0","id":2,"method":"count"}]');
      const lines = await peer.linesBeforeProbe();
      expect(lines).to.have.length(1);
      expectInvalidRequest(lines[0], null);
      expect(calls).to.equal(0);
    });

    it('answers an empty batch with one -32600 with id null', async () => {
      peer.send('[]');
      const lines = await peer.linesBeforeProbe();
      expect(lines).to.have.length(1);
      expectInvalidRequest(lines[0], null);
    });
  });

  describe('method names of Object.prototype', () => {
    for (const method of ['constructor', '__proto__', 'hasOwnProperty', 'toString', 'valueOf', '__defineGetter__']) {
      it(`answers a request for ${method} with -32601 naming it`, async () => {
        peer.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method }));
        expect(await peer.linesBeforeProbe()).to.deep.equal([
          JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32601, message: 'Method not found', data: method } }),
        ]);
      });

      it(`ignores a notification for ${method}`, async () => {
        peer.send(JSON.stringify({ jsonrpc: '2.0', method, params: {} }));
        expect(await peer.linesBeforeProbe()).to.deep.equal([]);
        expect(errors).to.deep.equal([]);
      });
    }

    it('does not pollute Object.prototype through a __proto__ member', async () => {
      peer.send('{"jsonrpc":"2.0","id":1,"method":"echo","params":{"__proto__":{"polluted":true}},"__proto__":{"polluted":true}}');
      expect(await peer.linesBeforeProbe()).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"polluted":true}}}']);
      expect(({} as { polluted?: unknown }).polluted).to.equal(undefined);
    });
  });

  describe('responses', () => {
    it('drops a response whose id matches no pending request without answering it', async () => {
      peer.send('{"jsonrpc":"2.0","id":99,"result":"late"}');
      expect(await peer.linesBeforeProbe()).to.deep.equal([]);
      expect(errors).to.have.length(1);
      expect(errors[0]).to.be.instanceOf(ProtocolError);
    });

    for (const [name, text] of [
      ['both result and error', '{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"x"}}'],
      ['neither result nor error', '{"jsonrpc":"2.0","id":1}'],
      ['a malformed error', '{"jsonrpc":"2.0","id":1,"error":{"code":"1"}}'],
      ['the id as a string', '{"jsonrpc":"2.0","id":"1","result":"wrong type"}'],
    ] as const) {
      it(`drops a response with ${name} and leaves the request pending for the real answer`, async () => {
        const sent = connection.sendRequest('ask');
        expect(await peer.out.take()).to.equal('{"jsonrpc":"2.0","id":1,"method":"ask"}');
        peer.send(text);
        expect(await peer.linesBeforeProbe()).to.deep.equal([]);
        expect(errors).to.have.length(1);
        expect(errors[0]).to.be.instanceOf(ProtocolError);
        expect(connection.pendingCount).to.equal(1);
        peer.send('{"jsonrpc":"2.0","id":1,"result":"right"}');
        expect(await sent).to.equal('right');
      });
    }
  });

  describe('deep nesting', () => {
    const deep = deeplyNestedArray(100_000);

    it('answers a request whose params are nested 100,000 levels deep', async () => {
      peer.send(`{"jsonrpc":"2.0","id":1,"method":"depth","params":${deep}}`);
      expect(await peer.linesBeforeProbe()).to.deep.equal(['{"jsonrpc":"2.0","id":1,"result":100000}']);
    });

    it('answers -32603 with string data when the handler echoes 100,000-level params', async () => {
      peer.send(`{"jsonrpc":"2.0","id":2,"method":"echo","params":${deep}}`);
      const [line] = await peer.linesBeforeProbe();
      const reply = JSON.parse(line!) as { id: number; error: { code: number; data: unknown } };
      expect(reply.id).to.equal(2);
      expect(reply.error.code).to.equal(-32603);
      expect(reply.error.data).to.be.a('string');
    });

    it('answers a batch nested 100,000 levels deep with one -32600', async () => {
      peer.send(deep);
      const lines = await peer.linesBeforeProbe();
      expect(lines).to.have.length(1);
      expectInvalidRequest(lines[0], null);
    });

    it('ignores a $/cancel_request whose requestId is nested 100,000 levels deep', async () => {
      peer.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":${deep}}}`);
      expect(await peer.linesBeforeProbe()).to.deep.equal([]);
    });

    it('ignores a $/cancel_request whose params are nested 100,000 levels deep', async () => {
      peer.send(`{"jsonrpc":"2.0","method":"$/cancel_request","params":${deep}}`);
      expect(await peer.linesBeforeProbe()).to.deep.equal([]);
    });

    it('resolves a sent request whose result is nested 100,000 levels deep', async () => {
      const sent = connection.sendRequest<unknown>('ask');
      await peer.out.take();
      peer.send(`{"jsonrpc":"2.0","id":1,"result":${deep}}`);
      expect(depthOf(await sent)).to.equal(100_000);
    });
  });

  describe('oversize lines', () => {
    /** Writes each line to a connection limited to 64-byte lines; returns what it answered before a probe. */
    async function answersWithLimit64(...lines: string[]): Promise<{ answers: string[]; warnings: unknown[] }> {
      const small = new RawPeer({ maxLineBytes: 64 });
      const smallErrors = errorsOf(small.connection);
      try {
        for (const line of lines) small.send(line);
        return { answers: await small.linesBeforeProbe(), warnings: smallErrors };
      } finally {
        await small.close();
      }
    }

    const big = `"${'x'.repeat(100)}"`;
    /** Longer than the 1,024 first bytes a FrameTooLargeError keeps. */
    const huge = `"${'x'.repeat(2000)}"`;

    it('answers a request line over maxLineBytes -32600 with the id its first bytes show, warns FrameTooLargeError and goes on', async () => {
      const { answers, warnings } = await answersWithLimit64(`{"jsonrpc":"2.0","id":1,"method":"echo","params":[${big}]}`);
      expect(answers).to.deep.equal([
        '{"jsonrpc":"2.0","id":1,"error":{"code":-32600,"message":"Invalid Request","data":"the line exceeds the limit of 64 bytes"}}',
      ]);
      expect(warnings).to.have.length(1);
      expect(warnings[0]).to.be.instanceOf(FrameTooLargeError).and.include({ limit: 64 });
    });

    it('echoes the recovered id byte for byte, a string or an inexact number', async () => {
      const { answers } = await answersWithLimit64(
        `{"id":"a\\"b","method":"echo","jsonrpc":"2.0","params":[${big}]}`,
        `{"jsonrpc":"2.0","method":"echo","id":1.50,"params":[${big}]}`,
      );
      expect(answers.map((line) => line.slice(0, line.indexOf(',"error"')))).to.deep.equal([
        '{"jsonrpc":"2.0","id":"a\\"b"',
        '{"jsonrpc":"2.0","id":1.50',
      ]);
    });

    const unanswered: [string, string][] = [
      ['the id comes after its first 1,024 bytes', `{"jsonrpc":"2.0","method":"echo","params":[${huge}],"id":2}`],
      ['no method comes in its first 1,024 bytes (it may be a response)', `{"jsonrpc":"2.0","id":3,"params":[${huge}],"method":"echo"}`],
      ['it is a response', `{"jsonrpc":"2.0","id":4,"result":[${big}]}`],
      ['it is a notification', `{"jsonrpc":"2.0","method":"note","params":[${big}]}`],
      ['it is not an object', `[${big}]`],
    ];
    for (const [name, line] of unanswered) {
      it(`discards a line over maxLineBytes without answering when ${name}`, async () => {
        const { answers, warnings } = await answersWithLimit64(line);
        expect(answers).to.deep.equal([]);
        expect(warnings).to.have.length(1);
      });
    }
  });

  describe('ids beyond 2^53 and other inexact numbers', () => {
    const ids = ['9007199254740993', '-9007199254740993', '123456789012345678901234567890', '1.50', '1e21', '2.5E-3'];
    // Tokens that parse to a safe integer but are not its canonical text.
    ids.push('1e-400', '1.0000000000000000001', '1.0', '-0', '5E0');
    for (const raw of ids) {
      it(`echoes the id ${raw} byte for byte in a result`, async () => {
        peer.send(`{"jsonrpc":"2.0","id":${raw},"method":"echo","params":[1]}`);
        expect(await peer.linesBeforeProbe()).to.deep.equal([`{"jsonrpc":"2.0","id":${raw},"result":[1]}`]);
      });
    }

    it('echoes the exact id in a -32601 reply', async () => {
      peer.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"missing"}');
      expect(await peer.linesBeforeProbe()).to.deep.equal([
        '{"jsonrpc":"2.0","id":9007199254740993,"error":{"code":-32601,"message":"Method not found","data":"missing"}}',
      ]);
    });

    it('echoes the exact id in a -32600 reply', async () => {
      peer.send('{"jsonrpc":"2.0","id":9007199254740993,"method":"echo","params":"bad"}');
      const lines = await peer.linesBeforeProbe();
      expect(lines[0]).to.match(/^\{"jsonrpc":"2\.0","id":9007199254740993,"error":\{"code":-32600,/);
    });

    it('echoes the exact id when the handler answers later through its responder', async () => {
      connection.onRequest('later', (_params, responder) => void setImmediate(() => responder.respond('done')));
      peer.send('{"jsonrpc":"2.0","params":{"id":1},"id":18446744073709551617,"method":"later"}');
      expect(await peer.out.take()).to.equal('{"jsonrpc":"2.0","id":18446744073709551617,"result":"done"}');
    });

    it('echoes the exact id of a CRLF line', async () => {
      peer.writeRaw('{"jsonrpc":"2.0","method":"echo","id":9007199254740995}\r\n');
      expect(await peer.linesBeforeProbe()).to.deep.equal(['{"jsonrpc":"2.0","id":9007199254740995,"result":null}']);
    });
  });

  describe('log amplification', () => {
    /** A RawPeer whose logger keeps every warn record and counts the questions it was asked. */
    function loggingPeer(enabled: boolean): { peer: RawPeer; records: string[]; asked: () => number } {
      const records: string[] = [];
      let asked = 0;
      const logger: Logger = {
        traces: false,
        isEnabled: () => {
          asked++;
          return enabled;
        },
        log: (_level, message) => void records.push(message),
      };
      return { peer: new RawPeer({ logger }), records, asked: () => asked };
    }

    const megabyte = 'x'.repeat(1024 * 1024);
    const hostile: [string, string][] = [
      [
        'a malformed $/cancel_request with 1 MiB of params',
        `{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":{"big":"${megabyte}"}}}`,
      ],
      ['a response whose 1 MiB id matches nothing', `{"jsonrpc":"2.0","id":"${megabyte}","result":1}`],
    ];
    for (const [name, line] of hostile) {
      it(`logs ${name} in a record of at most 400 characters`, async () => {
        const { peer: logged, records } = loggingPeer(true);
        try {
          logged.send(line);
          await logged.linesBeforeProbe();
          expect(records).to.have.length(1);
          expect(records[0]!.length).to.be.within(1, 400);
        } finally {
          await logged.close();
        }
      });
    }

    it('builds no record for a logger that says warn is off', async () => {
      const { peer: silent, records, asked } = loggingPeer(false);
      try {
        silent.send(hostile[0]![1]);
        await silent.linesBeforeProbe();
        expect(asked()).to.be.at.least(1);
        expect(records).to.deep.equal([]);
      } finally {
        await silent.close();
      }
    });
  });

  describe('without a warning listener', () => {
    it('answers bad lines and goes on without throwing', async () => {
      connection.removeAllListeners('warning');
      peer.writeRaw('{bad\n[]\n{"jsonrpc":"2.0","id":5,"result":1}\n');
      const lines = await peer.linesBeforeProbe();
      expect(lines).to.have.length(2);
      expect(lines[0]).to.equal(PARSE_ERROR);
      expectInvalidRequest(lines[1], null);
    });
  });

  describe('after a run of bad lines', () => {
    it('answers a valid request with its exact line', async () => {
      peer.writeRaw('{bad\n[]\n{"jsonrpc":"2.0","id":7}\n\r\n{"jsonrpc":"2.0","id":{},"method":"x"}\n');
      peer.send('{"jsonrpc":"2.0","id":"ok","method":"echo","params":{"a":"é😀"}}');
      const lines = await peer.linesBeforeProbe();
      expect(lines).to.have.length(4);
      expect(lines[0]).to.equal(PARSE_ERROR);
      expect(lines[3]).to.equal('{"jsonrpc":"2.0","id":"ok","result":{"a":"é😀"}}');
      expect(connection.isClosed).to.equal(false);
    });
  });
});
