/**
 * An ACP agent with no library, the floor of the conformance agent's start-up: answers
 * `initialize` (protocol version 1, no capabilities) and every other request `-32601`.
 *
 * @packageDocumentation
 */
import { readLines, writeLine } from './lines';

readLines(process.stdin, (message) => {
  if (message.id === undefined || message.method === undefined) return;
  if (message.method === 'initialize') {
    writeLine(process.stdout, { id: message.id, result: { protocolVersion: 1, agentCapabilities: {}, authMethods: [] } });
  } else writeLine(process.stdout, { id: message.id, error: { code: -32601, message: 'Method not found' } });
});
