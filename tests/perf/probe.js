// Injected into the app's page: the same moments as page.js measures on the
// reference pages. The prompt is usable when its label shows and the input
// takes keys; an output is painted when a new entry is in the scrollback.
window.marks = { prompt: [], output: [], enter: [] };
function painted(kind) {
  requestAnimationFrame(() => setTimeout(() => window.marks[kind].push(performance.now()), 0));
}
document.addEventListener('keydown', (event) => { if (event.key === 'Enter') window.marks.enter.push(performance.now()); }, true);
let promptSeen = false;
let added = false;
new MutationObserver((records) => {
  for (const record of records) {
    for (const node of record.addedNodes) {
      if (node.classList?.contains('entry')) added = true;
    }
  }
  const label = document.querySelector('label.prompt');
  const input = document.querySelector('.terminal-input');
  const ready = label && label.textContent.includes('$') && input && !input.disabled;
  // The app's own command line (the first paint's, index.html, has another id).
  const own = document.getElementById('terminal-input');
  if (own && !own.disabled && performance.getEntriesByName('clusterlab:app-prompt').length === 0) performance.mark('clusterlab:app-prompt');
  if (!promptSeen && ready) {
    promptSeen = true;
    painted('prompt');
  }
  if (added && ready) {
    added = false;
    painted('output');
  }
}).observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
