'use strict';
// The environment a result file was measured in, so two files can be judged comparable.

const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');

function git(...args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null; // not a checkout (a packed copy): the fingerprint says so with nulls
  }
}

function fingerprint(options) {
  const status = git('status', '--porcelain');
  return {
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    loadavg: os.loadavg(),
    totalMemMB: Math.round(os.totalmem() / 1e6),
    commit: git('rev-parse', 'HEAD'),
    dirty: status === null ? null : status !== '',
    startedAt: new Date().toISOString(),
    options,
  };
}

module.exports = { fingerprint };
