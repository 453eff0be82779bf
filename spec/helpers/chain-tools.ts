/**
 * What the real-peer specs that call a proxy's tool through `acp-wire conduct --mcp-bridge` share:
 * the tool proxy's command line (spec/fixtures/chain-tool-proxy.ts), its event lines on the
 * conductor's stderr, and the bridged endpoint the agent was given.
 */
import { readFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { CHAIN_TOOL_EVENT } from '../fixtures/chain-tool-proxy';
import type { WireMessage } from './messages';
import { ROOT } from './processes';
import { commandLine } from './real-peers';

/** The tool proxy as a conductor component (run through ts-node; set `TS_NODE_PROJECT` to the root tsconfig). */
export const TOOL_PROXY = commandLine(
  process.execPath,
  '-r',
  require.resolve('ts-node/register/transpile-only'),
  join(ROOT, 'spec', 'fixtures', 'chain-tool-proxy.ts'),
);

/** Matches the tool proxy's event lines (on the conductor's stderr) of `event`, and of `tool` when given. */
export function isToolEvent(event: string, tool?: string): (message: WireMessage) => boolean {
  const matches = (message: WireMessage): boolean => {
    const fields = message as Record<string, unknown>;
    return fields[CHAIN_TOOL_EVENT] === event && (tool === undefined || fields.tool === tool);
  };
  return Object.defineProperty(matches, 'name', { value: `the tool proxy's "${event}" event${tool ? ` of ${tool}` : ''}` });
}

/** The URLs of the bridged `http` declarations the agent got in its `session/new`s, read from the conductor's trace file. */
export function bridgedUrls(tracePath: string): string[] {
  return [...readFileSync(tracePath, 'utf8').matchAll(/"url":"(http:\/\/127\.0\.0\.1:\d+\/mcp\/[0-9a-f-]{36})"/g)].map((m) => m[1]!);
}

/** Whether something accepts TCP connections at a URL's port on 127.0.0.1. */
export function isListening(url: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port: Number(new URL(url).port) });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}
