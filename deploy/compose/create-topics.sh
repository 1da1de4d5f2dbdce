#!/bin/bash
# Creates the product's topics on the compose broker (idempotent: existing topics are kept).
set -euo pipefail
bootstrap=${BOOTSTRAP:-kafka:19092}
partitions=${PARTITIONS:-12}
topics=/opt/kafka/bin/kafka-topics.sh
for topic in notifications.requests notifications.deliveries notifications.launches \
    notifications.dead-letter notifications.metrics notifications.responses notifications.actions; do
    "$topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic" \
        --partitions "$partitions" --replication-factor 1
done
"$topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic notifications.app-states \
    --partitions "$partitions" --replication-factor 1 --config cleanup.policy=compact
"$topics" --bootstrap-server "$bootstrap" --list
