#!/usr/bin/env bash
# The test command (`npm test`): makes sure what the tests need is on the machine, then runs them.
# Needs: a Chromium. One is found or installed as the demo of `npm start` does it
# (src/fetch/browser/provisionChromium.ts): CHROMIUM_PATH, a system Chromium or Playwright's own; else
# Playwright's download when its host answers; else, as root with apt-get, Debian's `chromium`;
# else we say what to run.
# The distributed-mode tests need Redis on 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432 (trust
# auth, database `test`); one that is installed but not running is started (docs/contributing.md,
# "What npm test does"). test/lts/ takes Node's current LTS from the npm registry for the demo.
set -euo pipefail
cd "$(dirname "$0")/.."

npx tsx -e "
import { provisionChromium } from './src/fetch/browser/provisionChromium.ts';
const say = (line: string) => console.error('npm test: ' + line);
provisionChromium({ say }).then(({ path, attempts, note }) => {
    if (attempts.length > 0 || !path) say(note);
    process.exit(path ? 0 : 1);
});
"

listening() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if ! listening 6379; then
    if command -v redis-server >/dev/null; then
        echo "npm test: Redis is not running on 127.0.0.1:6379; starting it" >&2
        redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
    else
        echo "npm test: no Redis on 127.0.0.1:6379 and none installed (apt-get install -y redis-server)" >&2
        exit 1
    fi
fi
if ! listening 5432; then
    if command -v pg_ctlcluster >/dev/null && [ -d /etc/postgresql ]; then
        echo "npm test: PostgreSQL is not running on 127.0.0.1:5432; starting it" >&2
        pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql)" main start
    else
        echo "npm test: no PostgreSQL on 127.0.0.1:5432 and none installed (apt-get install -y postgresql)" >&2
        exit 1
    fi
fi
for _ in $(seq 50); do listening 6379 && listening 5432 && break; sleep 0.2; done

npm run -s typecheck
npm run -s lint
# A test file that never exits (an open handle: a timer, a connection) would hold the run until CI
# kills it, saying nothing; a phase past its limit fails instead, naming the cause.
run_tests() {
    local code=0
    timeout --kill-after=30s 30m node --import tsx --test --test-reporter=spec "$@" || code=$?
    if [ "$code" -eq 124 ]; then
        echo "npm test: the tests ran past 30 minutes; the first test file not reported above" \
            "did not exit (an open handle?)" >&2
    fi
    return "$code"
}
# Test files given as arguments run alone: `npm test -- test/frontier/normalize.test.ts`.
if [ "$#" -gt 0 ]; then run_tests --test-concurrency=2 "$@"; exit; fi
# Two test files at a time: most of a file's time is waiting (on Chromium, a child crawl, a fleet), and
# Node's default on 2 cores is one file at a time (16 minutes against 12 for the whole suite).
# The fleet tests then run one at a time, with nothing beside them: each runs three workers with their
# Chromium on the 2 cores, and holds them to timings (the Crawl-delay within any one second, job locks
# renewed in time) that they missed in a clean CI run with another test file beside them (2026-12-03).
mapfile -t others < <(find test -name '*.test.ts' -not -path 'test/distributed/*' | sort)
mapfile -t fleets < <(find test/distributed -name '*.test.ts' | sort)
status=0
run_tests --test-concurrency=2 "${others[@]}" || status=$?
run_tests --test-concurrency=1 "${fleets[@]}" || status=$?
exit "$status"
