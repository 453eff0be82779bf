/**
 * Bench server program for acp-sdk: `node dist/bench/servers/acp-sdk.js stdio|tcp`.
 *
 * @packageDocumentation
 */
import { acpSdk } from '../adapters/acp-sdk';
import { runServer } from '../server-main';

runServer(acpSdk);
