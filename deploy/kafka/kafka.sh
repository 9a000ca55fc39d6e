#!/usr/bin/env bash
# Local single-node Apache Kafka (KRaft) from Maven Central jars.
#   kafka.sh fetch | start | stop | status | wait | reset
# Everything lives under $KAFKA_HOME (default .cache/kafka, ignored by git), readable by the
# invoking user only: the data, and credentials.env with the passwords of the broker's own
# user and of "admin", made when the storage is formatted (a stack reads admin's to create
# its topics, its users and their ACLs). Every client authenticates (SASL/SCRAM-SHA-512).
set -euo pipefail
umask 077
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
credentials=$KAFKA_HOME/credentials.env

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

random_password() { od -An -tx1 -N32 /dev/urandom | tr -d ' \n'; }

# The broker's and admin's passwords: made once, with the storage they are formatted into.
make_credentials() {
  {
    echo "# Made by deploy/kafka/kafka.sh when it formatted this broker's storage."
    echo "KAFKA_BROKER_PASSWORD=$(random_password)"
    echo "TABLETOP_KAFKA_ADMIN_USERNAME=admin"
    echo "TABLETOP_KAFKA_ADMIN_PASSWORD=$(random_password)"
  } >"$credentials.new"
  mv "$credentials.new" "$credentials"
}

credential() { sed -n "s/^$1=//p" "$credentials"; }

format() {
  mkdir -p "$data"
  # The SCRAM credentials go into the metadata log as it is created (KRaft has no other way
  # before a broker runs), from an argument file, so that no command line shows them.
  local args=$KAFKA_HOME/format.args
  printf '%s\n' --ignore-formatted -c "$props" \
    -t "$(java_cmd kafka.tools.StorageTool random-uuid)" \
    --add-scram "SCRAM-SHA-512=[name=broker,password=$(credential KAFKA_BROKER_PASSWORD)]" \
    --add-scram "SCRAM-SHA-512=[name=admin,password=$(credential TABLETOP_KAFKA_ADMIN_PASSWORD)]" \
    >"$args"
  # A static quorum (controller.quorum.voters), so no --standalone here.
  if ! java_cmd kafka.tools.StorageTool format "@$args" >"$KAFKA_HOME/format.log" 2>&1; then
    rm -f "$args"
    cat "$KAFKA_HOME/format.log" >&2
    return 1
  fi
  rm -f "$args"
}

write_properties() {
  rm -f "$props"  # made afresh, so with this script's umask (it holds the broker's password)
  sed -e "s#@DATA_DIR@#$data#" -e "s#@PORT@#$KAFKA_PORT#" \
      -e "s#@CONTROLLER_PORT@#$KAFKA_CONTROLLER_PORT#" \
      -e "s#@BROKER_PASSWORD@#$(credential KAFKA_BROKER_PASSWORD)#g" \
      "$here/server.properties.in" >"$props"
}

launch() {
  nohup java -Xms256m -Xmx768m -XX:+UseG1GC -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$here/log4j2.yaml" -cp "$libs/*" kafka.Kafka "$1" \
    >"$logfile" 2>&1 </dev/null &
  echo $! >"$pidfile"
  wait_ready
}

# Storage formatted before the broker required authentication has no users: it is started
# once as it was then (no authentication, loopback only) to add the broker's and admin's
# SCRAM credentials, and stopped. Its topics are kept.
add_users_to_old_storage() {
  echo "kafka: $data predates authentication; adding the broker's and admin's users to it"
  make_credentials
  local old=$KAFKA_HOME/unauthenticated.properties
  write_properties
  # later keys win: the listeners and authorizer of before
  cat "$props" - >"$old" <<EOF
listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT,CONTROLLER://127.0.0.1:$KAFKA_CONTROLLER_PORT
advertised.listeners=PLAINTEXT://127.0.0.1:$KAFKA_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
authorizer.class.name=
EOF
  launch "$old" || { rm -f "$credentials" "$old"; return 1; }
  local user status=0
  for user in broker:KAFKA_BROKER_PASSWORD admin:TABLETOP_KAFKA_ADMIN_PASSWORD; do
    # (the tool takes no SCRAM credential from a file: the command line shows the password
    # for a moment, once, to this machine's users, before any client can use it)
    java_cmd kafka.admin.ConfigCommand --bootstrap-server "127.0.0.1:$KAFKA_PORT" --alter \
      --entity-type users --entity-name "${user%%:*}" \
      --add-config "SCRAM-SHA-512=[password=$(credential "${user#*:}")]" \
      >>"$KAFKA_HOME/format.log" 2>&1 || status=1
  done
  rm -f "$old"
  stop
  if [ "$status" != 0 ]; then
    rm -f "$credentials"
    echo "kafka: could not add the users (see $KAFKA_HOME/format.log); '$0 reset' starts" \
      "the broker afresh (its topics are lost)" >&2
    return 1
  fi
}

start() {
  fetch
  if running; then
    if [ ! -f "$credentials" ]; then
      echo "kafka: the broker running from $KAFKA_HOME predates authentication: '$0 stop'," \
        "then start it again, which adds its users and keeps its topics" >&2
      return 1
    fi
    echo "kafka: already running on 127.0.0.1:$KAFKA_PORT (pid $(cat "$pidfile"))"
    return 0
  fi
  if port_open; then echo "kafka: 127.0.0.1:$KAFKA_PORT is taken by another process" >&2; return 1; fi
  chmod 700 "$KAFKA_HOME"
  if [ -f "$data/meta.properties" ] && [ ! -f "$credentials" ]; then
    add_users_to_old_storage
  fi
  [ -f "$credentials" ] || make_credentials
  write_properties
  if [ ! -f "$data/meta.properties" ]; then format; fi
  chmod 700 "$data"
  echo "kafka: starting on 127.0.0.1:$KAFKA_PORT"
  launch "$props"
  echo "kafka: ready on 127.0.0.1:$KAFKA_PORT (SASL/SCRAM-SHA-512; admin's password in $credentials)"
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
  reset) stop; rm -rf "$data" "$credentials" "$props" ;;
  *) echo "usage: $0 fetch|start|stop|status|wait|reset" >&2; exit 2 ;;
esac
