/**
 * The libraries under test, by name.
 *
 * @packageDocumentation
 */
import { acpSdk } from './acp-sdk';
import { acpWire } from './acp-wire';
import { raw } from './raw';
import type { Library } from './types';
import { vscodeJsonrpc } from './vscode-jsonrpc';

/** Every library, in table order. */
export const LIBRARIES: readonly Library[] = [raw, acpWire, vscodeJsonrpc, acpSdk];

/** The library named `name`. @throws RangeError for an unknown name */
export function libraryNamed(name: string): Library {
  const found = LIBRARIES.find((library) => library.name === name);
  if (!found) throw new RangeError(`unknown library ${name}; one of ${LIBRARIES.map((l) => l.name).join(', ')}`);
  return found;
}

export type { BenchClient, BenchServer, CancellableCall, Library, LibraryName } from './types';
