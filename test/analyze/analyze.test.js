'use strict';
// CPU profile capture (js/capture/profile.js) and analysis (js/analyze/index.js): real profiles of real
// workloads on the running Node line (`npm test` runs every line), a worker thread, the .cpuprofile file, and the
// classification and scope rules on hand-built profiles.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const profile = require('../../js/capture/profile');
const markers = require('../../js/capture/markers');
const { analyze } = require('../../js/analyze');
const { CATEGORIES } = require('../../js/schema');
const { profiled, NAMES } = require('../fixtures/profile-workloads');
const { synthetic, fn, native } = require('../fixtures/tree-profile');

const NATIVE_PARSE = JSON.parse;

const busyMs = (a) => Object.entries(a.categories).reduce((sum, [c, ms]) => (c === 'idle' ? sum : sum + ms), 0);
const pattern = (a, id) => a.patterns.find((p) => p.id === id);
const ids = (a) => a.patterns.map((p) => p.id).join(', ');

/** What each workload's analysis must show, on any Node version. */
const EXPECT = {
  idle(a) {
    assert.deepStrictEqual(ids(a), 'healthy', JSON.stringify(a.patterns));
    assert.ok(a.categories.idle > 0.5 * a.durationMs, `idle ${a.categories.idle} of ${a.durationMs} ms`);
  },
  json(a) {
    const p = pattern(a, 'json-heavy');
    assert.ok(p, `json-heavy among ${ids(a)}`);
    assert.strictEqual(p.location.functionName, 'parseBigJson');
    assert.match(p.message, /mostly JSON\.parse called from parseBigJson \(file:.*profile-workloads\.js:\d+:\d+\)/);
    assert.ok(a.categories.json > 0.3 * busyMs(a), `json ${a.categories.json} of ${busyMs(a)} ms busy`);
    assert.strictEqual(a.heavyFunctions.find((f) => f.functionName === 'JSON.parse')?.category, 'json');
  },
  regex(a) {
    const p = pattern(a, 'regex-heavy');
    assert.ok(p, `regex-heavy among ${ids(a)}`);
    assert.strictEqual(p.location.functionName, 'matchEvil');
    assert.match(p.location.url, /profile-workloads\.js$/);
    assert.match(p.message, /mostly \/\^\(a\+\)\+\$\/ called from matchEvil/);
  },
  syncIo(a) {
    const p = pattern(a, 'sync-io');
    assert.ok(p, `sync-io among ${ids(a)}`);
    assert.strictEqual(p.location.functionName, 'touchFiles');
    assert.match(p.message, /mostly (write|read)FileSync called from touchFiles/);
    // The time is in native bindings (open, read, writeBuffer…) under the *Sync functions.
    const native = a.heavyFunctions.filter((f) => f.url === '' && f.category === 'sync-io');
    assert.ok(native.length > 0, 'native frames under fs *Sync count as sync-io');
    assert.ok(a.categories['sync-io'] > 0.5 * busyMs(a));
  },
  pbkdf2(a) {
    const p = pattern(a, 'crypto-heavy');
    assert.ok(p, `crypto-heavy among ${ids(a)}`);
    assert.strictEqual(p.location.functionName, 'hashPassword');
    assert.match(p.message, /mostly crypto pbkdf2Sync called from hashPassword/);
    assert.strictEqual(a.heavyFunctions[0].category, 'crypto', 'the native hashing under pbkdf2Sync');
  },
  churn(a) {
    const p = pattern(a, 'gc-pressure');
    assert.ok(p, `gc-pressure among ${ids(a)}`);
    assert.ok(a.categories.gc > 0.05 * busyMs(a));
    assert.strictEqual(p.location.functionName, 'churnObjects', p.message);
  },
  parseConfig(a) {
    assert.ok(a.categories.json < 0.01 * busyMs(a), `json ${a.categories.json} ms`);
    assert.strictEqual(pattern(a, 'json-heavy'), undefined);
    assert.deepStrictEqual(
      { name: a.heavyFunctions[0].functionName, category: a.heavyFunctions[0].category },
      { name: 'parseConfig', category: 'user' },
    );
    const hog = pattern(a, 'cpu-hog');
    assert.ok(hog, `cpu-hog among ${ids(a)}`);
    assert.notStrictEqual(hog.severity, 'info', 'over half the busy time'); // critical from 80 %, unless load stole it
    assert.strictEqual(hog.location.functionName, 'parseConfig');
    assert.strictEqual(a.callStacks[0].functionName, 'parseConfig');
    assert.strictEqual(a.callStacks[0].stacks[0].frames[0].functionName, 'parseConfig', 'leaf first');
  },
};

test('profile.start validates its options', async () => {
  assert.deepStrictEqual(profile.profileOptions(), { intervalUs: 100 });
  await assert.rejects(profile.start({ intervalUs: '100' }), TypeError);
  await assert.rejects(profile.start({ intervalUs: 1 }), /'profile.intervalUs' must be between 10 and/);
  await assert.rejects(profile.start({ interval: 100 }), /unknown profile option 'interval'/);
  await assert.rejects(profile.start(null), TypeError);
  assert.strictEqual(JSON.parse, NATIVE_PARSE, 'a failed start marks nothing');
});

