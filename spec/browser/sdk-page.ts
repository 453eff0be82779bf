/**
 * The script of the page that spec/browser/sdk-websocket.spec.ts opens in headless Chromium,
 * bundled for the browser by the spec (esbuild) from the official ACP SDK: its v2 client over its
 * WebSocket stream, which uses the browser's own `WebSocket`. Loaded as `page.html?acp=<ws URL>`,
 * it runs `initialize`, `session/new`, a turn, then a slow turn that it cancels with
 * `session/cancel`, and leaves a {@link PageOutcome} promise in `globalThis.acpOutcome`.
 */
import * as acp from '@agentclientprotocol/sdk/experimental/v2';
import { createWebSocketStream } from '@agentclientprotocol/sdk/experimental/ws-client';
import { PROMPTS, type PageOutcome, type TurnReport } from './sdk-page-contract';

/** How long the cancelled turn would work (the conformance agent's `_meta.workMs`). */
const SLOW_TURN_MS = 60_000;

/** Reads the session's updates until its idle state; `onText` runs after each text chunk. */
async function readTurn(session: acp.ActiveSession, messageId: string, onText?: () => void): Promise<TurnReport> {
  const kinds: string[] = [];
  let text = '';
  let userMessageId: string | undefined;
  for (;;) {
    const message = await session.nextUpdate();
    if (message.kind === 'stop') return { messageId, userMessageId, kinds, text, stopReason: message.stopReason };
    const { update } = message;
    // The SDK's guards validate each variant's payload against the schema, not just its tag.
    const kind = acp.SessionUpdate.isStateUpdate(update) ? `state_update ${update.state}` : update.sessionUpdate;
    if (kind !== kinds.at(-1)) kinds.push(kind);
    if (acp.SessionUpdate.isUserMessage(update)) userMessageId = update.messageId;
    if (acp.SessionUpdate.isAgentMessageChunk(update) && acp.ContentBlock.isText(update.content)) {
      text += update.content.text;
      onText?.();
    }
  }
}

/** The slow turn: cancelled with `session/cancel` as soon as its first text chunk arrives. */
async function cancelledTurn(ctx: acp.ClientContext, session: acp.ActiveSession): Promise<TurnReport> {
  const { sessionId } = session;
  const prompt = ctx.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [{ type: 'text', text: PROMPTS.cancelled }],
    _meta: { workMs: SLOW_TURN_MS },
  });
  let isCancelSent = false;
  const cancel = (): void => {
    if (isCancelSent) return;
    isCancelSent = true;
    void ctx.notify(acp.methods.agent.session.cancel, { sessionId });
  };
  const [{ messageId }, report] = await Promise.all([prompt, readTurn(session, '', cancel)]);
  return { ...report, messageId };
}

/** Connects to `url` with the SDK's WebSocket stream and runs both turns. */
async function run(url: string): Promise<PageOutcome> {
  const stream = createWebSocketStream(url) as acp.Stream;
  return acp.client({ name: 'acp-wire-browser-page' }).connectWith(stream, async (ctx) => {
    const init = await ctx.request(acp.methods.agent.initialize, {
      protocolVersion: acp.PROTOCOL_VERSION,
      info: { name: 'acp-wire-browser-page', version: '1.0.0' },
    });
    const session = await ctx.buildSession('/tmp').start();
    try {
      const { messageId } = await session.prompt(PROMPTS.turn);
      const turn = await readTurn(session, messageId);
      const cancelled = await cancelledTurn(ctx, session);
      return { ok: true, agentName: init.info?.name ?? '', protocolVersion: init.protocolVersion, turn, cancelled } as const;
    } finally {
      session.dispose();
    }
  });
}

/** An `Error` as "name: message"; a DOM `Event` (what a failed WebSocket rejects with) as its type. */
function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  const type = (error as { type?: unknown } | null)?.type;
  return typeof type === 'string' ? `${type} event` : String(error);
}

const { location } = globalThis as unknown as { location: { search: string } };
const url = new URLSearchParams(location.search).get('acp') ?? '';
(globalThis as { acpOutcome?: Promise<PageOutcome> }).acpOutcome = run(url).catch(
  (error: unknown): PageOutcome => ({ ok: false, error: describeError(error) }),
);
