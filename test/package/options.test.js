'use strict';
// Every option is described once, in its family's table (js/options.js, js/capture/options.js,
// js/metrics/options.js), which the checks read. What describes options elsewhere is held to
// that table here: index.d.ts, the docs' option tables, zero-code's variables and the attach flags.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { OPTIONS } = require('../../js/options');
const { ENV, variableOf } = require('../../register/variables');
const { USAGE, FLAGS } = require('../../cli/attach/command');

const ROOT = path.join(__dirname, '..', '..');
const read = (file) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const TYPES = read('index.d.ts');
const INTERFACE = { start: 'StartOptions', capture: 'CaptureOptions', metrics: 'MetricsOptions' };

/** An option's name in its interface or doc table: metrics' without the `metrics.` of its label. */
const own = (o) => (o.family === 'metrics' ? o.label.slice('metrics.'.length) : o.label);
const topLevel = OPTIONS.filter((o) => !own(o).includes('.'));
const nested = OPTIONS.filter((o) => own(o).includes('.'));

/** A value as the docs write it: 10 000 as 10000, quotes and backticks left out. */
function normal(text) {
  return text.replace(/[`']/g, '').replace(/(\d)[  ](?=\d{3}\b)/g, '$1').trim();
}

/** An option's default as the docs write it (index.d.ts: `null` for none). */
function shown(o, none = 'none') {
  if (o.required) return 'required';
  return o.default === null ? none : String(o.default);
}

/** `{ name: doc }` of an interface of index.d.ts: each property with its JSDoc (doc, then declaration). */
function properties(name) {
  const body = new RegExp(`export interface ${name} \\{\\n([\\s\\S]*?)\\n\\}`).exec(TYPES)?.[1];
  assert.ok(body, `interface ${name} in index.d.ts`);
  const out = {};
  for (const [, doc, prop, type] of body.matchAll(/\/\*\*([\s\S]*?)\*\/\s*\n\s*(\w+)\??: ((?:[^;{]|\{[^}]*\})*);/g)) {
    out[prop] = `${normal(doc.replace(/\n\s*\*/g, ' '))} ${type}`;
  }
  return out;
}

/** `{ name: [default, meaning] }` of the option table under `heading` in a doc. */
function docTable(file, heading) {
  const text = read(file);
  const at = text.indexOf(`\n${heading}\n`);
  assert.ok(at >= 0, `${file}: ${heading}`);
  const table = /\n\| option \| default \| meaning \|\n\|---\|---\|---\|\n((?:\|.*\n)+)/.exec(text.slice(at))[1];
  return Object.fromEntries(table.trim().split('\n').map((row) => {
    const [name, fallback, meaning] = row.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim());
    return [name.replace(/`/g, ''), [normal(fallback), meaning]];
  }));
}

const DOCS = {
  start: docTable('docs/api.md', '### `rloop.start(options?) → Monitor`'),
  capture: docTable('docs/api.md', '### Capture options'),
  metrics: docTable('docs/metrics.md', '## Options'),
};

test('every option in the tables has a default (or is required) and a one-line meaning', () => {
  for (const o of OPTIONS) {
    assert.ok(o.default !== undefined || o.required, `${o.label}: a default`);
    assert.ok(typeof o.meaning === 'string' && o.meaning.length > 0 && !o.meaning.includes('\n'), `${o.label}: a meaning`);
    assert.ok(o.range !== undefined || typeof o.check === 'function', `${o.label}: checked`);
  }
  assert.strictEqual(new Set(OPTIONS.map((o) => o.label)).size, OPTIONS.length, 'one entry per option');
});

test('index.d.ts types every option with its default and limits, and its alias as deprecated', () => {
  const interfaces = Object.fromEntries(Object.entries(INTERFACE).map(([family, name]) => [family, properties(name)]));
  for (const o of topLevel) {
    const doc = interfaces[o.family][own(o)];
    assert.ok(doc !== undefined, `${INTERFACE[o.family]}.${own(o)} in index.d.ts`);
    if (o.required) assert.match(doc, /Required\./, `${own(o)} is required`);
    else assert.match(doc, new RegExp(`Default ${shown(o, 'null').replace(/\./g, '\\.')}[.,( ]`), `${INTERFACE[o.family]}.${own(o)}: default ${shown(o, 'null')}`);
    if (o.range) assert.ok(doc.includes(`${o.range[0]} – ${o.range[1]}`), `${INTERFACE[o.family]}.${own(o)}: ${o.range.join(' – ')} in "${doc}"`);
    if (o.alias) assert.match(interfaces[o.family][o.alias] ?? '', new RegExp(`@deprecated Alias of ${o.name}\\b`), `${o.alias}: a deprecated alias`);
  }
  for (const o of nested) {
    const parent = interfaces[o.family][own(o).split('.')[0]];
    assert.match(parent, new RegExp(`\\b${o.name}\\?: `), `${o.label} in index.d.ts`);
    if (typeof o.default !== 'boolean') assert.match(parent, new RegExp(`${o.name}\`?:[^.]*default ${shown(o)}\\b`), `${o.label}: default ${shown(o)}`);
  }
  for (const [family, props] of Object.entries(interfaces)) {
    for (const prop of Object.keys(props)) {
      assert.ok(topLevel.some((o) => o.family === family && (own(o) === prop || o.alias === prop)), `${INTERFACE[family]}.${prop} is in a table`);
    }
  }
});

