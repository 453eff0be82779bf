/**
 * The table of requests by id behind a connection's pending and in-flight requests: one entry in
 * fields, more in a `Map` with a guard entry that is renewed after enough deletes. None of that
 * may show: it must behave as a `Map` from id to value, in insertion order.
 */
import { expect } from 'chai';
import type { RequestId } from '../lib';
import { IdTable } from '../lib/requests/id-table';
import { seededRandom } from './helpers/random';

/** The table's entries as `[id, value]` pairs, compared through `get` and `values`. */
function expectSameAs(table: IdTable<string>, model: Map<RequestId, string>): void {
  expect(table.size).to.equal(model.size);
  expect(table.values()).to.deep.equal([...model.values()]);
  for (const [id, value] of model) expect(table.get(id)).to.equal(value);
}

describe('IdTable', () => {
  it('starts empty: size 0, no values, nothing to get or delete', () => {
    const table = new IdTable<string>();
    expect(table.size).to.equal(0);
    expect(table.values()).to.deep.equal([]);
    expect(table.get(1)).to.equal(undefined);
    expect(table.delete(1)).to.equal(false);
  });

  it('keeps number, string and null ids apart, and counts only them', () => {
    const table = new IdTable<string>();
    table.set(1, 'number');
    table.set('1', 'string');
    table.set(null, 'null');
    expect(table.size).to.equal(3);
    expect([table.get(1), table.get('1'), table.get(null)]).to.deep.equal(['number', 'string', 'null']);
    expect(table.values()).to.deep.equal(['number', 'string', 'null']);
  });

  it('is empty again after its last entry is deleted, and takes new ones as before', () => {
    const table = new IdTable<string>();
    for (let id = 0; id < 3; id++) {
      table.set(id, `request ${id}`);
      expect(table.size).to.equal(1);
      expect(table.delete(id)).to.equal(true);
      expect(table.size).to.equal(0);
      expect(table.values()).to.deep.equal([]);
    }
  });

  it('is empty after clear() and still works', () => {
    const table = new IdTable<string>();
    table.set(1, 'a');
    table.set(2, 'b');
    table.clear();
    expect(table.size).to.equal(0);
    expect(table.values()).to.deep.equal([]);
    table.set(3, 'c');
    expect(table.values()).to.deep.equal(['c']);
    expect(table.size).to.equal(1);
  });

  it('keeps insertion order when the first entry goes while later ones stay', () => {
    const table = new IdTable<string>();
    table.set(1, 'a');
    table.set(2, 'b');
    table.set(3, 'c');
    expect(table.delete(1)).to.equal(true);
    table.set(4, 'd');
    expect(table.values()).to.deep.equal(['b', 'c', 'd']);
    expect(table.delete(2)).to.equal(true);
    expect(table.delete(3)).to.equal(true);
    expect(table.delete(4)).to.equal(true);
    table.set(5, 'e');
    table.set(6, 'f');
    expect(table.values()).to.deep.equal(['e', 'f']);
  });

  it('replaces the value of an id it holds, wherever that entry is, without moving it', () => {
    const table = new IdTable<string>();
    table.set(1, 'a');
    table.set(2, 'b');
    table.set(1, 'A');
    table.set(2, 'B');
    expect(table.values()).to.deep.equal(['A', 'B']);
    expect(table.size).to.equal(2);
  });

  it('finds 0 under -0, as a Map does, and tells null from "null"', () => {
    const table = new IdTable<string>();
    table.set(0, 'zero');
    table.set(null, 'null');
    expect(table.get(-0)).to.equal('zero');
    expect(table.get('null')).to.equal(undefined);
    expect(table.delete(-0)).to.equal(true);
    expect(table.get(null)).to.equal('null');
  });

  it('behaves as a Map through 20,000 random sets and deletes (seeded), across the renewals of its storage', () => {
    const random = seededRandom(23);
    const table = new IdTable<string>();
    const model = new Map<RequestId, string>();
    const ids: RequestId[] = [0, 1, 2, 3, 5, 8, 13, '1', 'x', null];
    for (let step = 0; step < 20_000; step++) {
      // Phases of few and of many entries, so that both the fields and the Map take entries.
      const wide = Math.floor(step / 2_000) % 2 === 1;
      const id = wide ? ids[Math.floor(random() * ids.length)]! : ids[Math.floor(random() * 3)]!;
      if (random() < 0.5) {
        table.set(id, `v${step}`);
        model.set(id, `v${step}`);
      } else {
        expect(table.delete(id)).to.equal(model.delete(id));
      }
      expectSameAs(table, model);
    }
  });
});
