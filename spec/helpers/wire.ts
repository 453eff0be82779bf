/**
 * The exact-bytes cases of docs/wire.md, run against spec/fixtures/echo-peer.ts over any line
 * exchange (a child's stdio, a TCP socket).
 */
import { expect } from 'chai';
import type { LineReader } from './lines';
import { spawnFixture, type SpawnedProcess } from './processes';

/** Spawns `echo-peer --tcp 0` and resolves with the process and the port it printed. */
export async function spawnTcpEchoPeer(env: NodeJS.ProcessEnv = {}): Promise<{ peer: SpawnedProcess; port: number }> {
  const peer = spawnFixture('echo-peer', ['--tcp', '0'], { env });
  const line = await peer.stdout.take();
  const match = /^listening (\d+)$/.exec(line);
  if (!match) throw new Error(`unexpected first line from echo-peer: ${JSON.stringify(line)}`);
  return { peer, port: Number(match[1]) };
}

/** Something that takes raw lines and whose answer lines are collected (a child's stdio, a socket). */
export interface LineExchange {
  send(...items: unknown[]): void;
  readonly lines: LineReader;
}

/**
 * One exact-bytes claim of docs/wire.md against echo-peer: the line sent, and the one line expected
 * back (a RegExp where the `data` text is free), or `null` for "nothing is sent back".
 */
interface WireCase {
  readonly title: string;
  readonly send: string;
  readonly expect: string | RegExp | null;
}

/** A JSON string literal, escapes included. */
const JSON_STRING = String.raw`"(?:[^"\\]|\\.)*"`;

const invalidRequest = (id: string): RegExp =>
  new RegExp(String.raw`^\{"jsonrpc":"2\.0","id":${id},"error":\{"code":-32600,"message":"Invalid Request","data":${JSON_STRING}\}\}$`);

/** The error replies and silences of docs/wire.md, as exact lines. */
export const WIRE_CASES: readonly WireCase[] = [
  {
    title: 'answers a line that is not JSON with -32700 and id null',
    send: '{not json',
    expect: '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}',
  },
  {
    title: 'answers a batch (a JSON array) with one -32600 and id null',
    send: '[{"jsonrpc":"2.0","id":1,"method":"echo"},{"jsonrpc":"2.0","id":2,"method":"echo"}]',
    expect: invalidRequest('null'),
  },
  { title: 'answers a JSON value that is not an object with -32600 and id null', send: '42', expect: invalidRequest('null') },
  {
    title: 'answers a request whose jsonrpc is not "2.0" with -32600 and its id',
    send: '{"jsonrpc":"1.0","id":7,"method":"echo"}',
    expect: invalidRequest('7'),
  },
  {
    title: 'answers a request whose method is not a string with -32600 and its id',
    send: '{"jsonrpc":"2.0","id":"m","method":42}',
    expect: invalidRequest('"m"'),
  },
  {
    title: 'answers a request whose id is an object with -32600 and id null',
    send: '{"jsonrpc":"2.0","id":{"a":1},"method":"echo"}',
    expect: invalidRequest('null'),
  },
  {
    title: 'answers a request whose params are a string with -32600 and its id',
    send: '{"jsonrpc":"2.0","id":8,"method":"echo","params":"x"}',
    expect: invalidRequest('8'),
  },
  {
    title: 'answers an unknown method with -32601 and data naming the method',
    send: '{"jsonrpc":"2.0","id":10,"method":"no/such"}',
    expect: '{"jsonrpc":"2.0","id":10,"error":{"code":-32601,"message":"Method not found","data":"no/such"}}',
  },
  {
    title: 'answers a handler that throws an RpcError with exactly its code, message and data',
    send: '{"jsonrpc":"2.0","id":11,"method":"throw","params":{"code":-32042,"message":"Custom","data":{"x":[1,null]}}}',
    expect: '{"jsonrpc":"2.0","id":11,"error":{"code":-32042,"message":"Custom","data":{"x":[1,null]}}}',
  },
  {
    title: 'answers a handler that throws a plain Error with -32603 and a string data',
    send: '{"jsonrpc":"2.0","id":12,"method":"throwPlain","params":{"message":"boom"}}',
    expect: /^\{"jsonrpc":"2\.0","id":12,"error":\{"code":-32603,"message":"Internal error","data":"[^"]*boom[^"]*"\}\}$/,
  },
  {
    title: 'skips blank lines and accepts a line ended by CRLF',
    send: ' \t\r\n\n{"jsonrpc":"2.0","id":"crlf","method":"echo","params":[1]}\r',
    expect: '{"jsonrpc":"2.0","id":"crlf","result":[1]}',
  },
  { title: 'sends nothing for an unhandled notification', send: '{"jsonrpc":"2.0","method":"no/such","params":{}}', expect: null },
  {
    title: 'sends nothing for a $/cancel_request naming an unknown id',
    send: '{"jsonrpc":"2.0","method":"$/cancel_request","params":{"requestId":"unknown"}}',
    expect: null,
  },
  {
    title: 'sends nothing for a response whose id matches no request',
    send: '{"jsonrpc":"2.0","id":404,"result":"stray"}',
    expect: null,
  },
  {
    title: 'sends nothing for a malformed response (both result and error)',
    send: '{"jsonrpc":"2.0","id":405,"result":1,"error":{"code":1,"message":"x"}}',
    expect: null,
  },
];