for (const name of NAMES) {
  test(`${process.version}: the ${name} workload`, async () => {
    EXPECT[name](analyze(await profiled(name)));
  });
}

test('profiles a worker thread, whose JSON markers leave the main thread alone', async () => {
  const worker = new Worker(
    `const { parentPort } = require('node:worker_threads');
    const profile = require(${JSON.stringify(require.resolve('../../js/capture/profile'))});
    const { analyze } = require(${JSON.stringify(require.resolve('../../js/analyze'))});
    function workerSpin() {
      let x = 0;
      for (const end = performance.now() + 200; performance.now() < end; ) for (let i = 0; i < 1e5; i++) x = (x + i) % 7919;
      return x;
    }
    (async () => {
      const p = await profile.start();
      parentPort.postMessage('profiling');
      await new Promise((resolve) => parentPort.once('message', resolve));
      workerSpin();
      parentPort.postMessage(analyze(await p.stop()));
    })();`,
    { eval: true },
  );
  const messages = [];
  const done = new Promise((resolve, reject) => {
    worker.on('message', (m) => {
      messages.push(m);
      if (m === 'profiling') {
        assert.strictEqual(JSON.parse, NATIVE_PARSE, "the worker's profile marks only the worker's JSON");
        worker.postMessage('go');
      } else {
        resolve(m);
      }
    });
    worker.on('error', reject);
  });
  const a = await done;
  await worker.terminate();
  assert.strictEqual(a.heavyFunctions[0].functionName, 'workerSpin');
  assert.strictEqual(pattern(a, 'cpu-hog').location.functionName, 'workerSpin');
});

test('a .cpuprofile file analyzes the same; stop() and stopSync() restore JSON', async () => {
  const p = await profile.start({ intervalUs: 200 });
  assert.notStrictEqual(JSON.parse, NATIVE_PARSE);
  const text = JSON.stringify(Array.from({ length: 20000 }, (_, i) => ({ i })));
  for (let i = 0; i < 20; i++) JSON.parse(text);
  const raw = await p.stop();
  assert.strictEqual(p.stopSync(), raw, 'stopping again gives the same profile');
  assert.strictEqual(JSON.parse, NATIVE_PARSE);

  const file = path.join(os.tmpdir(), `rloop-${process.pid}.cpuprofile`);
  try {
    fs.writeFileSync(file, JSON.stringify(raw));
    assert.deepStrictEqual(analyze(JSON.parse(fs.readFileSync(file, 'utf8'))), analyze(raw));
  } finally {
    fs.rmSync(file, { force: true });
  }

  // Two profiles at once: JSON stays marked until the last one stops, which also works in 'exit'.
  const [a, b] = await Promise.all([profile.start(), profile.start()]);
  a.stopSync();
  assert.notStrictEqual(JSON.parse, NATIVE_PARSE);
  assert.ok(Array.isArray(b.stopSync().samples));
  assert.strictEqual(JSON.parse, NATIVE_PARSE);
  const exiting = execFileSync(process.execPath, ['-e', `
    require(${JSON.stringify(require.resolve('../../js/capture/profile'))}).start().then((p) => {
      process.on('exit', () => console.log(p.stopSync().samples.length >= 0 && JSON.parse.toString().includes('native code')));
    });`], { encoding: 'utf8' });
  assert.strictEqual(exiting.trim(), 'true');
});


/** A synthetic frame as analyze() reports it. */
const reported = ({ functionName, url }) => ({ functionName, url, line: url ? 10 : null, column: url ? 5 : null });

