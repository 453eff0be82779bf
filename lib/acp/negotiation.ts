/**
 * ACP protocol versions: what a client offers, what an agent answers (or refuses with `-32022`),
 * and the version negotiated on each connection.
 *
 * @packageDocumentation
 */
import { acceptBatches, type Connection } from '../connection/connection';
import { AcpWireError, ErrorCode, RpcError } from '../jsonrpc/errors';

/** An ACP protocol version acp-wire speaks. */
export type AcpVersion = 1 | 2;

/** The ACP protocol versions acp-wire speaks, lowest first. */
export const ACP_PROTOCOL_VERSIONS: readonly AcpVersion[] = Object.freeze([1, 2] as const);

/** The highest ACP protocol version acp-wire speaks: what a client offers by default. */
export const ACP_PROTOCOL_VERSION = 2;

/** The largest protocol version the ACP schema allows (a `uint16`). */
const MAX_PROTOCOL_VERSION = 0xffff;

/** The `data` of a `-32022` error: the version requested and the versions the agent supports. */
export interface UnsupportedProtocolVersionData {
  /** The `protocolVersion` the client's `initialize` asked for. */
  requested: number;
  /** The versions the agent speaks: the client may retry with one of them. */
  supported: number[];
}

/**
 * The `-32022` "Unsupported protocol version" error an agent answers when it supports no version at
 * or below the requested one, with `data` `{requested, supported}` — as the official SDK's agents do.
 */
export function unsupportedProtocolVersion(requested: number, supported: readonly number[]): RpcError {
  const data: UnsupportedProtocolVersionData = { requested, supported: [...supported] };
  return new RpcError(ErrorCode.UnsupportedProtocolVersion, 'Unsupported protocol version', { ...data });
}

/** Whether `value` is a protocol version the ACP schema allows: an integer from 0 to 65535. */
export function isProtocolVersion(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= MAX_PROTOCOL_VERSION;
}

/**
 * The agent's side of the negotiation: the version to answer an `initialize` that requests
 * `requested`.
 *
 * @remarks
 * As the ACP specification says: the requested version when supported, else the highest supported
 * version below it. An agent that supports nothing at or below it refuses with `-32022` (see
 * {@link unsupportedProtocolVersion}); the client may then try again with another version.
 * @param requested - the `protocolVersion` of the `initialize` params, unchecked
 * @param supported - the versions the agent speaks
 * @throws RpcError `-32602` "Invalid params" when `requested` is not an integer from 0 to 65535
 * @throws RpcError `-32022` "Unsupported protocol version" with `data` `{requested, supported}`
 */
export function selectProtocolVersion(requested: unknown, supported: readonly number[] = ACP_PROTOCOL_VERSIONS): number {
  if (!isProtocolVersion(requested)) {
    throw RpcError.invalidParams('`protocolVersion` must be an integer from 0 to 65535');
  }
  let selected: number | undefined;
  for (const version of supported) if (version <= requested && (selected === undefined || version > selected)) selected = version;
  if (selected === undefined)
    throw unsupportedProtocolVersion(
      requested,
      [...supported].sort((a, b) => a - b),
    );
  return selected;
}

/**
 * The agent answered `initialize` with a protocol version the client did not offer or does not
 * speak. The ACP specification says the client should then close the connection; nothing here
 * closes it.
 */
export class UnsupportedProtocolVersionError extends AcpWireError {
  /** Always `'UnsupportedProtocolVersionError'`. */
  override readonly name = 'UnsupportedProtocolVersionError';
  /** Always `'ACP_WIRE_UNSUPPORTED_PROTOCOL_VERSION'`: stable, so match on it rather than on the message. */
  readonly code = 'ACP_WIRE_UNSUPPORTED_PROTOCOL_VERSION';
  /**
   * @param offered - the version the client offered
   * @param answered - the agent's `protocolVersion` (any JSON value)
   * @param supported - the versions the client speaks
   */
  constructor(
    readonly offered: number,
    readonly answered: unknown,
    readonly supported: readonly number[],
    options?: ErrorOptions,
  ) {
    super(
      `the agent answered initialize with protocolVersion ${JSON.stringify(answered) ?? 'nothing'}; ` +
        `offered ${offered}, supported ${supported.join(', ')}`,
      options,
    );
  }
}

/**
 * The client's side of the negotiation: checks the agent's answer to an offer of `offered`.
 *
 * @returns the negotiated version
 * @throws UnsupportedProtocolVersionError when the answer is above the offer or not supported
 */
export function acceptProtocolVersion(answered: unknown, offered: number, supported: readonly number[] = ACP_PROTOCOL_VERSIONS): number {
  if (!isProtocolVersion(answered) || answered > offered || !supported.includes(answered)) {
    throw new UnsupportedProtocolVersionError(offered, answered, supported);
  }
  return answered;
}

const negotiated = new WeakMap<Connection, number>();

/**
 * The ACP protocol version negotiated on `connection`, or `undefined` before a successful
 * `initialize` handled by acp-wire's ACP helpers (`AcpClient`, `AcpAgent`, the conductor).
 *
 * @remarks Kept beside the connection, not in it: the `Connection` itself knows nothing of ACP.
 * @example
 * ```ts
 * await client.initialize();
 * console.log(`speaking ACP v${negotiatedVersion(client.connection)}`);
 * ```
 */
export function negotiatedVersion(connection: Connection): number | undefined {
  return negotiated.get(connection);
}

/**
 * Records the version negotiated on `connection`, and makes it answer JSON-RPC 2.0 batches from
 * ACP v2 on (ACP v1 has none: a batch stays one `-32600`). @internal
 */
export function recordNegotiatedVersion(connection: Connection, version: number): void {
  negotiated.set(connection, version);
  acceptBatches(connection, version >= 2);
}
