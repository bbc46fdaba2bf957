'use strict';
// report/ and analyze/ are pure: a report and a profile in, a value out. What they load, all the
// way down, is themselves, the shared pure helpers and computation (paths, URLs, gzip, hashes,
// the pprof encoder): no file, socket, process, thread, inspector or addon; and analyze/ reads
// no clock, so one profile always gives one analysis.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');

const JS = path.resolve(__dirname, '../../js');
const SHARED = ['own.js', 'redact.js', 'schema.js', 'validate.js', 'round.js'].map((f) => path.join(JS, f));
const COMPUTATION = new Set(['node:path', 'node:url', 'node:zlib', 'node:crypto', 'pprof-format']);

const filesUnder = (dir) => fs.readdirSync(dir, { recursive: true }).filter((f) => f.endsWith('.js')).map((f) => path.join(dir, f));

/**
 * The files and modules `roots` load, transitively: { files, modules, strays: [file, what] }.
 * `read(file)` gives a file's source.
 */
function loaded(roots, read = (file) => fs.readFileSync(file, 'utf8')) {
  const files = new Set();
  const modules = new Set();
  const strays = [];
  const visit = (file) => {
    if (files.has(file)) return;
    files.add(file);
    for (const [, spec] of read(file).matchAll(/require\(\s*['"`]([^'"`]+)['"`]\s*\)/g)) {
      if (!spec.startsWith('.')) {
        modules.add(spec);
        continue;
      }
      const target = require.resolve(path.resolve(path.dirname(file), spec));
      if (target.endsWith('.json')) continue;
      const inside = ['report', 'analyze'].some((d) => target.startsWith(path.join(JS, d) + path.sep));
      if (!inside && !SHARED.includes(target)) strays.push([path.relative(JS, file), path.relative(JS, target)]);
      else visit(target);
    }
  };
  roots.forEach(visit);
  return { files, modules, strays };
}

test('report/ and analyze/ load only themselves, the shared pure helpers and computation', () => {
  const { files, modules, strays } = loaded([...filesUnder(path.join(JS, 'report')), ...filesUnder(path.join(JS, 'analyze'))]);
  assert.ok(files.size > 30, `${files.size} files read`);
  assert.deepStrictEqual(strays, [], 'js/ files outside report/, analyze/ and the shared helpers');
  assert.deepStrictEqual([...modules].filter((m) => !COMPUTATION.has(m)), [], 'modules that do more than compute');
});

test('analyze/ reads no clock', () => {
  const clock = /\bDate\.now\(|\bperformance\.now\(|\bprocess\.hrtime|\bnew Date\(\s*\)/;
  const { files } = loaded(filesUnder(path.join(JS, 'analyze')));
  const reading = [...files].filter((f) => clock.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(JS, f));
  assert.deepStrictEqual(reading, []);
});

test('the guard sees what it guards against: a report/ file that loads the addon or node:fs', () => {
  const probe = path.join(JS, 'report', 'probe.js'); // read from here, never written
  const source = 'require("node:fs"); require(\'../native\'); require(\'./escape\');\n';
  const { modules, strays } = loaded([probe], (file) => (file === probe ? source : fs.readFileSync(file, 'utf8')));
  assert.deepStrictEqual([...modules], ['node:fs']);
  assert.deepStrictEqual(strays, [['report/probe.js', 'native.js']]);
});
