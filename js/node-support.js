'use strict';
// While an async hook is enabled, a stack overflow is uncatchable on Node releases before the fix
// of CVE-2025-59466 (20.20.0, 22.22.0, 24.13.0, 25.3.0; 21 and 23 never had it). rloop enables
// hooks in the app's process, so start() on such a release says so once, as a warning the app
// sees (process 'warning'); it never refuses to start.

/** The first fixed release of each line that had one: line → [minor, patch]. */
const FIXED = { 20: [20, 0], 22: [22, 0], 24: [13, 0], 25: [3, 0] };

/** Whether Node `version` ('22.21.0') is a release without the fix. */
function unpatched(version) {
  const [major, minor, patch] = version.split('.').map(Number);
  if (major >= 26) return false;
  const fix = FIXED[major];
  if (fix === undefined) return true;
  return minor < fix[0] || (minor === fix[0] && patch < fix[1]);
}

let warned = false;

/** Emits the warning once a process, when Node `version` lacks the fix. */
function warnIfUnpatched(version = process.versions.node) {
  if (warned || !unpatched(version)) return;
  warned = true;
  process.emitWarning(`Node ${version} lacks the fix of CVE-2025-59466: while rloop's async hooks are enabled, a stack overflow cannot be caught. Upgrade to Node 20.20.0, 22.22.0, 24.13.0, 25.3.0 or later.`, { code: 'RLOOP_UNPATCHED_NODE' });
}

module.exports = { unpatched, warnIfUnpatched };
