/**
 * Validation of ACP messages against the ACP v1 and v2 JSON schemas shipped in
 * `@agentclientprotocol/sdk` (`schema/v1/schema.json`, `schema/v2/schema.json`), with ajv
 * (draft 2020-12). Every function takes the protocol version last (default 2).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';

/** An ACP protocol version with a schema. */
export type SchemaVersion = 1 | 2;

const schemaId = (version: SchemaVersion): string => `acp-v${version}`;

/** The schema's own annotations: no validation meaning, but ajv's strict mode must know them. */
const ANNOTATIONS = [
  'discriminator',
  'x-method',
  'x-side',
  'x-docs-ignore',
  'x-deserialize-default-on-error',
  'x-deserialize-default-on-null',
  'x-deserialize-skip-invalid-items',
];

function integerFormat(min: number, max: number): { type: 'number'; validate: (value: number) => boolean } {
  return { type: 'number', validate: (value) => Number.isInteger(value) && value >= min && value <= max };
}

function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: true, strictTypes: false, allowUnionTypes: true });
  for (const keyword of ANNOTATIONS) ajv.addKeyword(keyword);
  ajv.addFormat('int32', integerFormat(-(2 ** 31), 2 ** 31 - 1));
  ajv.addFormat('uint16', integerFormat(0, 65535));
  ajv.addFormat('uint32', integerFormat(0, 2 ** 32 - 1));
  ajv.addFormat('int64', integerFormat(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
  ajv.addFormat('uint64', integerFormat(0, Number.MAX_SAFE_INTEGER));
  ajv.addFormat('double', { type: 'number', validate: (value: number) => Number.isFinite(value) });
  ajv.addFormat('date-time', (value: string) => !Number.isNaN(Date.parse(value)));
  ajv.addFormat('uri', (value: string) => URL.canParse(value));
  ajv.addFormat('regex', (value: string) => {
    try {
      new RegExp(value, 'u');
      return true;
    } catch {
      return false;
    }
  });
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  ajv.addSchema(require('@agentclientprotocol/sdk/schema/v1/schema.json') as object, schemaId(1));
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  ajv.addSchema(require('@agentclientprotocol/sdk/schema/v2/schema.json') as object, schemaId(2));
  return ajv;
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

/** The validation errors of `value` against a `$defs` entry, as readable lines (empty when valid). */
export function acpErrors(definition: string, value: unknown, version: SchemaVersion = 2): string[] {
  const validate = acpValidator(definition, version);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `v${version} ${definition}${error.instancePath} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
}

type Definitions = Record<string, { result?: string; params?: string }>;

/** What an agent's message must validate as, by method and version (requests' results, notifications' params, requests' params). */
const AGENT_DEFINITIONS: Record<SchemaVersion, Definitions> = {
  1: {
    initialize: { result: 'InitializeResponse' },
    authenticate: { result: 'AuthenticateResponse' },
    'session/new': { result: 'NewSessionResponse' },
    'session/prompt': { result: 'PromptResponse' },
    'session/update': { params: 'SessionNotification' },
    'session/request_permission': { params: 'RequestPermissionRequest' },
    'fs/read_text_file': { params: 'ReadTextFileRequest' },
    'fs/write_text_file': { params: 'WriteTextFileRequest' },
    '$/cancel_request': { params: 'CancelRequestNotification' },
  },
  2: {
    initialize: { result: 'InitializeResponse' },
    'auth/login': { result: 'LoginAuthResponse' },
    'session/new': { result: 'NewSessionResponse' },
    'session/prompt': { result: 'PromptResponse' },
    'session/update': { params: 'UpdateSessionNotification' },
    'session/request_permission': { params: 'RequestPermissionRequest' },
    '$/cancel_request': { params: 'CancelRequestNotification' },
  },
};

/** What a client's message must validate as, by method and version. */
const CLIENT_DEFINITIONS: Record<SchemaVersion, Definitions> = {
  1: {
    initialize: { params: 'InitializeRequest' },
    authenticate: { params: 'AuthenticateRequest' },
    'session/new': { params: 'NewSessionRequest' },
    'session/prompt': { params: 'PromptRequest' },
    'session/cancel': { params: 'CancelNotification' },
    'session/request_permission': { result: 'RequestPermissionResponse' },
    'fs/read_text_file': { result: 'ReadTextFileResponse' },
    'fs/write_text_file': { result: 'WriteTextFileResponse' },
    'terminal/create': { result: 'CreateTerminalResponse' },
    'terminal/output': { result: 'TerminalOutputResponse' },
    'terminal/wait_for_exit': { result: 'WaitForTerminalExitResponse' },
    'terminal/kill': { result: 'KillTerminalResponse' },
    'terminal/release': { result: 'ReleaseTerminalResponse' },
    '$/cancel_request': { params: 'CancelRequestNotification' },
  },
  2: {
    initialize: { params: 'InitializeRequest' },
    'auth/login': { params: 'LoginAuthRequest' },
    'session/new': { params: 'NewSessionRequest' },
    'session/prompt': { params: 'PromptRequest' },
    'session/cancel': { params: 'CancelSessionNotification' },
    'session/request_permission': { result: 'RequestPermissionResponse' },
    '$/cancel_request': { params: 'CancelRequestNotification' },
  },
};

function lineErrors(definitionsOf: Definitions, line: string, method: string, version: SchemaVersion): string[] {
  const message = JSON.parse(line) as { method?: string; params?: unknown; result?: unknown; error?: unknown };
  const errors = acpErrors('', message, version);
  const definitions = definitionsOf[method];
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
  return lineErrors(AGENT_DEFINITIONS[version], line, method, version);
}

/** Checks one line a client sent, as {@link agentLineErrors} does for an agent's. */
export function clientLineErrors(line: string, method: string, version: SchemaVersion = 2): string[] {
  return lineErrors(CLIENT_DEFINITIONS[version], line, method, version);
}

/** Whether a method's messages have an ACP definition that {@link agentLineErrors} checks. */
export function isAcpMethod(method: string, version: SchemaVersion = 2): boolean {
  return method in AGENT_DEFINITIONS[version];
}

/** Whether a method's messages have an ACP definition that {@link clientLineErrors} checks. */
export function isClientAcpMethod(method: string, version: SchemaVersion = 2): boolean {
  return method in CLIENT_DEFINITIONS[version];
}
