'use strict';
// The report's vocabulary, as its published JSON Schema defines it: analyze/ writes these
// values, report/ and the command line read them, so both take them from the one contract.

const schema = require('../schema/rloop-report-1.schema.json');

/** The report's schema id, the `schema` field of every report. */
const SCHEMA = schema.properties.schema.const;

/** CPU time categories, in the order the analysis indexes them. */
const CATEGORIES = Object.freeze([...schema.$defs.category.enum]);

module.exports = { SCHEMA, CATEGORIES };
