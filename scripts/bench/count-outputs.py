#!/usr/bin/python3
"""Counts the records written to some topics, for `bench compare`, without reading them.

Prints `ready` once it knows the topics' partitions, then the total of their end offsets and
each topic's at every poll while the total is 0 and then each time it changes (polled every --interval seconds with one ListOffsets request per broker), until
SIGTERM or SIGINT, or until whoever started it is gone. End offsets, not a consumer: reading
every output would cost CPU on the two cores the contender is measured on, and the embedded
broker drops a partition's oldest records past about 5 MiB, which a late reader would miss; its
end offsets never go back.
"""
import argparse, os, signal, threading
from confluent_kafka import Consumer, TopicPartition

parser = argparse.ArgumentParser()
parser.add_argument("--bootstrap", required=True)
parser.add_argument("--topics", required=True, help="comma-separated")
parser.add_argument("--interval", type=float, default=0.025)
args = parser.parse_args()

stopped = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stopped.set())
signal.signal(signal.SIGINT, lambda *_: stopped.set())
parent = os.getppid()  # if whoever started us dies, stop rather than run on as an orphan

client = Consumer({"bootstrap.servers": args.bootstrap, "group.id": "bench-count-outputs", "enable.auto.commit": False})
topics = args.topics.split(",")
metadata = client.list_topics(timeout=30)
partitions = [TopicPartition(topic, partition, -1)  # -1: the latest offset, that is the end offset
              for topic in topics for partition in metadata.topics[topic].partitions]
print("ready", flush=True)
last = -1
while not stopped.is_set() and os.getppid() == parent:
    per_topic = dict.fromkeys(topics, 0)
    for found in client.offsets_for_times(partitions, timeout=10):
        per_topic[found.topic] += max(0, found.offset)
    total = sum(per_topic.values())
    # Every poll while nothing is written yet, so that the reader knows the last moment with none
    # (a small run may be written between two polls); then only changes.
    if total != last or total == 0:
        print(total, *per_topic.values(), flush=True)  # the total, then each topic's, in --topics order
        last = total
    stopped.wait(args.interval)
client.close()
