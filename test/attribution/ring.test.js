'use strict';
// Handles handed to a scope by retag() (automatic HTTP scopes' keep-alive sockets) and named
// timers keep their scope once a later entry of js/attribution/ring.js's ring took their place. Each test
// runs in both ways the scope travels, where the Node line has both (frames.test.js).

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const MAJOR = Number(process.versions.node.split('.')[0]);
const OTHER = MAJOR >= 24 ? '--no-async-context-frame' : MAJOR === 22 ? '--experimental-async-context-frame' : null;
const MODES = OTHER === null ? [[]] : [[], [OTHER]];

// A client socket on loopback whose handle is retagged to 'conn' once connected; `then(sock, hooks)` runs next.
const PRELUDE = `
const rloop = require(${JSON.stringify(ROOT)});
const hooks = require(${JSON.stringify(path.join(ROOT, 'js', 'attribution', 'hooks'))});
const net = require('node:net');
const mon = rloop.start({ lag: false, io: false });
const server = net.createServer((s) => s.on('data', () => s.write('x'))).listen(0, '127.0.0.1', () => {
  const sock = net.connect(server.address().port, '127.0.0.1', () => {
    hooks.retag(sock._handle, sock._handle.getAsyncId(), mon.context('conn'));
    then(sock, hooks);
  });
});
const done = (out) => { console.log(JSON.stringify({ ...out, frames: hooks.CONTEXT_FRAMES })); process.exit(0); };
`;

function run(flags, body) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const r = spawnSync(process.execPath, [...flags, '-e', `${PRELUDE}\nfunction then(sock, hooks) {\n${body}\n}`], { encoding: 'utf8', env, timeout: 30000 });
  assert.strictEqual(r.status, 0, `${flags.join(' ')}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test('a retagged handle pushed out of the ring keeps its scope', () => {
  for (const flags of MODES) {
    // An entry of the same ring index (16 384 entries, by asyncId) takes its place.
    const out = run(flags, `
      const other = {};
      hooks.retag(other, sock._handle.getAsyncId() + (1 << 14), mon.context('other'));
      sock.on('data', () => done({ scope: hooks.current().scope, other: !!other }));
      sock.write('go');`);
    assert.strictEqual(out.scope, 'conn', `${flags.join(' ') || 'default'} (frames ${out.frames})`);
  }
});

test('a named timer pushed out of the ring keeps its scope', () => {
  for (const flags of MODES) {
    const out = run(flags, `
      hooks.scopeTimers(() => mon.context('timer'));
      const late = setTimeout(() => done({ scope: hooks.current().scope }), 20);
      hooks.scopeTimers(null);
      hooks.retag({}, late[Symbol.toPrimitive]() + (1 << 14), mon.context('other')); // the timer's asyncId
      sock.destroy();`);
    assert.strictEqual(out.scope, 'timer', `${flags.join(' ') || 'default'} (frames ${out.frames})`);
  }
});