test('classification follows what a frame is, innermost marked frame first', () => {
  const p = synthetic(
    [native('(root)'),
      [fn('main'),
        [fn('parseConfig')],
        [{ ...fn('JSON.parse'), key: 'user JSON.parse' }], // a user function with a builtin's name is user code
        [{ functionName: 'JSON.parse', url: markers.JSON_MARKER_URL }, [fn('reviver')]],
        [native('RegExp: \\d+')],
        [fn('readFileSync', 'node:fs'), [fn('readSync', 'node:fs'), [native('read')]]],
        [fn('pbkdf2Sync', 'node:internal/crypto/pbkdf2'), [native('run')]],
        [fn('readStream', 'node:internal/fs/streams'), [native('readChunk')]],
        [fn('listOnTimeout', 'node:internal/timers')]],
      [native('(garbage collector)')],
      [native('(program)')],
      [native('(idle)')]],
    ['parseConfig', 'user JSON.parse', 'JSON.parse', 'reviver', 'RegExp: \\d+', 'read', 'read', 'readSync', 'run',
      'readChunk', 'listOnTimeout', '(garbage collector)', '(program)', '(idle)'],
    { stepUs: 1000 },
  );
  const a = analyze(p);
  assert.deepStrictEqual(Object.keys(a.categories), CATEGORIES);
  // Two 'JSON.parse' samples: the user function's (user) and the marker's (json, with its reviver).
  assert.deepStrictEqual(a.categories, {
    user: 2, node: 1, native: 1, json: 2, regex: 1, crypto: 1, 'sync-io': 3, gc: 1, program: 1, idle: 1,
  });
  const categoryOf = Object.fromEntries(a.heavyFunctions.map((f) => [`${f.functionName}@${f.url}`, f.category]));
  assert.strictEqual(categoryOf['JSON.parse@file:///app.js'], 'user');
  assert.strictEqual(categoryOf[`JSON.parse@${markers.JSON_MARKER_URL}`], 'json');
  assert.strictEqual(categoryOf['read@'], 'sync-io');
  assert.strictEqual(categoryOf['readChunk@'], 'native', 'a native call under async fs code is not sync I/O');
  assert.strictEqual(categoryOf['(idle)@'], undefined, 'idle is no heavy function');
  const sync = pattern(a, 'sync-io');
  assert.match(sync.message, /mostly readFileSync called from main/, 'the outermost *Sync function, the one main called');
  assert.deepStrictEqual(sync.location, reported(fn('main')));
  assert.deepStrictEqual(a.heavyFunctions.find((f) => f.functionName === 'read'), {
    ...reported(native('read')), selfMs: 2, selfPercent: 13.33, busyPercent: 15.38, category: 'sync-io',
  });
  assert.deepStrictEqual(
    a.callStacks.find((s) => s.functionName === 'read').stacks[0].frames.map((f) => f.functionName),
    ['read', 'readSync', 'readFileSync', 'main'],
  );
});

test('patterns: thresholds on busy time, severity by share, healthy when none fires', () => {
  const tree = [native('(root)'), [fn('main'), [fn('hot')], [fn('warm')]], [native('(garbage collector)')], [native('(idle)')]];
  const times = (n, name) => Array(n).fill(name);
  // Single calls of 1 s are long: the shares alone decide here (long-calls has its own test).
  const run = (samples, lagThresholdMs = 1000) => analyze(synthetic(tree, samples, { stepUs: 1000 }), { lagThresholdMs });

  const hog = run([...times(90, 'hot'), ...times(10, 'warm')]);
  assert.deepStrictEqual(hog.patterns.map((p) => [p.id, p.severity, p.percent]), [['cpu-hog', 'critical', 90]]);
  // The hog's 90 ms call is long at a 50 ms threshold: said in its pattern, not in another.
  const long = run([...times(90, 'hot'), ...times(10, 'warm')], 50);
  assert.deepStrictEqual(ids(long), 'cpu-hog');
  assert.match(long.patterns[0].message, /^hot \(file:\/\/\/app\.js:10:5\) took 90 % of busy time, 90 ms, in its own code; 1 single call lasted 50 ms or more, the longest 90 ms$/);
  assert.strictEqual(run([...times(60, 'hot'), ...times(40, 'warm')]).patterns[0].severity, 'warning');
  assert.deepStrictEqual(ids(run([...times(50, 'hot'), ...times(50, 'warm')])), 'healthy', '50 % is not more than half');

  const gc = run([...times(45, 'hot'), ...times(45, 'warm'), ...times(10, '(garbage collector)')]);
  assert.deepStrictEqual(gc.patterns.map((p) => [p.id, p.severity]), [['gc-pressure', 'warning']]);
  assert.deepStrictEqual(gc.patterns[0].location.functionName, 'warm', 'GC is charged to what ran just before it');

  // The same shares at 5 % load: every severity one level lower.
  const idleHog = run([...times(9, 'hot'), ...times(1, 'warm'), ...times(190, '(idle)')]);
  assert.deepStrictEqual(idleHog.patterns.map((p) => [p.id, p.severity]), [['cpu-hog', 'warning']]);

  // An idle app's work: GC of 5 ms in a second of profile, most of its 10 ms busy, is no warning.
  const idle = run([...times(3, 'hot'), ...times(2, 'warm'), ...times(5, '(garbage collector)'), ...times(990, '(idle)')]);
  assert.deepStrictEqual(idle.patterns.map((p) => [p.id, p.severity]), [['gc-pressure', 'info']]);
  assert.strictEqual(idle.patterns[0].percent, 50);

  // Under 1 ms is noise at any share.
  const tiny = analyze(synthetic(tree, ['hot', '(idle)'], { stepUs: 100 }));
  assert.deepStrictEqual(ids(tiny), 'healthy');
  assert.strictEqual(tiny.patterns[0].location, null);
});

