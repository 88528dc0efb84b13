#!/usr/bin/env bash
# The test command (`npm test`): makes sure what the tests need is on the machine, then runs them.
# Needs: a Chromium (CHROMIUM_PATH, a system Chromium, or Playwright's own). When none is found and
# we are root on Debian/Ubuntu, Debian's `chromium` is installed; otherwise we say what to run.
# The distributed-mode tests need Redis on 127.0.0.1:6379 and PostgreSQL on 127.0.0.1:5432 (trust
# auth, database `test`); one that is installed but not running is started (README, Tests).
set -euo pipefail
cd "$(dirname "$0")/.."

has_chromium() {
    npx tsx -e "import { findChromium } from './src/fetch/chromium.ts'; process.exit(findChromium() ? 0 : 1)"
}

if ! has_chromium; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "npm test: no Chromium found; installing Debian's chromium package" >&2
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "npm test: no Chromium found. Install one and run again:" >&2
        echo "  sudo apt-get install -y chromium     (Debian/Ubuntu)" >&2
        echo "  npx playwright install chromium      (elsewhere)" >&2
        echo "  or set CHROMIUM_PATH to a Chromium or Chrome binary" >&2
        exit 1
    fi
fi

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

npx tsc --noEmit -p .
# Test files given as arguments run alone: `npm test -- test/frontier/normalize.test.ts`.
if [ "$#" -gt 0 ]; then files=("$@"); else mapfile -t files < <(find test -name '*.test.ts' | sort); fi
exec node --import tsx --test --test-reporter=spec "${files[@]}"
