#!/bin/sh
# Sends one demo alert per second with the dispatcher's own `send` command, like a provider would.
set -eu
i=0
while true; do
    token=$(printf '%064x' "$((i % 50))")
    notification-dispatcher send --bootstrap "${BOOTSTRAP:-kafka:19092}" --token "$token" \
        --topic com.example.news --push-type alert /demo/demo-alert.json >/dev/null
    i=$((i + 1))
    sleep 1
done
