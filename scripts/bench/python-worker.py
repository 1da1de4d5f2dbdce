#!/usr/bin/python3
"""A plain Python confluent-kafka worker: the contender `bench compare` runs beside `serve`.

Gate-only: consume a request, parse its JSON, check a few of APNs' rules (apns-topic among the
apps, apns-priority, payload size, `aps` present), and write a delivery (disposition `original`,
or `discarded` once expired) or a dead letter (the record unchanged, with the reason in headers). Lighter than `serve`, which
checks every rule and writes more fields; written the way a Python user would, reasonably
efficiently: batched consume, produce with poll(0), offsets committed only after a flush.

`--pass-through` copies each record to the deliveries topic without parsing (the floor).
Runs until SIGTERM or SIGINT, then flushes, commits, leaves the group and exits 0.
"""
import argparse, json, os, signal, time
from confluent_kafka import Consumer, KafkaException, Producer

parser = argparse.ArgumentParser()
parser.add_argument("--bootstrap", required=True)
parser.add_argument("--group", default="python-worker")
parser.add_argument("--apps", default="", help="comma-separated bundle IDs allowed")
parser.add_argument("--requests", default="notifications.requests")
parser.add_argument("--deliveries", default="notifications.deliveries")
parser.add_argument("--dead-letter", default="notifications.dead-letter")
parser.add_argument("--pass-through", action="store_true")
parser.add_argument("--app-state", default="background", choices=["foreground", "background"],
                    help="the apps' state, written in every delivery (serve's defaultAppState)")
args = parser.parse_args()

# The settings that matter, as serve sets them: acks=all with idempotence, linger 5 ms, and
# fetch.wait.max.ms 10 (the embedded broker holds an empty fetch that long).
consumer = Consumer({"bootstrap.servers": args.bootstrap, "group.id": args.group, "auto.offset.reset": "earliest",
                     "enable.auto.commit": False, "fetch.wait.max.ms": 10, "session.timeout.ms": 6000,
                     "heartbeat.interval.ms": 500, "partition.assignment.strategy": "cooperative-sticky"})
producer = Producer({"bootstrap.servers": args.bootstrap, "enable.idempotence": True, "acks": "all", "linger.ms": 5})
apps = set(filter(None, args.apps.split(",")))
running = True


def stop(signum, frame):
    global running
    running = False


signal.signal(signal.SIGTERM, stop)
signal.signal(signal.SIGINT, stop)


def produce(topic, key, value, headers):
    while True:
        try:
            producer.produce(topic, value, key, headers=headers)
            return
        except BufferError:  # the local queue is full: serve delivery reports, then retry
            producer.poll(0.05)


def now():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def gate(message, headers, received_at):
    """The delivery's JSON, or the dead letter's (reason, status)."""
    topic = headers.get("apns-topic", "")
    if apps and topic not in apps:
        return None, ("TopicDisallowed", "400")
    priority = headers.get("apns-priority")
    if priority is not None and priority not in ("10", "5", "1"):
        return None, ("BadPriority", "400")
    value = message.value() or b""
    if len(value) > 4096:
        return None, ("PayloadTooLarge", "413")
    try:
        payload = json.loads(value)
    except ValueError:
        return None, ("BadPayload", "400")
    if not isinstance(payload, dict) or not isinstance(payload.get("aps"), dict):
        return None, ("MissingAps", "400")
    aps = payload["aps"]
    # Discarded when it expired before it could be delivered (apns-expiration 0: deliver once, now).
    expiration = headers.get("apns-expiration")
    expired = expiration not in (None, "", "0") and expiration.isdigit() and int(expiration) < time.time()
    push_type = headers.get("apns-push-type") or ("background" if aps.get("content-available") == 1 and "alert" not in aps else "alert")
    delivery = {"apnsId": headers.get("apns-id"), "deviceToken": (message.key() or b"").decode(), "bundleId": topic,
                "pushType": push_type, "priority": int(priority or ("5" if push_type == "background" else "10")),
                "collapseId": headers.get("apns-collapse-id"), "disposition": "discarded" if expired else "original",
                "reason": "expired" if expired else "no-extension",
                "payload": payload, "appState": args.app_state, "receivedAt": received_at, "deliveredAt": now()}
    return json.dumps(delivery, separators=(",", ":")), None


def handle(message, received_at):
    if args.pass_through:
        produce(args.deliveries, message.key(), message.value(), message.headers())
        return
    headers = {name: (value or b"").decode() for name, value in (message.headers() or [])}
    delivery, rejection = gate(message, headers, received_at)
    if delivery is not None:
        produce(args.deliveries, message.key(), delivery, [("apns-id", headers.get("apns-id", ""))])
    else:
        produce(args.dead_letter, message.key(), message.value(), (message.headers() or []) + [
            ("dlq-reason", rejection[0]), ("dlq-status", rejection[1]), ("dlq-source-topic", message.topic()),
            ("dlq-source-partition", str(message.partition())), ("dlq-source-offset", str(message.offset())),
            ("dlq-consumer-group", args.group), ("dlq-failed-at", now())])


consumer.subscribe([args.requests])
parent = os.getppid()  # if whoever started us dies, stop rather than run on as an orphan
last_commit = time.monotonic()
consumed = False
while running and os.getppid() == parent:
    batch = consumer.consume(num_messages=1000, timeout=0.1)
    received_at = now()
    for message in batch:
        if message.error():
            raise KafkaException(message.error())
        handle(message, received_at)
        consumed = True
    producer.poll(0)
    # At least once: what was consumed is committed only once its outputs are acknowledged.
    if consumed and time.monotonic() - last_commit >= 1:
        producer.flush()
        consumer.commit(asynchronous=True)
        last_commit, consumed = time.monotonic(), False

producer.flush(30)
if consumed:
    try:
        consumer.commit(asynchronous=False)
    except KafkaException as error:  # nothing new to commit, or the group is gone: at least once holds
        print(f"final commit: {error}", flush=True)
consumer.close()
