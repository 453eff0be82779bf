/**
 * Request cancellation is not session cancellation.
 *
 * `$/cancel_request` targets one JSON-RPC request. In ACP v2, `session/prompt` is answered
 * `{messageId}` as soon as the prompt is inserted into the conversation, so a cancel that wins the
 * race before insertion gets `-32800`, and one that arrives after insertion changes nothing: the
 * answer is a success and the turn keeps running. Stopping the turn's work is `session/cancel`:
 * `turn.cancel()`. (In ACP v1 the prompt request is the turn itself: both end it.)
 *
 * Run: `npm run build && node dist/examples/session-cancel.js`.
 *
 * @packageDocumentation
 */
import { basename, dirname, join } from 'node:path';
import { AcpClient, RpcError, spawnConnection, type PromptTurn } from '../lib';

const say = (line: string): void => void process.stdout.write(`${line}\n`);

/** How the `session/prompt` request itself was answered. */
const answer = (turn: PromptTurn): Promise<string> =>
  turn.request.then(
    (result) =>
      'messageId' in result ? `success {messageId: ${result.messageId.slice(0, 8)}…}` : `success {stopReason: ${result.stopReason}}`,
    (error: unknown) => (error instanceof RpcError ? `error ${error.code} ${error.message}` : String(error)),
  );

async function main(): Promise<void> {
  // Works from dist/examples/ (compiled) and from examples/ (ts-node): the agent is in dist/.
  const agent = join(__dirname, basename(dirname(__dirname)) === 'dist' ? '.' : '../dist/examples', 'conformance-agent.js');
  const { connection, close } = spawnConnection(process.execPath, [agent]);
  const client = new AcpClient(connection);
  try {
    await client.initialize({ protocolVersion: 2 });
    const { sessionId } = await client.newSession({ cwd: process.cwd() });
    const prompt = [{ type: 'text' as const, text: 'count to a million' }];

    // 1. The agent holds the prompt 500 ms before inserting it: the cancel wins, nothing is inserted.
    const held = client.prompt({ sessionId, prompt, _meta: { insertDelayMs: 500 } });
    held.request.cancel();
    say(`cancel before insertion  → ${await answer(held)}`);

    // 2. The agent inserts at once: the cancel races the answer and loses; the turn goes on.
    const running = client.prompt({ sessionId, prompt, _meta: { workMs: 60_000 } });
    running.request.cancel();
    say(`cancel after insertion   → ${await answer(running)} (the turn is still running)`);

    // 3. Stopping the work is a session matter.
    running.cancel();
    const { stopReason } = await running;
    say(`session/cancel           → state idle, stopReason ${stopReason}`);
  } finally {
    await close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`session-cancel failed: ${String(error)}\n`);
  process.exitCode = 1;
});