/** Request lines with ids of every kind, and the exact answer echo-peer's `echo` gives each. */
export const ID_CASES: readonly { readonly id: string; readonly send: string; readonly expect: string }[] = [
  ['"abc"', '"abc"'],
  ['""', 'an empty string'],
  ['"1"', 'the string "1"'],
  ['0', 'zero'],
  ['-5', 'a negative number'],
  ['1.5', 'a fraction'],
  ['9007199254740991', 'the largest safe integer'],
  ['null', 'null'],
].map(([id, what]) => ({
  id: what!,
  send: `{"jsonrpc":"2.0","id":${id},"method":"echo","params":{"id":${id}}}`,
  expect: `{"jsonrpc":"2.0","id":${id},"result":{"id":${id}}}`,
}));

let sentinels = 0;

/** Sends `line` then a sentinel echo; resolves with the lines answered before the sentinel's answer. */
export async function answersBefore(exchange: LineExchange, line: string): Promise<string[]> {
  const id = `sentinel-${++sentinels}`;
  const start = exchange.lines.lines.length;
  exchange.send(line, { jsonrpc: '2.0', id, method: 'echo', params: [id] });
  for (let count = start + 1; ; count++) {
    const lines = await exchange.lines.waitForLines(count);
    if (!lines.at(-1)!.includes(`"id":"${id}"`)) continue;
    expect(lines.at(-1)).to.equal(`{"jsonrpc":"2.0","id":"${id}","result":["${id}"]}`);
    return lines.slice(start, -1);
  }
}

/** Defines one `it` per {@link WIRE_CASES} and {@link ID_CASES} entry against echo-peer. */
export function itAnswersAsWireMdSays(exchange: () => LineExchange): void {
  for (const wireCase of WIRE_CASES) {
    it(wireCase.title, async () => {
      const lines = await answersBefore(exchange(), wireCase.send);
      if (wireCase.expect === null) return void expectLines(lines, []);
      expectLines(lines, [wireCase.expect]);
    });
  }
  for (const idCase of ID_CASES) {
    it(`echoes ${idCase.id} as the id of the answer, byte for byte`, async () => {
      expectLines(await answersBefore(exchange(), idCase.send), [idCase.expect]);
    });
  }
}

/** Defines the `it` that echo-peer answers 1,000 concurrent requests (sleeps and echoes mixed) exactly once each. */
export function itAnswersConcurrentRequests(exchange: () => LineExchange): void {
  it('answers 1,000 concurrent requests exactly once each', async () => {
    const { send, lines } = exchange();
    const start = lines.lines.length;
    const requests = Array.from({ length: 1000 }, (_, id) =>
      id % 2 === 0 ? { jsonrpc: '2.0', id, method: 'sleep', params: { ms: id % 7 } } : { jsonrpc: '2.0', id, method: 'echo', params: [id] },
    );
    send(...requests);
    const answers = (await lines.waitForLines(start + 1000))
      .slice(start)
      .map((line) => JSON.parse(line) as { id: number; result: unknown });
    expect(new Set(answers.map((answer) => answer.id)).size).to.equal(1000);
    for (const { id, result } of answers) expect(result).to.deep.equal(id % 2 === 0 ? { slept: id % 7 } : [id]);
    send({ jsonrpc: '2.0', id: 'last', method: 'echo' });
    expect(await lines.next(1)).to.deep.equal(['{"jsonrpc":"2.0","id":"last","result":null}']);
  });
}

function expectLines(lines: string[], expected: (string | RegExp)[]): void {
  expect(lines).to.have.length(expected.length, `answer lines: ${JSON.stringify(lines)}`);
  expected.forEach((line, i) => {
    if (typeof line === 'string') expect(lines[i]).to.equal(line);
    else expect(lines[i]).to.match(line);
  });
}
