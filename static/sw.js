// ClusterLab's service worker: after a first visit, the app and the labs
// it has opened work with the network off.
//
// Each build is one cache (its name carries the build's digest, written in
// by Trunk's post-build hook), served cache-first so that a page never
// mixes the files of two builds. A new build is a new sw.js: it installs
// beside the old one and waits until the page's update notice is accepted.
const BUILD = '__BUILD__';
const CACHE = `clusterlab-${BUILD}`;
// The simulator's worker and the catalog: what every page needs besides
// what index.html names.
const CORE = ['./', 'engine_worker_loader.js', 'engine_worker.js', 'engine_worker_bg.wasm', 'labs/index.json', 'manifest.webmanifest', 'favicon.svg'];
// The modules only the author and review pages load, and the lab file's
// reference: kept too, so that those pages work offline without having been
// opened online first. (The worker registers seconds after the page has
// loaded, so these never compete with the first prompt.)
const PAGES = [
  'author.js', 'author_bg.wasm', 'author_checker_loader.js', 'author_checker.js', 'author_checker_bg.wasm',
  'results.js', 'results_bg.wasm', 'labs/authoring-reference.json',
];

async function precache() {
  const cache = await caches.open(CACHE);
  await cache.addAll(CORE);
  await cache.addAll(PAGES);
  // The page's own module, stylesheet and icon, by the names this build gave them.
  const page = await (await cache.match('./')).text();
  const named = [...page.matchAll(/(?:href|src)="\.?\/?([^"#?]+\.(?:js|wasm|css|svg))"/g)].map((found) => found[1]);
  await cache.addAll([...new Set(named)]);
}

self.addEventListener('install', (event) => {
  event.waitUntil((async () => {
    await precache();
    // The first install takes over at once; an update waits for the page.
    if (!self.registration.active) await self.skipWaiting();
  })());
});

self.addEventListener('activate', (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith('clusterlab-') && name !== CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener('message', (event) => {
  if (event.data === 'activate') self.skipWaiting();
});

self.addEventListener('fetch', (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (request.method !== 'GET' || url.origin !== self.location.origin) return;
  event.respondWith((async () => {
    const cache = await caches.open(CACHE);
    // A lab's data is asked for with its digest (`?v=`): one build holds one version.
    const labData = url.pathname.includes('/labs/');
    const cached = request.mode === 'navigate'
      ? await cache.match('./')
      : await cache.match(request, { ignoreSearch: labData });
    if (cached) return cached;
    const response = await fetch(request);
    if (response.ok && response.type === 'basic') await cache.put(request, response.clone());
    return response;
  })());
});