test("the docs' option tables list every option with its default, and its alias", () => {
  for (const o of topLevel) {
    const row = DOCS[o.family][own(o)];
    assert.ok(row !== undefined, `${own(o)} in the ${o.family} options table`);
    assert.strictEqual(row[0], shown(o), `${own(o)}: its default`);
    if (o.alias) assert.match(DOCS[o.family][o.alias]?.[1] ?? '', new RegExp(`^alias of \`${o.name}\``), `${o.alias}: an alias`);
  }
  for (const o of nested) {
    const [, meaning] = DOCS[o.family][own(o).split('.')[0]];
    assert.ok(meaning.includes(o.name), `${o.label} in its parent's row`);
    if (typeof o.default !== 'boolean') assert.match(normal(meaning), new RegExp(`${o.name}[^|]*default ${shown(o)}\\b`), `${o.label}: default ${shown(o)}`);
  }
  for (const [family, rows] of Object.entries(DOCS)) {
    for (const name of Object.keys(rows)) {
      assert.ok(topLevel.some((o) => o.family === family && (own(o) === name || o.alias === name)), `${family} table: ${name} is an option`);
    }
  }
  // The example of docs/captures.md spells out capture()'s defaults.
  const example = /```js\nconst report = await mon\.capture\(\{\n([\s\S]*?)\n\}\);/.exec(read('docs/captures.md'))[1];
  for (const [, name, value] of example.matchAll(/^ {2}(\w+): ([^,]+),/gm)) {
    assert.strictEqual(value, shown(OPTIONS.find((o) => o.family === 'capture' && o.label === name)), `docs/captures.md: ${name}`);
  }
});

test("zero-code's variables: each sets an option, each option's variable is read, and the help and docs list them", () => {
  const variables = variableOf(OPTIONS);
  const ofOptions = [...new Set(Object.values(variables))].sort();
  // RLOOP_DELAY is zero-code use's own: when its one capture starts.
  assert.deepStrictEqual(Object.keys(ENV).filter((v) => v !== 'RLOOP_DELAY').sort(), ofOptions);
  for (const o of OPTIONS.filter((x) => x.variable !== undefined)) {
    assert.strictEqual(variables[o.label], o.variable, `errors about ${o.label} name ${o.variable}`);
    // A duration's help shows it with its unit.
    if (o.unit === 'ms' || o.unit === 'µs') assert.match(ENV[o.variable], /\d+(ms|s|m|us)\b/, `${o.variable}: a duration with its unit`);
  }
  const documented = [...read('docs/zero-code.md').matchAll(/^\| `(RLOOP_\w+)` \|/gm)].map((m) => m[1]);
  assert.deepStrictEqual(documented.sort(), Object.keys(ENV).sort(), 'docs/zero-code.md lists every variable');
});

test("attach's flags: each flag of an option is in the table, the usage names them and only them", () => {
  const flagged = OPTIONS.filter((o) => o.flag !== undefined);
  for (const { flag } of flagged) for (const name of [flag.name, ...(flag.aliases ?? [])]) assert.ok(FLAGS[name], `--${name} is parsed`);
  const used = new Set([...USAGE.matchAll(/(?<![\w-])--?([a-z][a-z-]*)/g)].map((m) => m[1]));
  const shorts = Object.fromEntries(Object.entries(FLAGS).filter(([, f]) => f.short).map(([name, f]) => [f.short, name]));
  for (const name of used) assert.ok(FLAGS[name] || shorts[name], `--${name} of the usage is a flag`);
  for (const { flag } of flagged) {
    for (const name of [flag.name, ...(flag.aliases ?? [])]) {
      assert.ok(used.has(name) || (name === flag.name && used.has(flag.short)), `the usage names --${name}${flag.short ? ` or -${flag.short}` : ''}`);
    }
  }
  // A file option's flag is its name in kebab case, its variable RLOOP_ and its name in upper snake case.
  const files = flagged.filter((o) => o.flag.arg === '<f>');
  assert.deepStrictEqual(files.map((o) => o.name), ['heapSnapshot', 'json', 'html', 'cpuprofile', 'pprof', 'heapPprof']);
  for (const o of files) {
    assert.strictEqual(o.flag.name, o.name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), `${o.name}: its flag`);
    assert.strictEqual(o.variable, `RLOOP_${o.name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`, `${o.name}: its variable`);
  }
});
