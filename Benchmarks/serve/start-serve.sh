# Sourced by run.sh, ab.sh and paced.sh: start_serve BINARY STORE [LOG] starts `BINARY serve
# --quiet` on a port the system picks (its messages to LOG, else nowhere) and sets $server (its
# pid) and $port once it listens. --quiet hides the line with the port: the kernel is asked.
start_serve() {
  "$1" serve --quiet --db "$2" --port 0 2>"${3:-/dev/null}" &
  server=$!
  port=""
  for _ in $(seq 1 100); do
    port="$(ss -ltnpH | grep "pid=$server," | awk '{print $4}' | sed 's/.*://' | head -1 || true)"
    [ -n "$port" ] && return 0
    sleep 0.1
  done
  echo "$(basename "$0"): $1 did not start" >&2
  [ -z "${3:-}" ] || cat "$3" >&2
  return 1
}
