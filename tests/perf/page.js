// Shared by the reference pages: the outputs to print, and the moments
// measured. `painted(kind)` records when the next frame after a change has
// been drawn (a frame, then a task after it), as the app's probe does.
var outputs = {};
var marks = { prompt: [], output: [], enter: [] };
var xhr = new XMLHttpRequest();
xhr.open('GET', '/perf/outputs.json', false);
xhr.send();
outputs = JSON.parse(xhr.responseText);
function painted(kind) {
  requestAnimationFrame(() => setTimeout(() => marks[kind].push(performance.now()), 0));
}
document.addEventListener('keydown', (event) => { if (event.key === 'Enter') marks.enter.push(performance.now()); }, true);
