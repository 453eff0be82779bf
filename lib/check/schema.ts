/**
 * Validation against the official ACP JSON schemas (v1 and v2, draft 2020-12) with ajv. The
 * schemas are the SDK's files, copied into `lib/acp/schema/` by `npm run schema`; ajv and the
 * schemas load on first use, so nothing of this is loaded by `require('acp-wire')`.
 *
 * @packageDocumentation
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type Ajv2020Type from 'ajv/dist/2020';
import type { ValidateFunction } from 'ajv/dist/2020';

/** An ACP protocol version with an official schema. */
export type SchemaVersion = 1 | 2;

/** The id under which the schema of `version` is registered in {@link createAcpAjv}'s instance. */
export const schemaId = (version: SchemaVersion): string => `acp-v${version}`;

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

function isRegex(value: string): boolean {
  try {
    new RegExp(value, 'u');
    return true;
  } catch {
    return false;
  }
}

/** The official schema of `version` (from `lib/acp/schema/`, found from `lib/check/` or `dist/lib/check/`). */
export function officialSchema(version: SchemaVersion): object {
  const file = `v${version}.schema.json`;
  const candidates = [join(__dirname, '..', 'acp', 'schema', file), join(__dirname, '..', '..', '..', 'lib', 'acp', 'schema', file)];
  const path = candidates.find((candidate) => existsSync(candidate)) ?? candidates[0]!;
  return JSON.parse(readFileSync(path, 'utf8')) as object;
}

/** A new ajv instance (draft 2020-12, strict) holding the official v1 and v2 schemas, with their formats. */
export function createAcpAjv(): Ajv2020Type {
  // Loaded here, on first use: `require('acp-wire')` must not load ajv.
  const Ajv2020 = (require('ajv/dist/2020') as { default: typeof Ajv2020Type }).default;
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
  ajv.addFormat('regex', isRegex);
  ajv.addSchema(officialSchema(1), schemaId(1));
  ajv.addSchema(officialSchema(2), schemaId(2));
  return ajv;
}

/** The keywords whose errors a union's other variants raise. */
const UNION_NOISE = new Set(['const', 'required', 'oneOf', 'anyOf', 'enum']);

/** Validators of `$defs` entries of the official schemas, compiled once each. */
export class AcpSchema {
  #ajv: Ajv2020Type | undefined;
  readonly #validators = new Map<string, ValidateFunction>();

  /** The validator of one `$defs` entry (`InitializeResponse`, …) of `version`'s schema, or of the whole schema (`''`). */
  validator(definition: string, version: SchemaVersion): ValidateFunction {
    const key = `${version}:${definition}`;
    let validate = this.#validators.get(key);
    if (!validate) {
      this.#ajv ??= createAcpAjv();
      const ref = definition === '' ? schemaId(version) : `${schemaId(version)}#/$defs/${definition}`;
      validate = this.#ajv.compile({ $ref: ref });
      this.#validators.set(key, validate);
    }
    return validate;
  }

  /**
   * The errors of `value` against a `$defs` entry, as readable lines (empty when valid), each once.
   * Of a union's complaints, those of the variant that fits come first: the other variants' (a
   * discriminator that is not theirs, a member only they require) say little. Among the rest,
   * those at the deepest place in the value.
   */
  errors(definition: string, value: unknown, version: SchemaVersion): string[] {
    const validate = this.validator(definition, version);
    if (validate(value)) return [];
    const all = validate.errors ?? [];
    const telling = all.filter((error) => !UNION_NOISE.has(error.keyword));
    const chosen = telling.length > 0 ? telling : all;
    const depth = (path: string): number => path.split('/').length;
    const deepest = Math.max(...chosen.map((error) => depth(error.instancePath)));
    const lines = chosen
      .filter((error) => depth(error.instancePath) === deepest)
      .map((error) => `v${version} ${definition}${error.instancePath} ${error.message ?? ''} ${JSON.stringify(error.params)}`);
    return [...new Set(lines)];
  }
}
