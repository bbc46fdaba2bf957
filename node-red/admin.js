'use strict';
// Admin HTTP endpoints, under Node-RED's admin root and its authentication:
//   GET  /rloop/elu      the live window and the last one (flows.read)
//   GET  /rloop/history  the windows kept, oldest first (flows.read)
//   POST /rloop/state    { enabled }: switches attribution on or off (flows.write)
//   POST /rloop/capture  { durationMs, format: 'html' | 'json', profile }: runs a capture (with a
//                        CPU profile if `profile`, default the setting) and answers its report as
//                        an HTML page or JSON (flows.write)

const rloop = require('..');

const MAX_CAPTURE_MS = 5 * 60 * 1000;

function routes(RED, plugin) {
  const read = RED.auth.needsPermission('flows.read');
  const write = RED.auth.needsPermission('flows.write');
  const app = RED.httpAdmin;

  // rloop's own routes are no I/O of the app's: a capture's request would be listed as pending in
  // its own report (js/io/index.js reads this mark).
  app.use('/rloop', (req, res, next) => {
    res[Symbol.for('rloop.own')] = true;
    next();
  });

  app.get('/rloop/elu', read, (req, res) => res.json(plugin.elu()));
  app.get('/rloop/history', read, (req, res) => res.json(plugin.history()));

  app.post('/rloop/state', write, (req, res) => {
    const { enabled } = req.body ?? {};
    if (typeof enabled !== 'boolean') return res.status(400).json({ error: 'body must be { "enabled": true | false }' });
    try {
      if (enabled) plugin.enable();
      else plugin.disable();
    } catch (e) {
      return res.status(500).json({ error: e.message });
    }
    res.json(plugin.state());
  });

  app.post('/rloop/capture', write, (req, res) => {
    const body = req.body ?? {};
    // An array destructures as if empty: it would run a capture with the defaults.
    if (typeof body !== 'object' || Array.isArray(body)) {
      return res.status(400).json({ error: 'body must be a JSON object { "durationMs"?, "format"?, "profile"? }' });
    }
    const { durationMs = 5000, format = 'html', profile } = body;
    if (!Number.isInteger(durationMs) || durationMs < 100 || durationMs > MAX_CAPTURE_MS) {
      return res.status(400).json({ error: `durationMs must be an integer from 100 to ${MAX_CAPTURE_MS}` });
    }
    if (format !== 'html' && format !== 'json') return res.status(400).json({ error: 'format must be "html" or "json"' });
    if (profile !== undefined && typeof profile !== 'boolean') return res.status(400).json({ error: 'profile must be true or false' });
    if (!plugin.enabled) return res.status(409).json({ error: 'rloop is off' });
    plugin.capture(durationMs, profile).then(
      (report) => {
        if (format === 'html') res.type('html').send(rloop.renderHtml(report));
        else res.json(report);
      },
      (e) => res.status(500).json({ error: e.message }),
    );
  });

  // A body that is not JSON fails in the admin app's JSON parser, before the app that plugins
  // get (mounted in it after the parser) is asked: answered there as the routes answer, not with
  // Express's error page, which carries the parser's stack.
  app.parent?.use('/rloop', (err, req, res, next) => {
    if (err?.type !== 'entity.parse.failed') return next(err);
    res.status(400).json({ error: `body is not JSON: ${err.message}` });
  });
}

module.exports = { routes };
