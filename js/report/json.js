'use strict';
// The JSON rendering of a report: what `json:` writes and `rloop report --json` prints.

/** `report` as JSON text; indented when `pretty`. Non-finite numbers become null. */
function renderJson(report, { pretty = false } = {}) {
  return JSON.stringify(report, null, pretty ? 2 : undefined) + '\n';
}

module.exports = { renderJson };
