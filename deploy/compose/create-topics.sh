#!/bin/bash
# Creates the product's topics on the compose broker (idempotent: existing topics are kept).
set -euo pipefail
bootstrap=${BOOTSTRAP:-kafka:19092}
partitions=${PARTITIONS:-12}
topics=/opt/kafka/bin/kafka-topics.sh
for topic in notifications.requests notifications.deliveries notifications.launches \
    notifications.dead-letter notifications.metrics notifications.responses notifications.actions \
    notifications.feedback; do
    "$topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$topic" \
        --partitions "$partitions" --replication-factor 1
done
for table in notifications.app-states notifications.devices; do
    "$topics" --bootstrap-server "$bootstrap" --create --if-not-exists --topic "$table" \
        --partitions "$partitions" --replication-factor 1 --config cleanup.policy=compact
done
"$topics" --bootstrap-server "$bootstrap" --list
