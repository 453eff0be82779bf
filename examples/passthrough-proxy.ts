/**
 * The passthrough proxy: an ACP proxy on stdio that handles nothing itself and forwards everything
 * with the library's generic forwarding. Run it inside a chain:
 *
 * ```sh
 * node dist/bin/acp-wire.js conduct "node dist/examples/passthrough-proxy.js" "node dist/examples/conformance-agent.js"
 * ```
 *
 * Nothing but protocol lines goes to stdout; logs go to stderr. Exits 0 when stdin ends.
 *
 * @packageDocumentation
 */
import { ProxyComponent, connectStdio, createStderrLogger, defaultLogger } from '../lib';

const NAME = 'passthrough-proxy';
const logger = process.env.ACP_WIRE_LOG ? defaultLogger(NAME) : createStderrLogger({ name: NAME, level: 'warn' });

// Everything not handled is forwarded: client-direction messages to the successor inside a
// `proxy/successor` envelope, the successor's messages back plain; `proxy/initialize` goes on as
// `initialize`; cancellation is re-issued hop by hop.
new ProxyComponent(connectStdio({ name: NAME, logger }));
