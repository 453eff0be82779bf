/**
 * Records every line a connection sends and receives (through its logger's wire trace), and checks
 * the ACP messages among the sent ones against the official schema of a protocol version.
 */
import type { Logger } from '../../lib';
import { agentLineErrors, clientLineErrors, isAcpMethod, isClientAcpMethod, type SchemaVersion } from './acp-schema';

/** A logger that keeps the wire trace: pass it as a connection's `logger`. */
export class LineRecorder implements Logger {
  readonly traces = true;
  /** Every line sent, in order. */
  readonly sent: string[] = [];
  /** Every line received, in order. */
  readonly received: string[] = [];

  log(level: string, message: string): void {
    if (level !== 'trace') return;
    if (message.startsWith('-> ')) this.sent.push(message.slice(3));
    else if (message.startsWith('<- ')) this.received.push(message.slice(3));
  }

  /** The ACP method of each sent line: its own, or for a response the method of the request it answers. */
  sentWithMethods(): { line: string; method: string }[] {
    const requests = new Map<string, string>();
    for (const line of this.received) {
      const message = JSON.parse(line) as { id?: unknown; method?: string };
      if (message.method !== undefined && message.id !== undefined) requests.set(JSON.stringify(message.id), message.method);
    }
    return this.sent.map((line) => {
      const message = JSON.parse(line) as { id?: unknown; method?: string };
      return { line, method: message.method ?? requests.get(JSON.stringify(message.id)) ?? '' };
    });
  }

  /**
   * The schema errors of the ACP messages this side sent, as `side` (`agent` or `client`), in
   * protocol `version`, each with its line; and how many lines were checked.
   */
  schemaErrors(side: 'agent' | 'client', version: SchemaVersion): { errors: string[]; checked: string[] } {
    const isAcp = side === 'agent' ? isAcpMethod : isClientAcpMethod;
    const errorsOf = side === 'agent' ? agentLineErrors : clientLineErrors;
    const checked = this.sentWithMethods().filter(({ method }) => isAcp(method, version));
    const errors = checked.flatMap(({ line, method }) => errorsOf(line, method, version).map((error) => `${line}\n  ${error}`));
    return { errors, checked: checked.map(({ line }) => line) };
  }
}
