/**
 * Property-test settings, arbitraries and hostile inputs. `FUZZ_RUNS` scales every property (`npm run fuzz`);
 * `FUZZ_SEED` replays a reported failure.
 */
import fc from 'fast-check';
import type { JsonValue, Message } from '../../lib';

/** Runs per property: `FUZZ_RUNS` when set, else `defaultRuns`. */
export function fuzzRuns(defaultRuns: number): number {
  const runs = Number(process.env.FUZZ_RUNS);
  return Number.isSafeInteger(runs) && runs > 0 ? runs : defaultRuns;
}

/** fast-check parameters for one property (runs, optional seed). */
export function fuzzParameters(defaultRuns = 1000): fc.Parameters<unknown> {
  const seed = Number(process.env.FUZZ_SEED);
  return Number.isSafeInteger(seed) ? { numRuns: fuzzRuns(defaultRuns), seed } : { numRuns: fuzzRuns(defaultRuns) };
}

/** Whether a long fuzz run was asked for (then specs lift mocha's timeout). */
export const isLongFuzzRun = process.env.FUZZ_RUNS !== undefined;

/** `value` with every `-0` made `0`: JSON has no negative zero, so `-0` never survives a round trip. */
function withoutNegativeZero(value: JsonValue): JsonValue {
  if (Object.is(value, -0)) return 0;
  if (Array.isArray(value)) return value.map(withoutNegativeZero);
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, JsonValue> = {};
    for (const [key, member] of Object.entries(value)) {
      Object.defineProperty(copy, key, { value: withoutNegativeZero(member), enumerable: true, writable: true, configurable: true });
    }
    return copy;
  }
  return value;
}

/** Any JSON value, with strings from the whole of Unicode (multi-byte UTF-8 included). */
export const jsonValue: fc.Arbitrary<JsonValue> = (fc.jsonValue({ maxDepth: 4, stringUnit: 'binary' }) as fc.Arbitrary<JsonValue>).map(
  withoutNegativeZero,
);

const text = fc.string({ unit: 'binary', maxLength: 24 });
const id = fc.oneof(fc.integer(), text, fc.constant(null));
const params = fc.oneof(fc.dictionary(text, jsonValue, { maxKeys: 5 }), fc.array(jsonValue, { maxLength: 5 }));
const errorObject = fc.oneof(
  fc.record({ code: fc.integer(), message: text }),
  fc.record({ code: fc.integer(), message: text, data: jsonValue }),
);

/** Any well-formed JSON-RPC 2.0 message: request, notification, success or error response. */
export const message: fc.Arbitrary<Message> = fc.oneof(
  fc.record({ jsonrpc: fc.constant('2.0' as const), id, method: text, params }, { requiredKeys: ['jsonrpc', 'id', 'method'] }),
  fc.record({ jsonrpc: fc.constant('2.0' as const), method: text, params }, { requiredKeys: ['jsonrpc', 'method'] }),
  fc.record({ jsonrpc: fc.constant('2.0' as const), id, result: jsonValue }),
  fc.record({ jsonrpc: fc.constant('2.0' as const), id, error: errorObject }),
) as fc.Arbitrary<Message>;

/** Cut positions for splitting a byte sequence into chunks (0 to 12 cuts anywhere). */
export const cuts = fc.array(fc.nat(), { maxLength: 12 });

/** Bytes a hostile peer may send: arbitrary bytes biased to NUL, CR, invalid UTF-8 and brackets. */
export const garbageBytes: fc.Arbitrary<Uint8Array> = fc
  .array(
    fc.oneof(
      fc.integer({ min: 0, max: 255 }),
      fc.constantFrom(0x00, 0x0d, 0x0a, 0xc3, 0xe2, 0xf0, 0xff, 0x80, 0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d),
    ),
    { maxLength: 300 },
  )
  .map((bytes) => Uint8Array.from(bytes));

/** A JSON value nested `depth` levels deep (`[[[…]]]`), as text; built without recursion. */
export function deeplyNestedArray(depth: number): string {
  return '['.repeat(depth) + ']'.repeat(depth);
}
