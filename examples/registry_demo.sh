#!/usr/bin/env bash
# Several agents: a registry, the code-review and explain agents, and the
# orchestrator, all on 127.0.0.1. The SQL-injection diff goes to the
# orchestrator, which finds the code-review agent in the registry and
# delegates to it; the S608 finding comes back. Then the code-review agent is
# stopped: the registry marks it unhealthy and the orchestrator skips it.
#
#   bash examples/registry_demo.sh          (from the repository root, after `make install`)
#
# A2A_GRPC (the command) and the PORT_* variables may be overridden.
set -euo pipefail
cd "$(dirname "$0")/.."
A2A=${A2A_GRPC:-.venv/bin/a2a-grpc}
REG_GRPC=${PORT_REGISTRY_GRPC:-50061}
REG_HTTP=${PORT_REGISTRY_HTTP:-8061}
REVIEW=${PORT_REVIEW:-8071}
EXPLAIN=${PORT_EXPLAIN:-8072}
ORCH=${PORT_ORCHESTRATOR:-8073}
REGISTRY=grpc://127.0.0.1:$REG_GRPC
export A2A_GRPC_LOG_LEVEL=WARNING

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

wait_port() {  # wait_port PORT: until something listens on 127.0.0.1:PORT
  for _ in $(seq 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on port $1" >&2
  return 1
}

echo "== the registry (health checks every second, unhealthy after 2 failures)"
$A2A registry serve --store memory --allow-private --grpc-port "$REG_GRPC" --http-port "$REG_HTTP" \
  --check-interval 1 --failure-threshold 2 --timeout 1 2>/dev/null &
pids+=($!)
wait_port "$REG_HTTP"

echo "== the code-review and explain agents, registering themselves"
$A2A serve --agent code-review --grace 0.5 --store memory --grpc-port 0 --http-port "$REVIEW" --register-with "$REGISTRY" &
review_pid=$!
pids+=($review_pid)
$A2A serve --agent explain --grace 0.5 --store memory --grpc-port 0 --http-port "$EXPLAIN" --register-with "$REGISTRY" &
pids+=($!)
echo "== the orchestrator"
$A2A serve --agent orchestrator --grace 0.5 --registry "$REGISTRY" --store memory --grpc-port 0 --http-port "$ORCH" &
pids+=($!)
wait_port "$ORCH"
for _ in $(seq 100); do
  [ "$($A2A registry list --registry "$REGISTRY" --json | wc -l)" -ge 2 ] && break
  sleep 0.1
done
$A2A registry list --registry "$REGISTRY"

echo "== who offers review-diff (the code-review agent's skill)?"
$A2A registry find --skill review-diff --registry "$REGISTRY"

echo "== the SQL-injection diff, sent to the orchestrator"
$A2A send "http://127.0.0.1:$ORCH" "review this change" --file examples/diffs/sql_injection.diff

echo "== some Python source, sent to the orchestrator (the explain agent answers)"
$A2A send "http://127.0.0.1:$ORCH" --data '{"skill": "explain"}' --file examples/my_agent.py

echo "== stop the code-review agent"
kill "$review_pid"
for _ in $(seq 100); do
  $A2A registry find --skill review-diff --registry "$REGISTRY" --json | grep -q . || break
  sleep 0.2
done
$A2A registry find --skill review-diff --any --registry "$REGISTRY"

echo "== the diff again: no healthy agent has the skill"
$A2A send "http://127.0.0.1:$ORCH" "review this change" --file examples/diffs/sql_injection.diff || echo "(exit status $?)"
