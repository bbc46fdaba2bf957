'use strict';
// Call stacks as collapsible lists, leaf first.

const { frame } = require('../format');
const { list } = require('../context');

const MAX_FRAMES = 32;

/** A closed <details> whose summary is `summaryHtml` and whose body lists `stack`'s frames. */
function stackDetails(stack, summaryHtml) {
  const frames = list(stack);
  const shown = frames.slice(0, MAX_FRAMES).map((f) => `<li>${frame(f)}</li>`).join('');
  const more = frames.length > MAX_FRAMES ? `<li class="muted">${frames.length - MAX_FRAMES} more frames</li>` : '';
  return `<details class="stack"><summary>${summaryHtml}</summary><ol>${shown}${more}</ol></details>`;
}

module.exports = { stackDetails };
