/**
 * Doc comments for the parts of the official ACP schemas that json-schema-to-typescript would emit
 * without one, so that every generated type and property is documented (TypeDoc validates it):
 *
 * - the tag property of each variant of a tagged union (`"sessionUpdate": { "const": "plan" }`),
 *   which the schema leaves without a `description`: its comment names the tag and carries the
 *   variant's own description, which the generated union would otherwise drop;
 * - a property of a definition whose description json-schema-to-typescript drops (it does so when
 *   it reduces alternatives to `unknown`, as for v2's `Error.data`): the description is put back;
 * - the alias json-schema-to-typescript splits off a definition that has both `properties` and
 *   `anyOf`/`oneOf` (`SetSessionConfigOptionRequest = SetSessionConfigOptionRequest1 & {…}`): its
 *   comment lists the alternatives' own descriptions.
 *
 * Every sentence is derived from the schema (tag values, descriptions, titles, `$ref` names).
 *
 * @packageDocumentation
 */

import ts from 'typescript';

/** A JSON Schema object, as read from the SDK's schema files. */
type Schema = { [keyword: string]: unknown };

/** The definitions of a schema file (`$defs`), by name. */
export type SchemaDefinitions = Record<string, unknown>;

const SUBSCHEMA = ['items', 'additionalProperties', 'contains', 'propertyNames', 'if', 'then', 'else'] as const;
const SUBSCHEMA_LISTS = ['anyOf', 'oneOf', 'allOf', 'prefixItems'] as const;
const SUBSCHEMA_MAPS = ['properties', 'patternProperties'] as const;
// `not` is not walked: json-schema-to-typescript emits nothing for it.

