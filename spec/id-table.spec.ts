/**
 * The table of requests by id behind a connection's pending and in-flight requests: a `Map` with a
 * guard entry that keeps its storage. The guard must never show.
 */
import { expect } from 'chai';
import { IdTable } from '../lib/requests/id-table';

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
});
