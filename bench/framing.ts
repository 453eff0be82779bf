/**
 * The framing comparison: the shipped NDJSON framer against `ndjson` 2 and a no-stream
 * baseline, decoding and encoding the same realistic JSON-RPC lines.
 * Run as `node dist/bench/framing.js <lines> <rounds>`; sends its results over IPC.
 *
 * @packageDocumentation
 */
import { once } from 'node:events';
import type { Transform } from 'node:stream';
import * as ndjson from 'ndjson';
import { LineDecoder, NdjsonDecoder, NdjsonEncoder, encodeMessage } from '../lib';

/** Median messages per second of one framer. */
export interface FramerResult {
  direction: 'decode' | 'encode';
  framer: string;
  messagesPerSecond: number;
}

const CHUNK = 64 * 1024;

function sampleMessages(): unknown[] {
  const messages: unknown[] = [];
  for (let i = 0; i < 1000; i++) {
    if (i % 3 === 0)
      messages.push({
        jsonrpc: '2.0',
        id: i,
        method: 'session/prompt',
        params: { sessionId: 'sess_0123456789', prompt: [{ type: 'text', text: `Explain step ${i} of the plan, é ü 日本` }] },
      });
    else if (i % 3 === 1)
      messages.push({ jsonrpc: '2.0', id: i - 1, result: { stopReason: 'end_turn', usage: { input: i, output: i * 2 } } });
    else
      messages.push({
        jsonrpc: '2.0',
        method: 'session/update',
        params: {
          sessionId: 'sess_0123456789',
          update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: `chunk ${i}` } },
        },
      });
  }
  return messages;
}

function chunked(text: string): Buffer[] {
  const bytes = Buffer.from(text);
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += CHUNK) chunks.push(bytes.subarray(at, at + CHUNK));
  return chunks;
}

async function throughStream(stream: Transform, inputs: readonly unknown[]): Promise<number> {
  let n = 0;
  stream.on('data', () => n++);
  for (const input of inputs) stream.write(input);
  stream.end();
  await once(stream, 'end');
  return n;
}

type Run = () => Promise<number> | number;

function decoders(chunks: Buffer[], text: string): Record<string, Run> {
  return {
    'acp-wire LineDecoder': () => {
      let n = 0;
      const decoder = new LineDecoder({ value: () => void n++, error: () => undefined });
      for (const chunk of chunks) decoder.write(chunk);
      decoder.end();
      return n;
    },
    'acp-wire NdjsonDecoder (stream)': () => throughStream(new NdjsonDecoder(), chunks),
    'ndjson.parse() (stream)': () => throughStream(ndjson.parse(), chunks),
    'no library: split + JSON.parse': () => {
      let n = 0;
      for (const line of text.split('\n')) if (line) JSON.parse(line), n++;
      return n;
    },
  };
}

/** Encodes like a connection's writer: lines joined per burst of 100, each burst made bytes. */
function inBursts(messages: unknown[], encode: (message: unknown) => string): number {
  let burst = '';
  let bytes = 0;
  for (let i = 0; i < messages.length; i++) {
    burst += encode(messages[i]);
    if (i % 100 === 99 || i === messages.length - 1) {
      bytes += Buffer.from(burst).length;
      burst = '';
    }
  }
  return bytes > 0 ? messages.length : 0;
}

function encoders(messages: unknown[]): Record<string, Run> {
  return {
    'acp-wire encodeMessage': () => inBursts(messages, encodeMessage),
    'acp-wire NdjsonEncoder (stream)': () => throughStream(new NdjsonEncoder(), messages),
    'ndjson.stringify() (stream)': () => throughStream(ndjson.stringify(), messages),
    'no library: JSON.stringify + \\n': () => inBursts(messages, (message) => `${JSON.stringify(message)}\n`),
  };
}

async function timeRuns(runs: Record<string, Run>, rounds: number, expected: number): Promise<Map<string, number[]>> {
  const rates = new Map<string, number[]>(Object.keys(runs).map((name) => [name, []]));
  for (let round = 0; round <= rounds; round++) {
    for (const [name, run] of Object.entries(runs)) {
      const start = performance.now();
      const n = await run();
      const seconds = (performance.now() - start) / 1000;
      if (n !== expected) throw new Error(`${name} produced ${n} messages, expected ${expected}`);
      if (round > 0) rates.get(name)!.push(n / seconds);
    }
  }
  return rates;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

async function main(): Promise<void> {
  const lines = Number(process.argv[2]);
  const rounds = Number(process.argv[3]);
  const samples = sampleMessages();
  const messages = Array.from({ length: lines }, (_, i) => samples[i % samples.length]);
  const text = messages.map((m) => `${JSON.stringify(m)}\n`).join('');
  const results: FramerResult[] = [];
  for (const [direction, runs] of [
    ['decode', decoders(chunked(text), text)],
    ['encode', encoders(messages)],
  ] as const) {
    for (const [framer, rates] of await timeRuns(runs, rounds, lines))
      results.push({ direction, framer, messagesPerSecond: median(rates) });
  }
  process.send!(results);
  process.disconnect();
}

void main();
