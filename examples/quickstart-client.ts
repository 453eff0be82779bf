/**
 * Quick start, client side: starts quickstart-agent as a child process and talks to it over stdio.
 * Run: `npm run build && node dist/examples/quickstart-client.js`
 */
import { join } from 'node:path';
import { RpcError, spawnConnection } from '../lib';

async function main(): Promise<void> {
  const agent = spawnConnection(process.execPath, [join(__dirname, 'quickstart-agent.js')]);
  const { connection } = agent;

  const init = await connection.sendRequest('initialize', { protocolVersion: 2, info: { name: 'quickstart-client', version: '1.0.0' } });
  console.log('initialized:', init);
  console.log(await connection.sendRequest('_example/greet', { name: 'Ada' }));

  try {
    await connection.sendRequest('_example/greet', {});
  } catch (error) {
    if (error instanceof RpcError) console.log('error answer:', error.code, error.message, error.data);
  }

  const waiting = connection.sendRequest('_example/wait', { ms: 60_000 });
  setTimeout(() => waiting.cancel(), 100); // sends $/cancel_request; the agent still answers
  const outcome = await waiting.then(() => 'finished', (error: unknown) => (error instanceof RpcError ? error.message : error));
  console.log('wait:', outcome); // 'Request cancelled' (-32800)

  console.log('agent exited:', await agent.close()); // ends the agent's stdin; it exits by itself
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
