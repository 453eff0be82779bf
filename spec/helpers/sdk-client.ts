/**
 * The official ACP SDK's client in specs: the conformance agent as a child process spoken to over
 * web streams (either SDK entry point wraps them in its own `ndJsonStream`), and the v2 scenarios
 * that the stdio and the network specs both run against it.
 */
import * as acp from '@agentclientprotocol/sdk/experimental/v2';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { CONFORMANCE_AGENT, ROOT } from './processes';
import { rejectionOf } from './async';

/** The name and version the SDK client gives in `initialize`. */
export const SDK_CLIENT_INFO = { name: 'acp-wire-spec', version: '1.0.0' };

/** The two ends of a child's stdio as web streams: what the SDK's `ndJsonStream` takes. */
export interface WebStdio {
  readonly output: WritableStream<Uint8Array>;
  readonly input: ReadableStream<Uint8Array>;
}

/**
 * Runs `op` with the compiled conformance agent as a child process (call `ensureBuilt()` first),
 * then ends its stdin and fails unless it exits with code 0.
 */
export async function withAgentProcess<T>(op: (stdio: WebStdio) => Promise<T>): Promise<T> {
  const child = spawn(process.execPath, [CONFORMANCE_AGENT], { cwd: ROOT, stdio: ['pipe', 'pipe', 'inherit'] });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const stop = (): Promise<number | null> => {
    child.stdin.end();
    return exited;
  };
  let value: T;
  try {
    value = await op({
      output: Writable.toWeb(child.stdin) as WritableStream<Uint8Array>,
      input: Readable.toWeb(child.stdout) as ReadableStream<Uint8Array>,
    });
  } catch (error) {
    await stop();
    throw error;
  }
  const code = await stop();
  if (code !== 0) throw new Error(`the conformance agent exited with code ${code}`);
  return value;
}

/** Sends the SDK v2 client's `initialize` (version 2, {@link SDK_CLIENT_INFO}). */
export function sdkInitialize(ctx: acp.ClientContext): Promise<acp.InitializeResponse> {
  return ctx.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, info: SDK_CLIENT_INFO });
}

/** What {@link sdkFirstTurn} saw. */
export interface SdkTurn {
  readonly init: acp.InitializeResponse;
  readonly messageId: string;
  readonly text: string;
}

/** Initializes, starts a session, prompts `text` and reads the agent's text until the session is idle. */
export async function sdkFirstTurn(ctx: acp.ClientContext, text: string): Promise<SdkTurn> {
  const init = await sdkInitialize(ctx);
  const session = await ctx.buildSession('/tmp').start();
  try {
    const { messageId } = await session.prompt(text);
    return { init, messageId, text: await session.readTextUntilIdle() };
  } finally {
    session.dispose();
  }
}

/**
 * Initializes, starts a session and sends a prompt the conformance agent holds before inserting
 * it (`_meta.insertDelayMs`); once an echo sent after it is back (the agent answers in order), the
 * SDK cancels the prompt through its `cancellationSignal`. Resolves with the prompt's rejection.
 */
export async function sdkCancelBeforeInsertion(ctx: acp.ClientContext): Promise<unknown> {
  await sdkInitialize(ctx);
  const session = await ctx.buildSession('/tmp').start();
  try {
    const controller = new AbortController();
    const params = { sessionId: session.sessionId, prompt: [{ type: 'text' as const, text: 'held' }], _meta: { insertDelayMs: 60_000 } };
    const prompt = ctx.request(acp.methods.agent.session.prompt, params, { cancellationSignal: controller.signal });
    await ctx.request('_test/echo', {});
    controller.abort();
    return await rejectionOf(prompt);
  } finally {
    session.dispose();
  }
}
