'use strict';
// Slow async I/O against real servers on 127.0.0.1 that answer or accept late: each detection
// field by field, redaction, attribution, aggregates, errors, and a clean stop().

const test = require('node:test');
const assert = require('node:assert/strict');
const dc = require('node:diagnostics_channel');
const dns = require('node:dns');
const fs = require('node:fs');
const http = require('node:http');
const https = require('node:https');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const util = require('node:util');
const { execFile, spawn } = require('node:child_process');
const { once } = require('node:events');
const { pathToFileURL } = require('node:url');
const rloop = require('../..');
const io = require('../../js/io');
const { epochMs } = require('../../js/clock');
const { redactUrl, redactLink, redactText, target, requestPath } = require('../../js/redact');

const LATE_MS = 600; // how late the servers answer or accept
const THRESHOLD_MS = 500;
const SECRETS = ['alice', 's3cr3t', 'tok-9f2', 'token', 'frag'];
const SECRET_PATH = '/slow/path?token=tok-9f2#frag';
const run = util.promisify(execFile); // never a sync child: a blocked loop is what rloop watches for
const CHANNELS = ['http.client.request.created', 'http.client.request.start', 'http.client.response.finish',
  'http.client.request.error', 'undici:request:create', 'undici:request:headers', 'undici:request:error',
  'net.client.socket', 'http.server.request.start', 'http.server.response.finish'];

let monitor;
test.before(() => {
  monitor = rloop.start({ io: false, lag: false }); // attribution only: the trackers here are the tests'
});
test.after(() => monitor.stop());

/**
 * A tracker stopped when test `t` ends; the slow events of operations that ended collect in
 * `events`, those told while still in flight in `pending` (see the capture test of I/O that
 * never returns). An end marked `reportedPending` must have been told pending (the same
 * operation: type, method, start); the mark is checked here and left out of `events`.
 */
function trackIn(t, thresholdMs = THRESHOLD_MS) {
  const events = [];
  const pending = [];
  const onSlow = (e) => {
    if (e.state === 'pending') return pending.push(e);
    const { reportedPending, ...ended } = e;
    const told = pending.some((p) => p.type === e.type && p.method === e.method && p.at === e.at); // a connect's target is known at its end
    assert.strictEqual(reportedPending === true, told, `reportedPending ${reportedPending} on ${JSON.stringify(e)}; pending told: ${JSON.stringify(pending)}`);
    events.push(ended);
  };
  const tracker = io.track({ thresholdMs, onSlow, context: () => rloop.current() });
  t.after(() => tracker.stop());
  return { tracker, events, pending };
}

/** A server on 127.0.0.1 that answers after `delayMs` (503 under /fail), closed when test `t` ends. */
async function lateServer(t, create, delayMs = LATE_MS) {
  const server = create((req, res) => setTimeout(() => {
    res.statusCode = req.url.startsWith('/fail') ? 503 : 200;
    res.end('late');
  }, delayMs));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    server.closeAllConnections();
    server.close();
  });
  return server;
}

/** A port on 127.0.0.1 that nothing listens on. */
async function closedPort() {
  const server = net.createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  server.close();
  await once(server, 'close');
  return port;
}

/** Resolves with the response's status once its body has been read. */
function get(mod, url, options = {}) {
  return new Promise((resolve, reject) => {
    const req = mod.get(url, options, (res) => res.resume().on('end', () => resolve(res.statusCode))); // call:get
    req.on('error', reject);
  });
}

