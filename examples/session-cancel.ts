/**
 * Request cancellation is not session cancellation.
 *
 * `$/cancel_request` targets one JSON-RPC request. `session/prompt` is answered `{messageId}` as
 * soon as the prompt is inserted into the conversation, so a cancel that wins the race before
 * insertion gets `-32800`, and one that arrives after insertion changes nothing: the answer is a
 * success and the turn keeps running. Stopping the turn's work is `session/cancel`.
 *
 * Run: `npm run build && node dist/examples/session-cancel.js`.
 *
 * @packageDocumentation
 */
import { basename, dirname, join } from 'node:path';
import { AcpClient, RpcError, spawnConnection, type PromptResult } from '../lib';

const say = (line: string): void => void process.stdout.write(`${line}\n`);

const outcome = (answer: PromiseLike<PromptResult>): Promise<string> =>
  Promise.resolve(answer).then(
    ({ messageId }) => `success {messageId: ${messageId.slice(0, 8)}…}`,
    (error: unknown) => (error instanceof RpcError ? `error ${error.code} ${error.message}` : String(error)),
  );

async function main(): Promise<void> {
  // Works from dist/examples/ (compiled) and from examples/ (ts-node): the agent is in dist/.
  const agent = join(__dirname, basename(dirname(__dirname)) === 'dist' ? '.' : '../dist/examples', 'conformance-agent.js');
  const { connection, close } = spawnConnection(process.execPath, [agent]);
  const client = new AcpClient(connection);
  try {
    await client.initialize();
    const { sessionId } = await client.newSession({ cwd: process.cwd(), mcpServers: [] });
    const prompt = [{ type: 'text', text: 'count to a million' }];
    const idle = new Promise<string>((resolve) => {
      client.onSessionUpdate(({ update }) => {
        if (update.sessionUpdate === 'state_update' && update.state === 'idle') resolve(String(update.stopReason));
      });
    });

    // 1. The agent holds the prompt 500 ms before inserting it: the cancel wins, nothing is inserted.
    const early = new AbortController();
    const held = client.prompt({ sessionId, prompt, _meta: { insertDelayMs: 500 } }, { signal: early.signal });
    early.abort();
    say(`cancel before insertion  → ${await outcome(held)}`);

    // 2. The agent inserts at once: the cancel races the answer and loses; the turn goes on.
    const racing = client.prompt({ sessionId, prompt, _meta: { workMs: 60_000 } });
    racing.cancel();
    say(`cancel after insertion   → ${await outcome(racing)} (the turn is still running)`);

    // 3. Stopping the work is a session matter.
    client.cancelSession(sessionId);
    say(`session/cancel           → state idle, stopReason ${await idle}`);
  } finally {
    await close();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`session-cancel failed: ${String(error)}\n`);
  process.exitCode = 1;
});
