'use strict';
// mocha's spec reporter, plus one plain closing line ("N passed, N failed[, N skipped]") that CI
// tools read without knowing mocha's own summary format.
const { reporters } = require('mocha');

class SummaryReporter extends reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    runner.once('end', () => {
      const { passes, failures, pending } = this.stats;
      process.stdout.write(`${passes} passed, ${failures} failed${pending ? `, ${pending} skipped` : ''}\n`);
    });
  }
}

module.exports = SummaryReporter;
