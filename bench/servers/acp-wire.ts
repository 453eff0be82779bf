/**
 * Bench server program for acp-wire: `node dist/bench/servers/acp-wire.js stdio|tcp`.
 *
 * @packageDocumentation
 */
import { acpWire } from '../adapters/acp-wire';
import { runServer } from '../server-main';

runServer(acpWire);
