/**
 * The check's answers to the agent's own requests: a permission request is granted once (so that
 * a turn can go on), anything else is answered "method not found" (the check offers no client
 * capability).
 *
 * @packageDocumentation
 */
import { RpcError } from '../jsonrpc/errors';
import { isJsonObject, type JsonObject, type JsonValue } from '../jsonrpc/message';

const REQUEST_PERMISSION_METHOD = 'session/request_permission';

/** Answers the requests an agent sends to the check. */
export class AgentRequests {
  readonly #write: (message: JsonObject) => void;

  constructor(write: (message: JsonObject) => void) {
    this.#write = write;
  }

  /** Answers one request the agent sent (`message` has a `method` and an `id`). */
  answer(message: JsonObject): void {
    const id = message.id as JsonValue;
    if (message.method === REQUEST_PERMISSION_METHOD) {
      this.#write({ jsonrpc: '2.0', id, result: { outcome: permissionOutcome(message.params) } });
      return;
    }
    this.#write({ jsonrpc: '2.0', id, error: RpcError.methodNotFound(String(message.method)).toJSON() as unknown as JsonValue });
  }
}

/** The first "allow once" option (any first option otherwise), or `cancelled` when there is none. */
function permissionOutcome(params: JsonValue | undefined): JsonObject {
  const options = isJsonObject(params) && Array.isArray(params.options) ? params.options.filter(isJsonObject) : [];
  const option = options.find((candidate) => candidate.kind === 'allow_once') ?? options[0];
  return typeof option?.optionId === 'string' ? { outcome: 'selected', optionId: option.optionId } : { outcome: 'cancelled' };
}
