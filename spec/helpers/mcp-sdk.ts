/**
 * MCP-over-ACP against the official ACP SDK in specs: an acp-wire Connection wired to an SDK stream
 * with the lines of both directions readable, and the unstable-schema checks of `mcp/message`.
 */
import * as acp from '@agentclientprotocol/sdk/unstable';
import { PassThrough, Readable, Writable } from 'node:stream';
import { Connection } from '../../lib';
import { acpUnstableErrors } from './acp-schema';
import { LineReader } from './lines';

/** What the SDK apps connect to. */
export type SdkStream = ReturnType<typeof acp.ndJsonStream>;

/** An acp-wire Connection and an SDK stream wired to each other, with the lines of both directions. */
export interface SdkHop {
  readonly connection: Connection;
  readonly stream: SdkStream;
  /** Lines the SDK wrote. */
  readonly fromSdk: LineReader;
  /** Lines acp-wire wrote. */
  readonly fromWire: LineReader;
}

/** Builds an {@link SdkHop}. */
export function sdkHop(): SdkHop {
  const toSdk = new PassThrough();
  const toWire = new PassThrough();
  const fromSdk = new LineReader(toWire, { label: 'lines from the SDK' });
  const fromWire = new LineReader(toSdk, { label: 'lines from acp-wire' });
  const connection = new Connection(toWire, toSdk);
  const stream = acp.ndJsonStream(
    Writable.toWeb(toWire) as WritableStream<Uint8Array>,
    Readable.toWeb(toSdk) as ReadableStream<Uint8Array>,
  );
  return { connection, stream, fromSdk, fromWire };
}

/** The schema errors of the params of every `mcp/message` request and notification the readers saw. */
export function mcpSchemaErrors(...readers: LineReader[]): string[] {
  const errors: string[] = [];
  for (const reader of readers) {
    for (const message of reader.messages) {
      const m = message as { id?: unknown; method?: string; params?: unknown };
      if (m.method !== 'mcp/message') continue;
      errors.push(...acpUnstableErrors(m.id === undefined ? 'MessageMcpNotification' : 'MessageMcpRequest', m.params));
    }
  }
  return errors;
}

/** The schema errors of the answers in `answers` to the `mcp/message` requests in `requests`. */
export function mcpAnswerErrors(requests: LineReader, answers: LineReader): string[] {
  const ids = new Set(
    requests.messages.filter((m) => 'method' in m && m.method === 'mcp/message' && 'id' in m).map((m) => (m as { id: unknown }).id),
  );
  return answers.messages
    .filter((m) => !('method' in m) && 'result' in m && ids.has((m as { id: unknown }).id))
    .flatMap((m) => acpUnstableErrors('MessageMcpResponse', (m as { result: unknown }).result));
}
