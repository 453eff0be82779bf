/**
 * Validation of ACP messages against the ACP v1 and v2 JSON schemas shipped in
 * `@agentclientprotocol/sdk` (`schema/v1/schema.json`, `schema/v2/schema.json`, copied into
 * lib/acp/schema/), with the ajv instance of `acp-wire check` (lib/check/schema.ts). Every function takes the protocol version last (default 2).
 */
import type Ajv2020 from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv/dist/2020';
import { createAcpAjv, schemaId, type SchemaVersion } from '../../lib/check/schema';

export type { SchemaVersion };

function createAjv(): Ajv2020 {
  return createAcpAjv();
}

let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

/**
 * The validator of one `$defs` entry of the ACP schema of `version` (`InitializeResponse`, …), or
 * of the whole schema (`''`).
 */
export function acpValidator(definition: string, version: SchemaVersion = 2): ValidateFunction {
  const key = `${version}:${definition}`;
  let validate = validators.get(key);
  if (!validate) {
    ajv ??= createAjv();
    validate = ajv.compile({ $ref: definition === '' ? schemaId(version) : `${schemaId(version)}#/$defs/${definition}` });
    validators.set(key, validate);
  }
  return validate;
}

const UNSTABLE_ID = 'acp-v1-unstable';
let unstableLoaded = false;

/**
 * The validation errors of `value` against a `$defs` entry of the ACP v1 unstable schema
 * (`schema/v1/schema.unstable.json`: `MessageMcpRequest`, `MessageMcpResponse`, …), as readable
 * lines (empty when valid).
 */
export function acpUnstableErrors(definition: string, value: unknown): string[] {
  ajv ??= createAjv();
  if (!unstableLoaded) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    ajv.addSchema(require('@agentclientprotocol/sdk/schema/v1/schema.unstable.json') as object, UNSTABLE_ID);
    unstableLoaded = true;
  }
  const validate = ajv.getSchema(`${UNSTABLE_ID}#/$defs/${definition}`);
  if (!validate) throw new Error(`no $defs entry ${definition} in the unstable schema`);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (error) => `unstable ${definition}${error.instancePath} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
  );
}

/** The validation errors of `value` against a `$defs` entry, as readable lines (empty when valid). */
export function acpErrors(definition: string, value: unknown, version: SchemaVersion = 2): string[] {
  const validate = acpValidator(definition, version);
  if (validate(value)) return [];
  return (validate.errors ?? []).map(
    (error) => `v${version} ${definition}${error.instancePath} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
  );
}

/** One ACP method in one version: the side that sends it, and the `$defs` its params and result validate as. */
interface MethodSchema {
  /** Who sends the request or notification (`both`: either side, as `$/cancel_request`). */
  readonly sender: 'agent' | 'client' | 'both';
  /** What its params validate as (absent: not checked). */
  readonly params?: string;
  /** What the result of its answer validates as (absent: a notification, or not checked). */
  readonly result?: string;
}

/** The methods whose messages are the same in both versions. */
const BOTH_VERSIONS: Record<string, MethodSchema> = {
  initialize: { sender: 'client', params: 'InitializeRequest', result: 'InitializeResponse' },
  'session/new': { sender: 'client', params: 'NewSessionRequest', result: 'NewSessionResponse' },
  'session/prompt': { sender: 'client', params: 'PromptRequest', result: 'PromptResponse' },
  'session/request_permission': { sender: 'agent', params: 'RequestPermissionRequest', result: 'RequestPermissionResponse' },
  '$/cancel_request': { sender: 'both', params: 'CancelRequestNotification' },
  'session/list': { sender: 'client', params: 'ListSessionsRequest', result: 'ListSessionsResponse' },
  'session/resume': { sender: 'client', params: 'ResumeSessionRequest', result: 'ResumeSessionResponse' },
  'session/close': { sender: 'client', params: 'CloseSessionRequest', result: 'CloseSessionResponse' },
  'session/delete': { sender: 'client', params: 'DeleteSessionRequest', result: 'DeleteSessionResponse' },
  'session/set_config_option': { sender: 'client', params: 'SetSessionConfigOptionRequest', result: 'SetSessionConfigOptionResponse' },
  'elicitation/create': { sender: 'agent', params: 'CreateElicitationRequest', result: 'CreateElicitationResponse' },
  'elicitation/complete': { sender: 'agent', params: 'CompleteElicitationNotification' },
};

