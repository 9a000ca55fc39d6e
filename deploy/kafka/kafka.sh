#!/usr/bin/env bash
# Local single-node Apache Kafka (KRaft) from Maven Central jars.
#   kafka.sh fetch | start | stop | status | wait
# Everything lives under $KAFKA_HOME (default .cache/kafka, ignored by git).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
KAFKA_HOME=${KAFKA_HOME:-$root/.cache/kafka}
KAFKA_PORT=${KAFKA_PORT:-9092}
KAFKA_CONTROLLER_PORT=${KAFKA_CONTROLLER_PORT:-9093}
libs=$KAFKA_HOME/libs
data=$KAFKA_HOME/data
pidfile=$KAFKA_HOME/kafka.pid
logfile=$KAFKA_HOME/kafka.log
props=$KAFKA_HOME/server.properties

java_cmd() {
  java -Xms256m -Xmx768m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$here/log4j2.yaml" -cp "$libs/*" "$@"
}

fetch() {
  if [ -f "$libs/.complete" ] && [ "$libs/.complete" -nt "$here/pom.xml" ]; then return 0; fi
  mkdir -p "$libs"
  echo "kafka: fetching the broker jars from Maven Central into $libs"
  mvn -B -q -f "$here/pom.xml" dependency:copy-dependencies \
    -DoutputDirectory="$libs" -DincludeScope=runtime
  touch "$libs/.complete"
}

running() { [ -f "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$KAFKA_PORT") 2>/dev/null; }

wait_ready() {
  for _ in $(seq 1 120); do
    if grep -q "Kafka Server started" "$logfile" 2>/dev/null && port_open; then return 0; fi
    running || { echo "kafka: the broker exited; see $logfile" >&2; tail -20 "$logfile" >&2; return 1; }
    sleep 0.5
  done
  echo "kafka: not ready after 60 s; see $logfile" >&2
  return 1
}

start() {
  fetch
  if running; then echo "kafka: already running on 127.0.0.1:$KAFKA_PORT (pid $(cat "$pidfile"))"; return 0; fi
  if port_open; then echo "kafka: 127.0.0.1:$KAFKA_PORT is taken by another process" >&2; return 1; fi
  sed -e "s#@DATA_DIR@#$data#" -e "s#@PORT@#$KAFKA_PORT#" \
      -e "s#@CONTROLLER_PORT@#$KAFKA_CONTROLLER_PORT#" "$here/server.properties.in" >"$props"
  if [ ! -f "$data/meta.properties" ]; then
    mkdir -p "$data"
    # A static quorum (controller.quorum.voters), so no --standalone here.
    java_cmd kafka.tools.StorageTool format --ignore-formatted \
      -t "$(java_cmd kafka.tools.StorageTool random-uuid)" -c "$props" >"$KAFKA_HOME/format.log" 2>&1
  fi
  echo "kafka: starting on 127.0.0.1:$KAFKA_PORT"
  nohup java -Xms256m -Xmx768m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$here/log4j2.yaml" -cp "$libs/*" kafka.Kafka "$props" \
    >"$logfile" 2>&1 </dev/null &
  echo $! >"$pidfile"
  wait_ready
  echo "kafka: ready on 127.0.0.1:$KAFKA_PORT"
}

stop() {
  if running; then
    kill "$(cat "$pidfile")"
    for _ in $(seq 1 60); do running || break; sleep 0.5; done
    running && kill -9 "$(cat "$pidfile")" || true
    echo "kafka: stopped"
  fi
  rm -f "$pidfile"
}

case "${1:-}" in
  fetch) fetch ;;
  start) start ;;
  stop) stop ;;
  status) if running; then echo "kafka: running (pid $(cat "$pidfile"))"; else echo "kafka: stopped"; exit 1; fi ;;
  wait) wait_ready ;;
  reset) stop; rm -rf "$data" ;;
  *) echo "usage: $0 fetch|start|stop|status|wait|reset" >&2; exit 2 ;;
esac
