/**
 * Quick start, agent side: an ACP agent on its own stdin/stdout. Started by quickstart-client.
 * Only protocol lines go to stdout; log to stderr.
 */
import { InitializeGate, RpcError, connectStdio } from '../lib';

const connection = connectStdio({ name: 'quickstart-agent' });
new InitializeGate(connection); // every other request waits for a successful `initialize`

connection.onRequest('initialize', () => ({
  protocolVersion: 2,
  info: { name: 'quickstart-agent', version: '1.0.0' },
  capabilities: { session: {} },
}));

connection.onRequest('_example/greet', ({ name }: { name?: string }) => {
  if (!name) throw RpcError.invalidParams('`name` is required'); // answered as is: -32602
  return { greeting: `Hello, ${name}!` }; // the return value is the result
});

connection.onRequest('_example/wait', async ({ ms }: { ms: number }, responder) => {
  // responder.signal aborts when the client sends $/cancel_request for this request.
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    responder.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
  if (responder.isCancelled) throw RpcError.requestCancelled(); // -32800
  return { waited: ms };
});
