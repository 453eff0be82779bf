/**
 * acp-wire's own version, as its package.json says.
 *
 * @packageDocumentation
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** The version in acp-wire's package.json (found from this file in `lib/` or `dist/lib/`); `0.0.0` when there is none. */
export function packageVersion(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === 'acp-wire' && manifest.version) return manifest.version;
    }
    if (dirname(dir) === dir) return '0.0.0';
  }
}
