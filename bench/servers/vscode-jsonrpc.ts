/**
 * Bench server program for vscode-jsonrpc: `node dist/bench/servers/vscode-jsonrpc.js stdio|tcp`.
 *
 * @packageDocumentation
 */
import { vscodeJsonrpc } from '../adapters/vscode-jsonrpc';
import { runServer } from '../server-main';

runServer(vscodeJsonrpc);