test('module loading is not sync-io: the file reads of the loader are node work, a module\'s own *Sync calls sync-io', () => {
  const loader = 'node:internal/modules/cjs/loader';
  const p = synthetic(
    [native('(root)'),
      [fn('Module._load', loader),
        [fn('Module._extensions..js', loader), [{ ...fn('readFileSync', 'node:fs'), key: 'load read' }, [{ ...native('read'), key: 'load native' }]]],
        [fn('compileFunction', 'node:vm'), [native('compile')]],
        [fn('(anonymous)', 'file:///srv/app/config.js'), [fn('readFileSync', 'node:fs'), [native('read')]]]],
      [native('(idle)')]],
    [...Array(8).fill('load native'), ...Array(4).fill('load read'), ...Array(3).fill('compile'), ...Array(5).fill('read'), ...Array(80).fill('(idle)')],
    { stepUs: 1000 },
  );
  const a = analyze(p);
  assert.strictEqual(a.categories['sync-io'], 5, 'only the readFileSync of config.js itself');
  assert.strictEqual(a.categories.node, 4, 'the readFileSync of the loader is work of Node');
  assert.strictEqual(a.categories.native, 11, 'what the loader calls natively');
  const sync = pattern(a, 'sync-io');
  assert.match(sync.message, /^Synchronous I\/O took 25 % of busy time, 5 ms, mostly readFileSync called from \(anonymous\) \(file:\/\/\/srv\/app\/config\.js/);
  assert.match(sync.suggestion, /Node loading modules, require\(\) and import, is not counted here/);

  // The same start-up without the config read: no sync-io at all.
  const plain = synthetic(
    [native('(root)'), [fn('require', 'node:internal/modules/helpers'), [fn('Module._load', loader), [fn('readFileSync', 'node:fs'), [native('read')]]]], [native('(idle)')]],
    [...Array(10).fill('read'), ...Array(10).fill('readFileSync'), ...Array(80).fill('(idle)')],
    { stepUs: 1000 },
  );
  const b = analyze(plain);
  assert.strictEqual(b.categories['sync-io'], 0);
  assert.strictEqual(pattern(b, 'sync-io'), undefined, ids(b));
});

test('each sample takes the scope in force at its time; idle samples belong to none', () => {
  const p = synthetic(
    [native('(root)'), [fn('main'), [fn('a')], [fn('b')]], [native('(idle)')], [native('(garbage collector)')]],
    ['a', 'a', 'b', '(idle)', 'b', '(garbage collector)', 'a'],
  );
  // Samples at 1100, 1200, …, 1700 µs, each lasting 100 µs.
  const timeline = [[1000, 'x'], [1250, null], [1500, 'y'], [1650, 'x']];
  const a = analyze(p, { scopeTimeline: timeline });
  const top = (frame, selfMs) => ({ ...reported(frame), selfMs });
  // busyMs: what the timeline charges each scope from the first sample to the profile's end (1100…1800 µs).
  assert.deepStrictEqual(a.scopes, [
    { name: 'x', samples: 3, ms: 0.3, percent: 50, busyMs: 0.3, topFunctions: [top(fn('a'), 0.3)] },
    { name: 'y', samples: 2, ms: 0.2, percent: 33.33, busyMs: 0.15, topFunctions: [top(fn('b'), 0.1), top(native('(garbage collector)'), 0.1)] },
    { name: null, samples: 1, ms: 0.1, percent: 16.67, busyMs: 0.25, topFunctions: [top(fn('b'), 0.1)] },
  ]);

  // false: the loop idle (rloop's idle mark to the next callback). Its samples are no scope's and
  // no busy time: the row '(outside callbacks)', without busyMs; '(idle)' samples stay out.
  const outside = analyze(p, { scopeTimeline: [[1000, 'x'], [1250, false], [1500, 'y']] }).scopes;
  assert.deepStrictEqual(outside.map((s) => [s.name, s.samples, s.ms, s.busyMs]), [
    ['y', 3, 0.3, 0.3], ['x', 2, 0.2, 0.15], ['(outside callbacks)', 1, 0.1, undefined],
  ]);

  // V8 may emit a sample out of order: it still takes the scope in force at its own time.
  const late = { ...p, samples: p.samples.slice(0, 4), timeDeltas: [100, 100, -50, 150], endTime: 1400 };
  const names = analyze(late, { scopeTimeline: [[1000, 'x'], [1180, 'y']] }).scopes.map((s) => [s.name, s.samples]);
  assert.deepStrictEqual(names, [['x', 2], ['y', 1]], 'samples at 1100 and 1150 in x, 1200 in y, the idle one in none');
  assert.deepStrictEqual(analyze(p, { scopeTimeline: [] }).scopes.map((s) => [s.name, s.busyMs]), [[null, 0.7]], 'no transition: all unattributed');
  assert.deepStrictEqual(analyze(p).scopes, []);
  assert.deepStrictEqual(analyze(p, { scopeTimeline: [[1300, 'x']] }).scopes.map((s) => [s.name, s.samples, s.busyMs]), [['x', 4, 0.5], [null, 2, 0.2]], 'before the first transition: unattributed');
  assert.throws(() => analyze(p, { scopeTimeline: [[2, 'a'], [1, 'b']] }), /sorted/);
  assert.throws(() => analyze(p, { scopeTimeline: [[1, 7]] }), TypeError);
  assert.throws(() => analyze({ nodes: [] }), /needs a V8 CPU profile/);
  assert.throws(() => analyze(p, null), (e) => e instanceof TypeError && e.message === 'rloop: analyze() options must be an object, got null');
  assert.throws(() => analyze(p, { timeline: [] }), /unknown analyze\(\) option 'timeline'/);
  assert.deepEqual(analyze(p, { scopeTimeline: undefined }), analyze(p), 'undefined is the default: no timeline');
});

// The CI failure of stop 18: a starved sampler's gap after a scope's last sample ran on into the next
// scope's work, and the whole gap was charged to the scope that had ended (json: 127 ms of 100).
test('a long gap between samples that a scope transition crosses is charged MAX_GAP intervals, to the scope and the function alike', () => {
  const p = synthetic([native('(root)'), [fn('main'), [fn('a')]]], ['a', 'a', 'a', 'a', 'a', 'a']);
  // Samples at 1100, 1200, 1300, then (a 3 ms gap) 4300, 4400, 4500 µs, all the same work.
  p.timeDeltas[3] = 3000;
  p.endTime = 4600;
  const with_ = (timeline) => analyze(p, { scopeTimeline: timeline });
  const rows = (timeline) => with_(timeline).scopes.map((s) => [s.name, s.ms]);
  assert.deepStrictEqual(rows([[1000, 'x'], [2000, 'y']]), [['x', 0.4], ['y', 0.3]], 'x: two samples and MAX_GAP intervals, not 3.2 ms');
  assert.deepStrictEqual(rows([[1000, 'x'], [2000, 'y'], [3000, 'x']]), [['x', 0.7], ['y', 0]], 'x left and came back: still not charged the gap');
  assert.deepStrictEqual(rows([[1000, 'x']]), [['x', 3.5]], 'one scope across the gap, the same work: charged in full');
  // The function's self time is what its scopes add up to, and so is its long call's share.
  const a = with_([[1000, 'x'], [2000, 'y']]);
  assert.deepStrictEqual(a.heavyFunctions.find((f) => f.functionName === 'a').selfMs, 0.7);
  assert.deepStrictEqual(analyze(p).heavyFunctions.find((f) => f.functionName === 'a').selfMs, 3.5, 'without a timeline: the same work on both sides, charged in full');
  const long = analyze(p, { scopeTimeline: [[1000, 'x'], [2000, 'y']], lagThresholdMs: 0.5 }).longCalls.functions.find((f) => f.functionName === 'a');
  assert.deepStrictEqual([long.ms, long.percent <= 100], [0.7, true], 'a long call is charged its samples as the scopes are');
});

function addUp(ms) {
  let x = 0;
  for (const end = performance.now() + ms; performance.now() < end; ) for (let i = 0; i < 1e4; i++) x = (x + i) % 7919;
  return x;
}

function parseMany(ms, text) {
  for (const end = performance.now() + ms; performance.now() < end; ) JSON.parse(text);
}

test('a timeline built from performance.now() matches a real profile', async () => {
  const offset = profile.profileClockOffsetUs();
  const timeline = [];
  const enter = (name) => timeline.push([performance.now() * 1000 + offset, name]);
  const text = JSON.stringify(Array.from({ length: 5000 }, (_, i) => ({ i })));
  const p = await profile.start();
  enter('arithmetic');
  addUp(100);
  enter('json');
  parseMany(100, text);
  enter(null);
  const a = analyze(await p.stop(), { scopeTimeline: timeline });
  const scope = (name) => a.scopes.find((s) => s.name === name);
  const msOf = (name, fn) => scope(name).topFunctions.find((f) => f.functionName === fn)?.selfMs ?? 0;
  // The heaviest function but the collector: JSON.parse's garbage is collected in its scope, and
  // a collection waiting on a descheduled helper thread may outlast it.
  const heaviest = (name) => scope(name).topFunctions.find((f) => f.functionName !== '(garbage collector)').functionName;
  // A sample on the boundary may fall either side; a misaligned clock would move many.
  assert.strictEqual(heaviest('arithmetic'), 'addUp');
  assert.ok(msOf('arithmetic', 'JSON.parse') < 1, JSON.stringify(scope('arithmetic')));
  assert.strictEqual(heaviest('json'), 'JSON.parse');
  assert.ok(msOf('json', 'addUp') < 1, JSON.stringify(scope('json')));
  // Each is charged at most the time the timeline held it, 100 ms or more where the process lost
  // the CPU as the work ended (less where a starved sampler left gaps nobody can attribute).
  for (const [i, name] of [[0, 'arithmetic'], [1, 'json']]) {
    const heldMs = (timeline[i + 1][0] - timeline[i][0]) / 1000;
    assert.ok(scope(name).ms <= heldMs + 0.5, `${name}: ${scope(name).ms} ms, held ${heldMs} ms`);
  }
});

// A function whose single calls stall the loop, though it holds well under half of
// the busy time, is named with its location.
test('long-calls: a function blocking 120 ms every 500 ms is named, with its location', () => {
  const own = { functionName: 'run', url: require('node:url').pathToFileURL(path.join(__dirname, '..', '..', 'js', 'attribution', 'hooks.js')).href };
  const tree = [native('(root)'),
    [fn('listOnTimeout', 'node:internal/timers'), [own, [fn('rebuildIndex'), [fn('tokenize')]]]],
    [fn('handle'), [fn('render')]],
    [native('(garbage collector)')], [native('(idle)')]];
  const samples = [];
  for (let period = 0; period < 20; period++) {
    for (let i = 0; i < 120; i++) samples.push(i === 60 ? '(garbage collector)' : i % 3 === 2 ? 'tokenize' : 'rebuildIndex');
    samples.push('(idle)');
    for (let r = 0; r < 30; r++) samples.push('render', 'render', 'render', 'render', 'handle', 'handle', 'handle', '(idle)', '(idle)');
    while (samples.length % 500 !== 0) samples.push('(idle)');
  }
  const a = analyze(synthetic(tree, samples, { stepUs: 1000 }));
  assert.strictEqual(pattern(a, 'cpu-hog'), undefined, 'no function holds half the busy time');
  const p = pattern(a, 'long-calls');
  assert.ok(p, `long-calls among ${ids(a)}`);
  assert.deepStrictEqual(p.location, reported(fn('rebuildIndex')), 'the function whose single call lasted, not its short callee');
  assert.strictEqual(p.severity, 'warning');
  assert.match(p.message, /^20 single calls of rebuildIndex \(file:\/\/\/app\.js:10:5\) lasted 50 ms or more, the longest 120 ms: they blocked the loop for 36\.4 % of busy time, 2,400 ms$/);
  assert.deepStrictEqual(a.longCalls, {
    thresholdMs: 50,
    functions: [{ ...reported(fn('rebuildIndex')), calls: 20, longestMs: 120, ms: 2400, percent: 36.36 }],
  });
  // The request handler runs 7 ms at a time: under any threshold but the smallest.
  assert.deepStrictEqual(analyze(synthetic(tree, samples, { stepUs: 1000 }), { lagThresholdMs: 7 }).longCalls.functions.map((f) => [f.functionName, f.calls]),
    [['handle', 600], ['rebuildIndex', 20]]);
  assert.strictEqual(pattern(analyze(synthetic(tree, samples, { stepUs: 1000 }), { lagThresholdMs: 130 }), 'long-calls'), undefined);
  assert.throws(() => analyze(synthetic(tree, samples), { lagThresholdMs: 0 }), RangeError);
  // rloop's scope wrapper is no user frame: never blamed, never in a caller chain.
  assert.deepStrictEqual(a.callStacks.find((s) => s.functionName === 'tokenize').stacks[0].frames.map((f) => f.functionName),
    ['tokenize', 'rebuildIndex', 'listOnTimeout']);
  assert.ok(!a.heavyFunctions.some((f) => f.functionName === 'run' && f.category === 'user'));
});

// One basis for shares, busy time; numbers in messages formatted.
test('heavy functions carry their share of busy time, the basis of patterns and the flame graph', () => {
  const tree = [native('(root)'), [fn('main'), [fn('hot')], [{ functionName: 'JSON.parse', url: markers.JSON_MARKER_URL }]], [native('(idle)')]];
  const a = analyze(synthetic(tree, [...Array(1478).fill('JSON.parse'), ...Array(1000).fill('hot'), ...Array(2478).fill('(idle)')], { stepUs: 1000 }));
  const json = a.heavyFunctions.find((f) => f.functionName === 'JSON.parse');
  assert.strictEqual(json.busyPercent, 59.64);
  assert.strictEqual(json.selfPercent, 29.82, 'of the whole profile, as before');
  assert.strictEqual(pattern(a, 'json-heavy').percent, json.busyPercent);
  assert.match(pattern(a, 'json-heavy').message, /^JSON\.parse\/stringify took 59\.6 % of busy time, 1,478 ms,/);
});

test('long-calls on a real profile: V8 losing an inlined frame for a sample does not split a call', async () => {
  const { busy } = require('../fixtures/helpers');
  const p = await profile.start();
  for (let i = 0; i < 5; i++) {
    busy(100); // well over 50 ms: a sampler starved by a loaded machine sees a call start late
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const a = analyze(await p.stop());
  const [top] = a.longCalls.functions;
  assert.strictEqual(top?.functionName, 'busy', JSON.stringify(a.longCalls));
  assert.ok(top.calls >= 4, `${top.calls} of 5 calls seen whole`);
  assert.ok(top.longestMs >= 90, `${top.longestMs} ms`);
  assert.ok(top.percent <= 100);
  assert.strictEqual(pattern(a, 'cpu-hog')?.location.functionName ?? pattern(a, 'long-calls').location.functionName, 'busy');
});

/** What a mix of regex calls gives, through every method rloop marks and some it does not. */
function regexResults() {
  const g = /(b+)(c)?/g;
  const y = /a/y;
  class Counting extends RegExp {
    exec(s) {
      Counting.calls++;
      return super.exec(s);
    }
  }
  Counting.calls = 0;
  const out = [];
  const s = 'abbcabbbxbc';
  out.push(g.test(s), g.lastIndex, g.test(s), g.lastIndex, g.exec(s)?.index, g.lastIndex);
  out.push(y.test('aab'), y.lastIndex, y.test('aab'), y.lastIndex, y.test('aab'), y.lastIndex);
  out.push(s.replace(/b+/g, (m, at) => `<${m.length}@${at}>`), s.replace(/(b+)(c)/, '$2$1'), s.replaceAll(/b/g, '-'));
  out.push(s.split(/b+/), s.split(/(b)/, 3), s.match(/b+/g), s.match(/(b+)(c)/).slice(), s.search(/x/), [...s.matchAll(/b(c)?/g)].map((m) => [m[0], m.index]));
  out.push('abc'.replace(new Counting('b', 'g'), 'x'), Counting.calls, new Counting('c').test('abc'), Counting.calls);
  // A generic receiver: the spec's methods work on any object with exec.
  const generic = { lastIndex: 0, flags: '', exec: (t) => (t === 'q' ? Object.assign(['q'], { index: 0 }) : null) };
  out.push(RegExp.prototype.test.call(generic, 'q'), RegExp.prototype[Symbol.replace].call(generic, 'q', 'r'));
  for (const receiver of [undefined, 1, 'x']) {
    try {
      RegExp.prototype.test.call(receiver, 'a');
    } catch (e) {
      out.push(`${e.constructor.name}: ${e.message}`);
    }
  }
  const methods = ['test', Symbol.match, Symbol.matchAll, Symbol.replace, Symbol.search, Symbol.split];
  out.push(methods.map((m) => [RegExp.prototype[m].name, RegExp.prototype[m].length]));
  return out;
}

// Regex time V8 spends in its interpreter, or in code compiled before the profile
// started, has no frame of its own; rloop's markers give it one (js/capture/markers.js).
test('while a profile runs, RegExp methods carry a frame, invisibly; exec and the originals are left as they were', async () => {
  const P = RegExp.prototype;
  const before = Object.getOwnPropertyDescriptors(P);
  const expected = regexResults();
  const p = await profile.start();
  const during = Object.getOwnPropertyDescriptors(P);
  let results;
  try {
    results = regexResults();
  } finally {
    p.stopSync();
  }
  assert.notStrictEqual(during.test.value, before.test.value, 'test is marked');
  assert.notStrictEqual(during[Symbol.replace].value, before[Symbol.replace].value, 'Symbol.replace is marked');
  assert.strictEqual(during.exec.value, before.exec.value, "exec is never replaced: V8's fast paths need the original");
  assert.deepStrictEqual(results, expected);
  assert.deepStrictEqual(Object.getOwnPropertyDescriptors(P), before, 'every property restored exactly');
  assert.ok(require('../../js/own').isOwn({ url: markers.REGEX_MARKER_URL }), 'hidden from the app\'s stacks');

  // A method the app replaced is neither marked nor removed.
  const mine = function test(s) { return before.test.value.call(this, s); };
  P.test = mine;
  try {
    const q = await profile.start();
    assert.strictEqual(P.test, mine);
    q.stopSync();
    assert.strictEqual(P.test, mine);
  } finally {
    P.test = before.test.value;
  }
});

test('regex run interpreted or compiled before the profile is charged to the regex, not its caller', async () => {
  const subject = (n) => `${'a'.repeat(n)}!`;
  const evil = (s) => /^(a|a)+$/.test(s); // compiled here, before the profile
  let n = 14;
  for (let i = 0; i < 3; i++) evil(subject(n));
  while (timed(() => evil(subject(n))) < 20) n++;
  const p = await profile.start();
  const end = performance.now() + 800;
  function checkInput() {
    return evil(subject(n));
  }
  while (performance.now() < end) checkInput();
  const a = analyze(await p.stop());
  const re = pattern(a, 'regex-heavy');
  assert.ok(re, `regex-heavy among ${ids(a)}: ${JSON.stringify(a.categories)}`);
  assert.strictEqual(re.location.functionName, 'evil', re.message);
  assert.ok(a.categories.regex > 0.7 * busyMs(a), `regex ${a.categories.regex} of ${busyMs(a)} ms busy`);
  const callerMs = a.heavyFunctions.filter((f) => ['evil', 'checkInput'].includes(f.functionName)).reduce((sum, f) => sum + f.selfMs, 0);
  assert.ok(callerMs < 0.1 * busyMs(a), `the callers' own time ${callerMs} ms`);
});

function timed(fn) {
  const t = performance.now();
  fn();
  return performance.now() - t;
}

// The profile's samples inside a stall, in its scope, are its stack (js/stalls/from-profile.js).
test("a stall's stack from the profile: samples inside its span and in its scope, the heaviest user frame's", () => {
  const { study, frameOf } = require('../../js/analyze');
  const { profileStalls } = require('../../js/stalls/from-profile');
  const tree = [native('(root)'), [fn('blocker'), [{ functionName: 'JSON.parse', url: markers.JSON_MARKER_URL }]], [fn('after')], [fn('other')],
    [native('(garbage collector)')], [native('(idle)')]];
  // One sample a ms from t = 2 ms: 10 of `other` in scope b; in scope a 100 of JSON.parse, GC
  // amid them (GC has no stack: it counts for what allocated), then 20 of `after`.
  const parse = [...Array(20).fill('JSON.parse'), ...Array(60).fill('(garbage collector)'), ...Array(20).fill('JSON.parse')];
  const p = synthetic(tree, [...Array(10).fill('other'), ...parse, ...Array(20).fill('after'), ...Array(20).fill('(idle)')], { startTime: 1000, stepUs: 1000 });
  const scopeTimeline = [[0, 'b'], [11500, 'a'], [131500, false]];
  const { measured } = study(p, { scopeTimeline });
  const stall = (at, lagMs, scope, more) => ({ at, lagMs, scope, key: null, stack: null, stackFrom: null, native: null, ...more });
  const sampled = [{ functionName: 'after', url: 'file:///app.js', line: 1, column: 1 }];
  const events = [
    stall(2, 130, 'a', { stackSeen: sampled, stackNote: 'late' }), // JSON.parse's 100 ms, then `after`'s 20 ms
    stall(112, 20, 'a', { stack: sampled, stackFrom: 'sampler' }), // `after` alone
    stall(2, 10, 'c'), // no sample of its scope
    stall(-500, 100, 'a'), // before the profile
    stall(42, 10, 'a'), // GC alone: nothing allocated in the span before it
    stall(2, 2, 'b', { stack: sampled, stackFrom: 'sampler' }), // 2 samples: too few to say
  ];
  const o = { originMs: 0, offsetUs: 0, scopeTimeline, frameOf };
  const out = events.map((e) => profileStalls([e], p, measured, o)[0]); // they overlap; a thread's stalls never do
  assert.deepStrictEqual(profileStalls([events[1], events[3]], p, measured, o), [out[1], out[3]], 'several in one pass');
  assert.deepStrictEqual(out[0], { ...events[0], stack: [reported(fn('blocker'))], stackFrom: 'profile', native: 'JSON', stackBefore: null },
    'the marker hidden, its work named; what the sampler saw kept, with why; nothing ran in the stall before the blocker');
  assert.deepStrictEqual([out[1].stack, out[1].stackFrom, out[1].native], [[reported(fn('after'))], 'profile', null]);
  assert.deepStrictEqual([out[4].stack, out[4].native], [[reported(native('(garbage collector)'))], 'GC']);
  assert.deepStrictEqual([out[2], out[3], out[5]], [events[2], events[3], events[5]], 'left as the sampler gave them');
  assert.strictEqual(profileStalls([], p, measured, o).length, 0);
});

// What ran just before the blocker, in the same stall and scope, from the profile's samples in order.
test("a stall's stackBefore: the code sampled last before the blocker, neither its caller nor under it, nor rloop's", () => {
  const { study, frameOf } = require('../../js/analyze');
  const { profileStalls } = require('../../js/stalls/from-profile');
  const tree = [native('(root)'),
    [fn('onTimeout'),
      [fn('handler'),
        [fn('prepare'), [fn('helper')], [{ functionName: 'JSON.parse', url: markers.JSON_MARKER_URL, key: 'prepare JSON.parse' }]],
        [fn('scope', require('node:url').pathToFileURL(path.join(__dirname, '..', '..', 'js', 'index.js')).href), [fn('now', 'node:internal/perf/utils')]],
        [fn('blocker'), [{ functionName: 'JSON.parse', url: markers.JSON_MARKER_URL }], [fn('inner')]]],
      [fn('after')]],
    [native('(idle)')]];
  const stallOf = (names) => {
    const p = synthetic(tree, names, { startTime: 0, stepUs: 1000 });
    const scopeTimeline = [[0, 'a']];
    const { measured } = study(p, { scopeTimeline });
    const o = { originMs: 0, offsetUs: 0, scopeTimeline, frameOf };
    return profileStalls([{ at: 0, lagMs: names.length, scope: 'a', key: null, stack: null, stackFrom: null, native: null }], p, measured, o)[0];
  };
  const names = (e) => e.stackBefore?.map((f) => f.functionName) ?? null;
  // prepare (and a helper under it) ran, then rloop's wrapper (and what it called) and the handler itself: the lead-in is prepare's.
  const led = stallOf(['onTimeout', 'handler', 'helper', 'prepare', 'scope', 'now', 'handler', 'inner', ...Array(30).fill('JSON.parse'), 'after']);
  assert.deepStrictEqual(led.stack.map((f) => f.functionName), ['blocker', 'handler', 'onTimeout']);
  assert.deepStrictEqual(names(led), ['prepare', 'handler', 'onTimeout'], 'how the loop reached the blocker; what ran after it is not');
  assert.deepStrictEqual(led.stackBefore[0], reported(fn('prepare')));
  // The app's own JSON.parse, under rloop's marker, is the app's work: named by its caller.
  assert.deepStrictEqual(names(stallOf(['handler', 'prepare JSON.parse', 'now', ...Array(30).fill('JSON.parse')])), ['prepare', 'handler', 'onTimeout']);
  // Only its callers ran before it: their frames are on its stack already.
  assert.strictEqual(stallOf(['onTimeout', 'handler', ...Array(30).fill('JSON.parse'), 'after', 'prepare']).stackBefore, null);
  assert.strictEqual(stallOf([...Array(30).fill('JSON.parse'), 'after']).stackBefore, null, 'the stall began in the blocker');
});
