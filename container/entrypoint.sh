#!/bin/sh
# The servebook image's entry point (Containerfile); run directly by tests/container.
#
#   dashboard [serve options]  migrate and seed the database (DATABASE_URL), register the
#                              worker token from SERVEBOOK_WORKER_TOKEN if set, then serve
#                              on SERVEBOOK_HOST:SERVEBOOK_PORT (0.0.0.0:8000 by default)
#   worker [worker options]    run the jobs of the dashboard at SERVEBOOK_SERVER with the
#                              token in SERVEBOOK_TOKEN
#   healthcheck                exit 0 when the dashboard here answers /readyz with 200
#   anything else              a servebook command, e.g. `token create --role maintainer`
set -eu

role="${1:-dashboard}"
[ "$#" -gt 0 ] && shift

host="${SERVEBOOK_HOST:-0.0.0.0}"
port="${SERVEBOOK_PORT:-8000}"

wait_for_database() {
    # The database may still be starting: migrations are retried until it answers.
    deadline=$(( $(date +%s) + ${SERVEBOOK_DATABASE_WAIT_S:-60} ))
    until servebook db upgrade; do
        if [ "$(date +%s)" -ge "$deadline" ]; then
            echo "servebook-entrypoint: the database did not answer; giving up" >&2
            exit 1
        fi
        echo "servebook-entrypoint: waiting for the database" >&2
        sleep 2
    done
}

case "$role" in
    dashboard)
        wait_for_database
        servebook seed
        if [ -n "${SERVEBOOK_WORKER_TOKEN:-}" ]; then
            servebook token register --role worker \
                --name "${SERVEBOOK_WORKER_TOKEN_NAME:-workers}" --from-env SERVEBOOK_WORKER_TOKEN
        fi
        exec servebook serve --host "$host" --port "$port" "$@"
        ;;
    worker)
        : "${SERVEBOOK_SERVER:?set SERVEBOOK_SERVER to the dashboard URL}"
        : "${SERVEBOOK_TOKEN:?set SERVEBOOK_TOKEN to a worker token}"
        exec servebook worker "$@"
        ;;
    healthcheck)
        exec python -c '
import sys, urllib.request
try:
    with urllib.request.urlopen(sys.argv[1], timeout=5) as answer:
        sys.exit(0 if answer.status == 200 else 1)
except Exception as error:
    print(error, file=sys.stderr)
    sys.exit(1)
' "http://127.0.0.1:${port}/readyz"
        ;;
    *)
        exec servebook "$role" "$@"
        ;;
esac
