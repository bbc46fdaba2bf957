'use strict';
// Validates reports against the published JSON Schema (schema/rloop-report-1.schema.json).

const Ajv2020 = require('ajv/dist/2020');
const schema = require('../schema/rloop-report-1.schema.json');

const validate = new Ajv2020({ allErrors: true, strict: true }).compile(schema);

/** Throws with the schema errors unless `report` is a valid rloop-report/1. */
function assertValidReport(report) {
  if (!validate(report)) throw new Error(`invalid report: ${JSON.stringify(validate.errors.slice(0, 5), null, 1)}`);
}

module.exports = { assertValidReport };