/** The methods checked in each version. The terminal requests' params are not checked. */
const METHODS: Record<SchemaVersion, Record<string, MethodSchema>> = {
  1: {
    ...BOTH_VERSIONS,
    authenticate: { sender: 'client', params: 'AuthenticateRequest', result: 'AuthenticateResponse' },
    logout: { sender: 'client', params: 'LogoutRequest', result: 'LogoutResponse' },
    'session/load': { sender: 'client', params: 'LoadSessionRequest', result: 'LoadSessionResponse' },
    'session/set_mode': { sender: 'client', params: 'SetSessionModeRequest', result: 'SetSessionModeResponse' },
    'session/cancel': { sender: 'client', params: 'CancelNotification' },
    'session/update': { sender: 'agent', params: 'SessionNotification' },
    'fs/read_text_file': { sender: 'agent', params: 'ReadTextFileRequest', result: 'ReadTextFileResponse' },
    'fs/write_text_file': { sender: 'agent', params: 'WriteTextFileRequest', result: 'WriteTextFileResponse' },
    'terminal/create': { sender: 'agent', result: 'CreateTerminalResponse' },
    'terminal/output': { sender: 'agent', result: 'TerminalOutputResponse' },
    'terminal/wait_for_exit': { sender: 'agent', result: 'WaitForTerminalExitResponse' },
    'terminal/kill': { sender: 'agent', result: 'KillTerminalResponse' },
    'terminal/release': { sender: 'agent', result: 'ReleaseTerminalResponse' },
  },
  2: {
    ...BOTH_VERSIONS,
    'auth/login': { sender: 'client', params: 'LoginAuthRequest', result: 'LoginAuthResponse' },
    'auth/logout': { sender: 'client', params: 'LogoutAuthRequest', result: 'LogoutAuthResponse' },
    'tool_call/cancel': { sender: 'client', params: 'CancelToolCallRequest', result: 'CancelToolCallResponse' },
    'terminal/cancel': { sender: 'client', params: 'CancelTerminalRequest', result: 'CancelTerminalResponse' },
    'session/cancel': { sender: 'client', params: 'CancelSessionNotification' },
    'session/update': { sender: 'agent', params: 'UpdateSessionNotification' },
  },
};

/** What one side's message of `method` validates as: the params of what it sends, the result of what it answers. */
type Definition = { params?: string; result?: string };

function definitionOf(side: 'agent' | 'client', method: string, version: SchemaVersion): Definition | undefined {
  const schema = Object.hasOwn(METHODS[version], method) ? METHODS[version][method]! : undefined;
  if (!schema) return undefined;
  const definition: Definition = schema.sender === side || schema.sender === 'both' ? { params: schema.params } : { result: schema.result };
  return (definition.params ?? definition.result) ? definition : undefined;
}

function lineErrors(side: 'agent' | 'client', line: string, method: string, version: SchemaVersion): string[] {
  const message = JSON.parse(line) as { method?: string; params?: unknown; result?: unknown; error?: unknown };
  const errors = acpErrors('', message, version);
  const definitions = definitionOf(side, method, version);
  if (message.error !== undefined) errors.push(...acpErrors('Error', message.error, version));
  else if (message.method === undefined && definitions?.result) errors.push(...acpErrors(definitions.result, message.result, version));
  else if (message.method !== undefined && definitions?.params) errors.push(...acpErrors(definitions.params, message.params, version));
  return errors;
}

/**
 * Checks one line an agent sent: the whole message against the schema of `version`, then the
 * part the ACP method defines (`method` is the request's method for a response). Returns the errors.
 */
export function agentLineErrors(line: string, method: string, version: SchemaVersion = 2): string[] {
  return lineErrors('agent', line, method, version);
}

/** Checks one line a client sent, as {@link agentLineErrors} does for an agent's. */
export function clientLineErrors(line: string, method: string, version: SchemaVersion = 2): string[] {
  return lineErrors('client', line, method, version);
}

/** Whether a method's messages have an ACP definition that {@link agentLineErrors} checks. */
export function isAcpMethod(method: string, version: SchemaVersion = 2): boolean {
  return definitionOf('agent', method, version) !== undefined;
}

/** Whether a method's messages have an ACP definition that {@link clientLineErrors} checks. */
export function isClientAcpMethod(method: string, version: SchemaVersion = 2): boolean {
  return definitionOf('client', method, version) !== undefined;
}
