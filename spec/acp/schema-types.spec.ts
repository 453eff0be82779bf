/**
 * The ACP protocol types in lib/acp/schema/ are generated from the official schemas, never edited
 * by hand: regenerating them from the installed SDK gives the committed text exactly.
 */
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import {
  SCHEMA_TARGETS,
  SCHEMA_VERSIONS,
  generateSchemaTypes,
  officialSchemaText,
  schemaCopyPath,
  schemaTypesPath,
} from '../../scripts/generate-schema-types';

describe('ACP schema types (lib/acp/schema/)', () => {
  for (const version of SCHEMA_TARGETS) {
    it(`${version}.ts is what \`npm run schema\` generates from the SDK's schema`, async function () {
      this.timeout(60_000);
      const generated = await generateSchemaTypes(version);
      expect(readFileSync(schemaTypesPath(version), 'utf8') === generated, `${version}.ts is stale: run npm run schema`).to.equal(true);
      expect(generated).to.match(version === 'mcp' ? /export interface McpServerAcp \{/ : /export interface InitializeRequest \{/);
    });
  }

  for (const version of SCHEMA_VERSIONS) {
    it(`${version}.schema.json is the SDK's official ${version} schema, byte for byte`, () => {
      expect(
        readFileSync(schemaCopyPath(version), 'utf8') === officialSchemaText(version),
        `${version}.schema.json is stale: run npm run schema`,
      ).to.equal(true);
    });
  }
});
