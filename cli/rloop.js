#!/usr/bin/env node
'use strict';
// The rloop command: attach to a running process, compare two reports, or render one.

const fs = require('node:fs');
const { parseArgs } = require('node:util');
const { compare, formatComparison } = require('../js/report/compare');
const { renderJson } = require('../js/report/json');
const { SCHEMA } = require('../js/schema');

const USAGE = `usage:
  rloop --help | --version
${require('./attach/command').USAGE}  rloop top <pid> [--port <n> [--host <h>]] [--target <n>] [--no-auto-scopes]   live view; keys: s sort, p pause, q quit
  rloop compare <base.json> <head.json> [--json]   what changed; exit 1 if anything regressed
  rloop report <in.json> [--html <out.html>] [--json <out.json>]
`;

class UsageError extends Error {}

function readReport(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (e) {
    throw new UsageError(`cannot read ${file}: ${e.code || e.message}`);
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`${file} is not JSON`);
  }
}

/** Positional arguments and `options` (util.parseArgs shapes); bad flags are usage errors. */
function parse(args, options) {
  try {
    const { positionals, values } = parseArgs({ args, options, allowPositionals: true });
    return { positional: positionals, ...values };
  } catch (e) {
    throw new UsageError(e.message);
  }
}

function main(argv, out, err = process.stderr) {
  const [command, ...args] = argv;
  if (command === '--help' || command === '-h' || command === 'help') {
    out.write(USAGE);
    return 0;
  }
  if (command === '--version' || command === '-v') {
    out.write(`rloop ${require('../package.json').version}\n`);
    return 0;
  }
  if (command === 'attach') return require('./attach/command').run(args, out, err);
  if (command === 'top') return require('./top').run(args, process.stdin, out, err);
  if (command === 'compare') {
    const { positional, json } = parse(args, { json: { type: 'boolean' } });
    if (positional.length !== 2) throw new UsageError('compare needs two report files');
    const c = compare(readReport(positional[0]), readReport(positional[1]));
    out.write(json ? JSON.stringify(c, null, 2) + '\n' : formatComparison(c));
    return c.verdict === 'REGRESSED' || c.verdict === 'MIXED' ? 1 : 0;
  }
  if (command === 'report') {
    const { positional, html, json } = parse(args, { html: { type: 'string' }, json: { type: 'string' } });
    if (positional.length !== 1) throw new UsageError('report needs one report file');
    const report = readReport(positional[0]);
    if (report.schema !== SCHEMA) throw new UsageError(`${positional[0]} is not an ${SCHEMA} report`);
    if (!html && !json) throw new UsageError('report needs --html and/or --json');
    if (json) fs.writeFileSync(json, renderJson(report, { pretty: true }));
    if (html) fs.writeFileSync(html, require('../js/report/html').renderHtml(report));
    return 0;
  }
  throw new UsageError(command ? `unknown command ${command}` : 'no command');
}

function failed(e) {
  process.stderr.write(e instanceof UsageError ? `rloop: ${e.message}\n${USAGE}` : `rloop: ${e.stack}\n`);
  return 2;
}

if (require.main === module) {
  try {
    Promise.resolve(main(process.argv.slice(2), process.stdout)).then((code) => { process.exitCode = code; }, (e) => { process.exitCode = failed(e); });
  } catch (e) {
    process.exitCode = failed(e);
  }
}

module.exports = { main };
