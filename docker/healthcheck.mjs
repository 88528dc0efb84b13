// The image's HEALTHCHECK (Dockerfile): healthy while the run's /status endpoint answers 200, when
// the run serves one on a fixed port (DRAGNET_METRICS_PORT); a run without metrics has nothing to ask, and is
// healthy while it runs. Plain JavaScript, so a check every 30 s starts no TypeScript loader.
const port = process.env.DRAGNET_METRICS_PORT;
if (!port || port === '0') process.exit(0);
try {
    const response = await fetch(`http://127.0.0.1:${port}/status`, { signal: AbortSignal.timeout(4000) });
    process.exit(response.ok ? 0 : 1);
} catch {
    process.exit(1);
}