function isSchema(value: unknown): value is Schema {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function refName(schema: Schema): string | undefined {
  return typeof schema.$ref === 'string' ? schema.$ref.slice(schema.$ref.lastIndexOf('/') + 1) : undefined;
}

/** The subschemas of `schema` that json-schema-to-typescript turns into types. */
function subschemas(schema: Schema): Schema[] {
  const found: unknown[] = [];
  for (const key of SUBSCHEMA) found.push(schema[key]);
  for (const key of SUBSCHEMA_LISTS) if (Array.isArray(schema[key])) found.push(...(schema[key] as unknown[]));
  for (const key of SUBSCHEMA_MAPS) if (isSchema(schema[key])) found.push(...Object.values(schema[key]));
  return found.filter(isSchema);
}

/** The comment of property `key` of `variant` (a schema in definition `owner`) that has none. */
function describeProperty(key: string, property: Schema, variant: Schema, owner: string): string {
  let summary: string;
  if ('const' in property) summary = `\`${JSON.stringify(property.const)}\` selects this variant of \`${owner}\`.`;
  else if (property.type === 'null') summary = `\`null\` in this variant of \`${owner}\`.`;
  else if (refName(property) !== undefined) summary = `The \`${refName(property)}\` of this \`${owner}\`.`;
  else summary = `\`${key}\` of \`${owner}\` (the schema gives it no description).`;
  return typeof variant.description === 'string' ? `${summary}\n\n${variant.description}` : summary;
}

function documentSchema(schema: Schema, owner: string): void {
  if (isSchema(schema.properties)) {
    for (const [key, property] of Object.entries(schema.properties)) {
      if (!isSchema(property)) continue;
      if (typeof property.description !== 'string') property.description = describeProperty(key, property, schema, owner);
    }
  }
  for (const child of subschemas(schema)) documentSchema(child, owner);
}

/** A copy of `defs` in which every property has a `description` (see the module's doc). */
export function withPropertyDocs(defs: SchemaDefinitions): SchemaDefinitions {
  const copy = structuredClone(defs);
  for (const [name, schema] of Object.entries(copy)) if (isSchema(schema)) documentSchema(schema, name);
  return copy;
}

/** One list item per alternative: its title, and the first paragraph of its description or its `$ref`. */
function alternativeLines(alternatives: unknown[]): string[] {
  return alternatives.filter(isSchema).map((alternative) => {
    const label = typeof alternative.title === 'string' ? `\`${alternative.title}\`: ` : '';
    const ref = refName(alternative);
    if (typeof alternative.description === 'string') {
      return `- ${label}${alternative.description.split('\n\n')[0].replace(/\n/g, ' ')}`;
    }
    return `- ${label}${ref !== undefined ? `\`${ref}\`` : 'an alternative without a description'}`;
  });
}

/** `lines` as a doc comment whose lines start at column `indent`. */
function docComment(lines: readonly string[], indent: string): string {
  const body = lines.map((line) => `${indent} *${line === '' ? '' : ` ${line}`}`);
  return [`${indent}/**`, ...body, `${indent} */`].join('\n');
}

/** A comment to insert into the generated text at offset `at` (the start of a line). */
interface Insertion {
  at: number;
  text: string;
}

function lineStartOf(node: ts.Node, source: ts.SourceFile): { at: number; indent: string } {
  const start = node.getStart(source);
  const at = start - source.getLineAndCharacterOfPosition(start).character;
  return { at, indent: source.text.slice(at, start) };
}

function isDocumented(node: ts.Node): boolean {
  return ts.getJSDocCommentsAndTags(node).length > 0;
}

/** The schema's description, for each property of a definition's interface that has no comment. */
function restoredPropertyDocs(source: ts.SourceFile, defs: SchemaDefinitions): Insertion[] {
  const insertions: Insertion[] = [];
  for (const statement of source.statements) {
    if (!ts.isInterfaceDeclaration(statement)) continue;
    const schema = defs[statement.name.text];
    if (!isSchema(schema) || !isSchema(schema.properties)) continue;
    for (const member of statement.members) {
      if (!ts.isPropertySignature(member) || isDocumented(member)) continue;
      const key = ts.isIdentifier(member.name) || ts.isStringLiteral(member.name) ? member.name.text : undefined;
      const property = key === undefined ? undefined : schema.properties[key];
      if (!isSchema(property) || typeof property.description !== 'string') continue;
      const { at, indent } = lineStartOf(member, source);
      insertions.push({ at, text: `${docComment(property.description.split('\n'), indent)}\n` });
    }
  }
  return insertions;
}

/**
 * A comment for each alias without one that json-schema-to-typescript split off a definition
 * having both `properties` and `anyOf`/`oneOf`: `X = X1 & {…}` or `X = {…} & X1`.
 */
function alternativesDocs(source: ts.SourceFile, defs: SchemaDefinitions): Insertion[] {
  const undocumented = new Map<string, ts.TypeAliasDeclaration>();
  for (const statement of source.statements) {
    if (ts.isTypeAliasDeclaration(statement) && !isDocumented(statement)) undocumented.set(statement.name.text, statement);
  }
  const insertions: Insertion[] = [];
  for (const statement of source.statements) {
    if (!ts.isTypeAliasDeclaration(statement) || !ts.isIntersectionTypeNode(statement.type)) continue;
    const name = statement.name.text;
    const schema = defs[name];
    const alternatives = isSchema(schema) && isSchema(schema.properties) ? (schema.anyOf ?? schema.oneOf) : undefined;
    if (!Array.isArray(alternatives)) continue;
    for (const member of statement.type.types) {
      if (!ts.isTypeReferenceNode(member) || !ts.isIdentifier(member.typeName)) continue;
      const alias = undocumented.get(member.typeName.text);
      if (alias === undefined || !alias.name.text.startsWith(name)) continue;
      const lines = [`One of the alternatives of \`${name}\`, to which \`${name}\` adds its own properties:`, ''];
      const { at, indent } = lineStartOf(alias, source);
      insertions.push({ at, text: `${docComment([...lines, ...alternativeLines(alternatives)], indent)}\n` });
    }
  }
  return insertions;
}

/**
 * `types` (the text json-schema-to-typescript generated from `defs`) with the comments it leaves
 * out: the schema's description on each interface property that lost it, and a comment on each
 * alternatives alias split off a definition (see the module's doc).
 */
export function withGeneratedDocs(types: string, defs: SchemaDefinitions): string {
  const source = ts.createSourceFile('types.ts', types, ts.ScriptTarget.Latest, true);
  const insertions = [...restoredPropertyDocs(source, defs), ...alternativesDocs(source, defs)];
  let text = types;
  for (const { at, text: comment } of insertions.sort((a, b) => b.at - a.at)) {
    text = text.slice(0, at) + comment + text.slice(at);
  }
  return text;
}