/** Resolves once `condition()` holds; fails after a second. */
async function until(condition) {
  for (const end = Date.now() + 1000; !condition();) {
    assert.ok(Date.now() < end, `still not ${condition}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Runs `fn` in scope 'caller' with key 'k1'. */
function asCaller(fn) {
  return rloop.scope('caller', fn, { key: 'k1' });
}

/** The 1-based number of the line of `file` (this one by default) marked `// call:<mark>`. */
function lineOf(mark, file = __filename) {
  return fs.readFileSync(file, 'utf8').split('\n').findIndex((l) => l.includes(`// call:${mark}`)) + 1;
}

/** One slow event checked field by field; `caller` is the marked line its first frame must be. */
function assertEvent(event, expected, { since, until = epochMs(), caller, file = __filename }) {
  const { durationMs, at, stack, stretchMs, ...rest } = event;
  // No OpenTelemetry here: no span (test/logs/otel.test.js has one).
  assert.deepEqual(rest, { scope: 'caller', key: 'k1', trace: null, ...expected });
  const optional = ['status', 'error'].filter((k) => k in expected);
  const read = event.type !== 'http-in' && event.state !== 'pending'; // an outgoing end the loop read
  const order = ['type', 'method', 'target', ...optional, 'durationMs', 'at', 'stack', 'scope', 'key', 'trace', ...(read ? ['stretchMs'] : [])];
  assert.deepEqual(Object.keys(event), order, 'field order');
  assert.ok(durationMs >= THRESHOLD_MS && durationMs < 5000, `durationMs ${durationMs}`);
  if (read) assert.ok(stretchMs >= 0 && stretchMs < durationMs, `stretchMs ${stretchMs}`);
  // On rloop's time base (js/clock.js): Date.now() moves against it when the wall clock steps.
  assert.ok(at >= since - 5 && at + durationMs <= until + 5, `at ${at}: it ran between ${since} and ${until}`);
  const json = JSON.stringify(event);
  for (const secret of SECRETS) assert.ok(!json.includes(secret), `'${secret}' leaked: ${json}`);
  if (caller === undefined) return assert.deepEqual(stack, []);
  assert.ok(stack.length > 0 && stack.length <= 10, `${stack.length} frames`);
  assert.deepEqual(stack[0], { ...stack[0], url: pathToFileURL(file).href, line: lineOf(caller, file) });
  assert.ok(stack[0].column > 0 && typeof stack[0].functionName === 'string');
  const app = stack.map((f) => f.url.startsWith('file:') && !f.url.includes('/js/')); // not Node's, not rloop's
  assert.ok(!app.slice(app.indexOf(false)).includes(true), 'the app\'s frames come first');
}

function ofType(aggregates, type) {
  return aggregates.find((a) => a.type === type);
}

test('io.track() validates ioThreshold', () => {
  const cases = [['500', TypeError], [NaN, TypeError], [null, TypeError], [-1, RangeError], [Infinity, RangeError]];
  for (const [thresholdMs, type] of cases) {
    const named = (e) => e instanceof type && /'ioThreshold'/.test(e.message);
    assert.throws(() => io.track({ thresholdMs }), named, String(thresholdMs));
  }
  assert.throws(() => io.track({ onSlow: 1 }), TypeError);
  assert.throws(() => io.track({ context: 'scope' }), TypeError);
});

test('redaction keeps host, port and path: no credentials, query string, fragment or path parameters', () => {
  assert.equal(redactUrl('https://alice:s3cr3t@example.com:8443/a/b?token=tok-9f2#frag'), 'example.com:8443/a/b');
  assert.equal(redactUrl('http://alice@[::1]:80?x=/y'), '[::1]:80');
  assert.equal(redactUrl('http://a:p@ss@host/p@th;x?q'), 'host/p@th');
  assert.equal(redactUrl('http://host/a;jsessionid=s3cr3t/b;v=1'), 'host/a/b');
  assert.equal(redactUrl('http://h/?next=http://alice:s3cr3t@evil/p'), 'h/', 'a URL in the query is the query');
  assert.equal(requestPath('/a;jsessionid=s3cr3t/b'), '/a/b');
  // Frame URLs keep their scheme; text keeps all but each URL's secrets.
  assert.equal(redactLink('file:///app/x.mjs?v=s3cr3t#frag'), 'file:///app/x.mjs');
  assert.equal(redactLink('http://alice:s3cr3t@cdn:8080/m.js?token=tok-9f2'), 'http://cdn:8080/m.js');
  assert.equal(redactLink('node:internal/http'), 'node:internal/http');
  assert.equal(redactLink('/app/a.js'), '/app/a.js');
  assert.equal(redactText('proxy http://alice:s3cr3t@h/p?token=tok-9f2 refused, then "https://h2/q#frag"'), 'proxy http://h/p refused, then "https://h2/q"');
  assert.equal(redactText('Cannot GET /a;jsessionid=s3cr3t/b?token=tok-9f2'), 'Cannot GET /a/b');
  assert.equal(redactText('connect ECONNREFUSED 127.0.0.1:80, a/b?c'), 'connect ECONNREFUSED 127.0.0.1:80, a/b?c');
  assert.equal(redactUrl('host:81#f'), 'host:81');
  assert.equal(target('alice:s3cr3t@proxy:3128', '/x?y#z'), 'proxy:3128/x');
  assert.equal(target('proxy:3128', 'http://alice:s3cr3t@dest/x?token=1'), 'dest/x', 'absolute form: the destination');
  assert.equal(requestPath('/a/b?c=d'), '/a/b');
  assert.equal(requestPath('http://u:p@h/a?b'), 'h/a');
  assert.equal(requestPath('*'), '*');
});

test('a slow http request: client and server events, redacted, attributed, the caller first', async (t) => {
  const listening = await rloop.scope('server', () => lateServer(t, http.createServer));
  const { port } = listening.address();
  const { tracker, events } = trackIn(t);
  const since = epochMs();
  const status = await asCaller(() => get(http, `http://alice:s3cr3t@127.0.0.1:${port}${SECRET_PATH}`));
  assert.equal(status, 200);

  const target = `127.0.0.1:${port}/slow/path`;
  assert.deepEqual(events.map((e) => e.type).sort(), ['http', 'http-in']);
  const client = { type: 'http', method: 'GET', target, status: 200 };
  assertEvent(events.find((e) => e.type === 'http'), client, { since, caller: 'get' });
  // The server's context when the request came: the scope it was opened in. No stack: Node called.
  const server = { type: 'http-in', method: 'GET', target: '/slow/path', status: 200, scope: 'server', key: null };
  assertEvent(events.find((e) => e.type === 'http-in'), server, { since });

  const aggregates = tracker.aggregates();
  assert.deepEqual(aggregates.map((a) => a.type).sort(), ['http', 'http-in', 'tcp']);
  const { count, totalMs, avgMs, maxMs, errors, targets } = ofType(aggregates, 'http');
  assert.deepEqual([count, errors], [1, 0]);
  assert.ok(totalMs >= LATE_MS && avgMs === totalMs && maxMs === totalMs, `${totalMs} ${avgMs} ${maxMs}`);
  assert.deepEqual(targets, [{ target, count, totalMs, avgMs, maxMs, errors }]);
  assert.equal(tracker.errors, 0);
});

test('a slow https request to a self-signed server', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-io-'));
  t.after(() => fs.rmSync(dir, { recursive: true }));
  const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  await run('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1',
    '-keyout', key, '-out', cert]);
  const tls = { key: fs.readFileSync(key), cert: fs.readFileSync(cert) };
  const server = await lateServer(t, (handler) => https.createServer(tls, handler));
  const { port } = server.address();
  const { events } = trackIn(t);
  const since = epochMs();
  const url = `https://alice:s3cr3t@127.0.0.1:${port}${SECRET_PATH}`;
  assert.equal(await asCaller(() => get(https, url, { rejectUnauthorized: false })), 200);

  const expected = { type: 'https', method: 'GET', target: `127.0.0.1:${port}/slow/path`, status: 200 };
  assertEvent(events.find((e) => e.type === 'https'), expected, { since, caller: 'get' });
});

test('a slow fetch through the global fetch', async (t) => {
  const server = await lateServer(t, http.createServer);
  const { port } = server.address();
  const { tracker, events } = trackIn(t);
  const since = epochMs();
  const body = await asCaller(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${SECRET_PATH}`, { method: 'POST', body: 'x' }); // call:fetch
    return res.text();
  });
  assert.equal(body, 'late');

  const expected = { type: 'fetch', method: 'POST', target: `127.0.0.1:${port}/slow/path`, status: 200 };
  assertEvent(events.find((e) => e.type === 'fetch'), expected, { since, caller: 'fetch' });
  assert.equal(ofType(tracker.aggregates(), 'fetch').count, 1);
});

test('a slow TCP connect to a listener whose accept queue is full', async (t) => {
  // A listener with backlog 1 queues two connections; the process then blocks for LATE_MS
  // without accepting, so a third client's SYN is dropped and retried after about 1 s.
  const script = `const server = require('node:net').createServer((s) => s.destroy());
    server.listen({ host: '127.0.0.1', port: 0, backlog: 1 }, () => {
      process.stdout.write(server.address().port + '\\n');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ${LATE_MS});
    });`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  t.after(() => child.kill());
  const port = Number((await once(child.stdout, 'data'))[0]);
  const fillers = [1, 2].map(() => net.connect(port, '127.0.0.1'));
  t.after(() => fillers.forEach((s) => s.destroy()));
  await Promise.all(fillers.map((s) => once(s, 'connect')));

  const { events } = trackIn(t);
  const since = epochMs();
  const socket = asCaller(() => net.connect(port, '127.0.0.1')); // call:tcp
  t.after(() => socket.destroy());
  socket.on('error', () => {}); // the server closes what it accepts
  await once(socket, 'connect');

  const expected = { type: 'tcp', method: 'connect', target: `127.0.0.1:${port}` };
  assertEvent(events.find((e) => e.type === 'tcp'), expected, { since, caller: 'tcp' });
});

test('slow dns lookups through the real resolver, whose resolv.conf names a late DNS server', async (t) => {
  // A child in its own mount and network namespaces: /etc files bound over, only its own loopback.
  const bind = 'mount --bind "$1" /etc/resolv.conf && mount --bind "$2" /etc/nsswitch.conf';
  const sandbox = ['--mount', '--net', 'sh', '-c', `ip link set lo up && ${bind} && shift 2 && exec "$@"`, 'sh'];
  try {
    await run('unshare', [...sandbox, '/dev/null', '/dev/null', 'true']);
  } catch {
    return t.skip('needs unshare --mount --net, ip and mount (root)');
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-dns-'));
  t.after(() => fs.rmSync(dir, { recursive: true }));
  fs.writeFileSync(path.join(dir, 'resolv.conf'), 'nameserver 127.0.0.1\noptions timeout:3 attempts:1\n');
  fs.writeFileSync(path.join(dir, 'nsswitch.conf'), 'hosts: files dns\n');
  const fixture = path.join(__dirname, '..', 'fixtures', 'io-dns.js');
  const etc = [path.join(dir, 'resolv.conf'), path.join(dir, 'nsswitch.conf')];
  const { stdout } = await run('unshare', [...sandbox, ...etc, process.execPath, fixture, String(LATE_MS)]);
  const { results, events, aggregates, errors, since, until } = JSON.parse(stdout);

  assert.deepEqual(results, ['127.0.0.1', '127.0.0.1', 'ENOTFOUND']);
  assert.equal(events.length, 3);
  const within = { since, until, file: fixture }; // the child's own clock
  const slow = { type: 'dns', method: 'lookup', target: 'slow.test' };
  const calledAt = (mark) => events.find((e) => !e.error && e.stack[0].line === lineOf(mark, fixture));
  assertEvent(calledAt('dns-callback'), slow, { ...within, caller: 'dns-callback' });
  assertEvent(calledAt('dns-promise'), slow, { ...within, caller: 'dns-promise' });
  const missing = { ...slow, target: 'missing.test', error: 'ENOTFOUND' };
  assertEvent(events.find((e) => e.error), missing, { ...within, caller: 'dns-callback' });
  const { count, errors: failed, targets } = ofType(aggregates, 'dns');
  assert.deepEqual([count, failed], [3, 1]);
  const perTarget = targets.map((x) => [x.target, x.count, x.errors]).sort();
  assert.deepEqual(perTarget, [['missing.test', 1, 1], ['slow.test', 2, 0]]);
  assert.equal(errors, 0);
});

test('fast requests are counted but not reported; a 5xx answer counts as an error', async (t) => {
  const server = await lateServer(t, http.createServer, 0);
  const { tracker, events } = trackIn(t);
  assert.equal(await get(http, `http://127.0.0.1:${server.address().port}/fast`), 200);
  assert.equal(await get(http, `http://127.0.0.1:${server.address().port}/fail`), 503);
  assert.deepEqual(events, []);
  for (const type of ['http', 'http-in']) {
    const { count, errors, targets, maxMs, avgMs, totalMs } = ofType(tracker.aggregates(), type);
    assert.deepEqual([count, errors, targets.length], [2, 1, 2], type);
    assert.ok(maxMs < THRESHOLD_MS && Math.abs(avgMs - totalMs / 2) < 0.002, `${type}: ${maxMs} ${avgMs} ${totalMs}`);
  }
});

test('connection refused fills the error field of http, fetch and tcp events', async (t) => {
  const port = await closedPort();
  const { tracker, events } = trackIn(t, 0);
  const url = `http://127.0.0.1:${port}/x?token=tok-9f2`;
  await assert.rejects(asCaller(() => get(http, url)), { code: 'ECONNREFUSED' });
  await assert.rejects(fetch(`http://127.0.0.1:${port}/y`), (e) => e.cause.code === 'ECONNREFUSED');

  await until(() => events.length === 4); // a socket's 'close' comes a loop phase after its error
  const summary = events.map((e) => [e.type, e.method, e.target, e.error, e.status]).sort();
  const refused = (type, method, where) => [type, method, `127.0.0.1:${port}${where}`, 'ECONNREFUSED', undefined];
  const tcp = refused('tcp', 'connect', '');
  assert.deepEqual(summary, [refused('fetch', 'GET', '/y'), refused('http', 'GET', '/x'), tcp, tcp]);
  assert.equal(events.find((e) => e.type === 'http').scope, 'caller');
  const errors = Object.fromEntries(tracker.aggregates().map((a) => [a.type, a.errors]));
  assert.deepEqual(errors, { http: 1, fetch: 1, tcp: 2 });
});

// Node's own test-http-connect counts a CONNECT socket's listeners once it is handed to the app.
test("a connected socket's listeners are the app's alone: the connect's timing leaves none behind", async (t) => {
  const server = net.createServer((s) => s.end()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const counts = async () => {
    const socket = net.connect(server.address().port, '127.0.0.1');
    await once(socket, 'connect');
    const n = ['connect', 'close', 'error', 'end'].map((e) => socket.listenerCount(e));
    socket.destroy();
    return n;
  };
  const without = await counts();
  const { events } = trackIn(t, 0);
  assert.deepEqual(await counts(), without);
  await until(() => events.length === 1);
  assert.equal(events[0].type, 'tcp', 'and the connect was timed');
});

test('rloop loads neither http nor https: an app that loads http after start has its requests timed, the caller first', async (t) => {
  // Before Node 22.12 rloop wrapped http.request by loading http and https at start: Node's own
  // test-http-parser-lazy-loaded, which swaps a binding before http loads, then aborted.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-io-lazy-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const app = path.join(dir, 'app.js');
  fs.writeFileSync(app, `
const loaded = () => process.moduleLoadList.filter((m) => /^NativeModule (https?|tls)$/.test(m));
const events = [];
require(${JSON.stringify(path.join(__dirname, '..', '..'))}).start({ ioThresholdMs: 0 }).on('slowIO', (e) => events.push(e));
const atStart = loaded();
const http = require('node:http');
const server = http.createServer((req, res) => res.end('ok')).listen(0, '127.0.0.1', async () => {
  const url = \`http://127.0.0.1:\${server.address().port}/x\`;
  for (let i = 0; i < 2; i++) await new Promise((resolve) => http.get(url, (res) => res.resume().on('end', resolve))); // call:get
  setTimeout(() => {
    console.log(JSON.stringify({ atStart, after: loaded(), lines: events.filter((e) => e.type === 'http' && e.state !== 'pending').map((e) => e.stack.find((f) => f.url.endsWith('app.js'))?.line ?? null) }));
    process.exit(0);
  }, 100);
});
`);
  const { stdout } = await run(process.execPath, [app]);
  const out = JSON.parse(stdout);
  assert.deepEqual(out.atStart, []);
  assert.deepEqual(out.after, ['NativeModule http'], 'https and tls stay unloaded');
  const caller = lineOf('get', app);
  const [major, minor] = process.versions.node.split('.').map(Number);
  const created = major > 23 || (major === 23 && minor >= 2) || (major === 22 && minor >= 12);
  // Before 22.12 the first request is timed from 'http.client.request.start', a tick later, with no caller.
  assert.deepEqual(out.lines, [created ? caller : null, caller]);
});

test('stop() unsubscribes, restores dns (and http on old Node) exactly, and is idempotent', async (t) => {
  const patchable = [[dns, 'lookup'], [dns.promises, 'lookup'], [http, 'request'], [http, 'get'], [https, 'request'],
    [https, 'get']];
  const originals = patchable.map(([obj, key]) => [obj, key, obj[key]]);
  const server = await lateServer(t, http.createServer);
  const { tracker, events } = trackIn(t);
  assert.notEqual(dns.lookup, originals[0][2]);
  assert.notEqual(dns.promises.lookup, originals[1][2]);
  assert.equal(dns.lookup.name, 'lookup');
  assert.equal(dns.lookup.length, originals[0][2].length);
  const promised = await util.promisify(dns.lookup)('127.0.0.1');
  assert.deepEqual(promised, { address: '127.0.0.1', family: 4 }, 'util.promisify still sees dns.lookup\'s own shape');
  assert.equal((await import('node:dns')).lookup, dns.lookup, 'ESM named imports see the wrapper');

  tracker.stop();
  tracker.stop();
  for (const [obj, key, original] of originals) assert.equal(obj[key], original, key);
  assert.equal((await import('node:dns')).lookup, originals[0][2]);
  for (const name of CHANNELS) assert.equal(dc.hasSubscribers(name), false, name);
  const before = tracker.aggregates();
  await get(http, `http://127.0.0.1:${server.address().port}/after-stop`);
  await new Promise((resolve) => dns.lookup('127.0.0.1', resolve));
  assert.deepEqual(events, []);
  assert.deepEqual(tracker.aggregates(), before);
});

test('two trackers stopped in the order they started restore dns exactly', (t) => {
  const original = dns.lookup;
  const first = trackIn(t).tracker;
  const second = trackIn(t).tracker;
  first.stop();
  assert.notEqual(dns.lookup, original, 'the second still tracks');
  second.stop();
  assert.equal(dns.lookup, original);
});

test('stop() leaves alone a wrapper laid over its own, which then passes calls through', async (t) => {
  const original = dns.lookup;
  const { tracker } = trackIn(t, 0);
  const ours = dns.lookup;
  const theirs = (...args) => ours(...args);
  dns.lookup = theirs;
  t.after(() => {
    dns.lookup = original;
  });
  tracker.stop();
  assert.equal(dns.lookup, theirs);
  await new Promise((resolve) => dns.lookup('127.0.0.1', resolve));
  assert.equal(tracker.aggregates().length, 0);
});

test('an exception in onSlow or context() is swallowed and counted, never thrown into the app', async (t) => {
  const server = await lateServer(t, http.createServer, 0);
  const url = `http://127.0.0.1:${server.address().port}/`;
  const throwing = io.track({ thresholdMs: 0, onSlow: () => { throw new Error('onSlow'); } });
  t.after(() => throwing.stop());
  assert.equal(await get(http, url), 200);
  await new Promise((resolve) => setImmediate(resolve)); // what a channel rethrows would surface by now
  assert.ok(throwing.errors >= 2, `errors ${throwing.errors}`); // at least the client's and the server's events
  throwing.stop();

  const noContext = io.track({ context: () => { throw new Error('context'); } });
  t.after(() => noContext.stop());
  assert.equal(await get(http, url), 200);
  assert.ok(noContext.errors >= 2, `errors ${noContext.errors}`);
});

test('aggregates keep at most 1000 targets per type and fold the rest into (other)', async (t) => {
  const server = await lateServer(t, http.createServer, 0);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  t.after(() => agent.destroy());
  const { tracker } = trackIn(t);
  const base = `http://127.0.0.1:${server.address().port}`;
  await Promise.all(Array.from({ length: 1005 }, (_, i) => get(http, `${base}/item/${i}?q=${i}`, { agent })));

  const incoming = ofType(tracker.aggregates(), 'http-in');
  assert.equal(incoming.count, 1005);
  assert.equal(incoming.targets.length, 1001);
  const other = incoming.targets.find((x) => x.target === '(other)');
  assert.equal(other.count, 5);
  assert.equal(incoming.targets.filter((x) => x.target.startsWith('/item/') && !x.target.includes('?')).length, 1000);
  assert.equal(ofType(tracker.aggregates(), 'http').targets.length, 1001);
});

test('a long path is clipped to 256 characters, in events and aggregates alike', async (t) => {
  const server = await lateServer(t, http.createServer, 0);
  const { tracker, events } = trackIn(t, 0);
  const longPath = `/${'x'.repeat(2000)}`;
  await get(http, `http://127.0.0.1:${server.address().port}${longPath}`);
  const incoming = events.find((e) => e.type === 'http-in');
  assert.equal(incoming.target, longPath.slice(0, 256));
  assert.deepEqual(ofType(tracker.aggregates(), 'http-in').targets.map((x) => x.target), [incoming.target]);
});
