'use strict';
// The inspector runs a command as an interrupt inside whatever JS the target runs then, an async
// hook's callback among them. Node loses a hook enabled or disabled there (seen on 20 and 26:
// its counts of enabled hooks stay as they were), and rloop's own hooks would be entered again:
// an attach installs, captures and leaves from the target's event loop instead.

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { listening } = require('../../cli/attach/inspector');
const connection = require('../../cli/attach/connection');
const { FIXTURES, startApp, ask } = require('../fixtures/attach-helpers');

test("attaching and leaving a target that is mostly inside an async hook's callback leaves Node's hooks as they were", { timeout: 90_000 }, async (t) => {
  const app = await startApp(path.join(FIXTURES, 'hooked-app.cjs'), { inspect: true });
  t.after(() => app.kill());
  app.exited.then((e) => { if (e.code !== null || e.signal !== 'SIGTERM') console.log('the app exited', e, app.output); });
  const inspectorsBefore = listening(app.pid);
  const o = { log: () => {}, events: ['lag'], start: { lagThresholdMs: 50 }, target: 0, pid: app.pid };
  for (let i = 0; i < 8; i++) {
    const c = await connection.open(o, () => {});
    assert.strictEqual(c.info.started, true, `attach ${i} started a monitor`);
    assert.strictEqual(c.opened, false, 'the inspector was open already');
    const left = await connection.close(c);
    assert.strictEqual(left.stopped, true, `attach ${i} stopped it`);
    const { before, now } = await ask(app, 'state');
    assert.deepStrictEqual(now, before, `after attach ${i}: Node's enabled hooks ${JSON.stringify(now.asyncHooks)}, before any ${JSON.stringify(before.asyncHooks)}`);
  }
  assert.deepStrictEqual(listening(app.pid), inspectorsBefore);
});
