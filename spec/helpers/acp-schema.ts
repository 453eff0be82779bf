/**
 * Validation of ACP messages against the ACP v2 JSON schema shipped in `@agentclientprotocol/sdk`
 * (`schema/v2/schema.json`), with ajv (draft 2020-12).
 */
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';

const SCHEMA_ID = 'acp-v2';

/** The schema's own annotations: no validation meaning, but ajv's strict mode must know them. */
const ANNOTATIONS = [
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
  ajv.addSchema(require('@agentclientprotocol/sdk/schema/v2/schema.json') as object, SCHEMA_ID);
  return ajv;
}

let ajv: Ajv2020 | undefined;
const validators = new Map<string, ValidateFunction>();

/** The validator of one `$defs` entry of the ACP v2 schema (`InitializeResponse`, …), or of the whole schema (`''`). */
export function acpValidator(definition: string): ValidateFunction {
  let validate = validators.get(definition);
  if (!validate) {
    ajv ??= createAjv();
    validate = ajv.compile({ $ref: definition === '' ? SCHEMA_ID : `${SCHEMA_ID}#/$defs/${definition}` });
    validators.set(definition, validate);
  }
  return validate;
}

/** The validation errors of `value` against a `$defs` entry, as readable lines (empty when valid). */
export function acpErrors(definition: string, value: unknown): string[] {
  const validate = acpValidator(definition);
  if (validate(value)) return [];
  return (validate.errors ?? []).map((error) => `${definition}${error.instancePath} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
}

/** What an agent's message must validate as, by method (requests' results, notifications' params). */
const AGENT_DEFINITIONS: Record<string, { result?: string; params?: string }> = {
  initialize: { result: 'InitializeResponse' },
  'session/new': { result: 'NewSessionResponse' },
  'session/prompt': { result: 'PromptResponse' },
  'session/update': { params: 'UpdateSessionNotification' },
  '$/cancel_request': { params: 'CancelRequestNotification' },
};

/**
 * Checks one line an agent sent: the whole message against the schema, then the part the ACP
 * method defines (`method` is the request's method for a response). Returns the errors.
 */
export function agentLineErrors(line: string, method: string): string[] {
  const message = JSON.parse(line) as { method?: string; params?: unknown; result?: unknown; error?: unknown };
  const errors = acpErrors('', message);
  const definitions = AGENT_DEFINITIONS[method];
  if (message.error !== undefined) errors.push(...acpErrors('Error', message.error));
  else if (message.method === undefined && definitions?.result) errors.push(...acpErrors(definitions.result, message.result));
  else if (message.method !== undefined && definitions?.params) errors.push(...acpErrors(definitions.params, message.params));
  return errors;
}

/** Whether a method's messages have an ACP v2 definition that {@link agentLineErrors} checks. */
export function isAcpMethod(method: string): boolean {
  return method in AGENT_DEFINITIONS;
}
