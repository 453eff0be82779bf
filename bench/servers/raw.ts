/**
 * Bench server program for raw: `node dist/bench/servers/raw.js stdio|tcp`.
 *
 * @packageDocumentation
 */
import { raw } from '../adapters/raw';
import { runServer } from '../server-main';

runServer(raw);
