/*
 * c-floor: the plain C librdkafka floor of `serve`: a consumer-group consumer that copies every record
 * of an input topic to an output topic through an idempotent producer, and nothing else. What it
 * costs per record is what librdkafka itself costs, the figure docs/performance.md compares between
 * librdkafka versions (docs/performance.md, "librdkafka 2.0.2 → 2.8.0").
 *
 * The broker is librdkafka's mock cluster (rd_kafka_mock_cluster_new), in a process of its own:
 * without --bootstrap, c-floor starts itself (or --broker-exe, e.g. a build linked with another
 * librdkafka) with --broker, which creates the cluster and the two topics and prints its bootstrap
 * list. So getrusage(RUSAGE_SELF) of this process counts the client only (consumer, producer and
 * their librdkafka threads), never the broker's work, which would otherwise be half of it.
 *
 * The input is produced first (not measured); then, measured: the consumer joins its group, consumes
 * every record, the producer writes a copy of each (key, value, headers) and the loop ends when the
 * last delivery report arrives; consumer close and producer destroy are measured too (as `bench
 * compare` counts serve from start to exit). The settings are serve's (and python-worker.py's):
 * cooperative-sticky, fetch.wait.max.ms 10, session 6 s, heartbeat 500 ms; idempotent producer,
 * acks all, linger.ms 5. -C/-P/-X KEY=VALUE add consumer / producer / both properties.
 *
 * It prints one line of figures, and with -t the CPU of each thread by name (rdk:main, rdk:broker…)
 * just before the handles are destroyed.
 *
 * Load-independent: valgrind --tool=callgrind c-floor ... counts the instructions of the measured part
 * only (see CALLGRIND_ZERO_STATS below); the broker, a child process, is not traced.
 *
 * Build: scripts/bench/build-c-floor [OUT] (cc -O2 ... $(pkg-config --cflags --libs rdkafka)).
 * Run:   c-floor [-n RECORDS] [-s VALUE_BYTES] [-p PARTITIONS] [-t] [-X k=v] [-C k=v] [-P k=v]
 *        [-f MAX_IN_FLIGHT]  (pause the assignment there, resume at half: serve's intake gate)
 *        c-floor --broker [-p PARTITIONS]      (the mock cluster alone; exits when stdin closes)
 *        c-floor --worker --bootstrap B --group G [--input T] [--output T]
 *                (`bench compare`'s C contender: copies what the input topic holds or receives, with
 *                no preload, until SIGTERM; then closes and prints its line, records = consumed)
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

/* Under valgrind --tool=callgrind, only the measured part is counted: the counters are zeroed after
 * the preload and dumped after the producer is destroyed (callgrind.out.PID.1). Outside valgrind
 * these are a few no-op instructions; without valgrind's headers, nothing. */
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(what)
#endif

extern char **environ;

#define MAX_PROPS 64
static const char *consumer_props[MAX_PROPS], *producer_props[MAX_PROPS];
static int n_consumer_props, n_producer_props;
static long records = 200000, value_size = 500;
static int partitions = 64, show_threads = 0;
static long max_in_flight = 0; /* -f N: pause the assignment at N records in flight, resume at N/2 (serve's intake gate) */
static const char *in_topic = "c-floor.in", *out_topic = "c-floor.out";
static volatile long delivered, failed;
static volatile sig_atomic_t stopping;

static void on_term(int sig) {
        (void)sig;
        stopping = 1;
}

static void die(const char *what, const char *detail) {
        fprintf(stderr, "c-floor: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
        exit(1);
}

static double now_seconds(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void cpu_seconds(double *user, double *sys) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        *user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
        *sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static void set(rd_kafka_conf_t *conf, const char *key, const char *value) {
        char err[512];
        if (rd_kafka_conf_set(conf, key, value, err, sizeof err) != RD_KAFKA_CONF_OK)
                die(key, err);
}

static void set_all(rd_kafka_conf_t *conf, const char **props, int n) {
        for (int i = 0; i < n; i++) {
                char *copy = strdup(props[i]), *eq = strchr(copy, '=');
                if (!eq) die("property without '='", props[i]);
                *eq = 0;
                set(conf, copy, eq + 1);
                free(copy);
        }
}

static long stats_count, stats_bytes;

/* Statistics (-C statistics.interval.ms=N, as serve sets 1000): counted, not parsed. */
static int on_stats(rd_kafka_t *rk, char *json, size_t len, void *opaque) {
        (void)rk; (void)json; (void)opaque;
        stats_count++;
        stats_bytes += (long)len;
        return 0;
}

static void on_delivery(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque) {
        (void)rk; (void)opaque;
        if (m->err) failed++; else delivered++;
}

/* The mock cluster alone: 3 brokers, both topics, the bootstrap list on stdout; until stdin closes. */
static int run_broker(void) {
        char err[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        set(conf, "log_level", "3");
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
        if (!rk) die("mock host", err);
        rd_kafka_mock_cluster_t *cluster = rd_kafka_mock_cluster_new(rk, 3);
        if (!cluster) die("rd_kafka_mock_cluster_new failed", NULL);
        if (rd_kafka_mock_topic_create(cluster, in_topic, partitions, 3) ||
            rd_kafka_mock_topic_create(cluster, out_topic, partitions, 3))
                die("rd_kafka_mock_topic_create failed", NULL);
        printf("bootstrap: %s\n", rd_kafka_mock_cluster_bootstraps(cluster));
        fflush(stdout);
        char buf[64];
        while (read(0, buf, sizeof buf) > 0) {}
        rd_kafka_mock_cluster_destroy(cluster);
        rd_kafka_destroy(rk);
        return 0;
}

/* Starts `exe --broker -p P` with pipes on its stdin and stdout; returns the bootstrap list. */
static char *start_broker(const char *exe, pid_t *pid, int *keepalive) {
        int to_child[2], from_child[2];
        if (pipe(to_child) || pipe(from_child)) die("pipe", strerror(errno));
        posix_spawn_file_actions_t actions;
        posix_spawn_file_actions_init(&actions);
        posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
        posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
        posix_spawn_file_actions_addclose(&actions, to_child[1]);
        posix_spawn_file_actions_addclose(&actions, from_child[0]);
        char p[16];
        snprintf(p, sizeof p, "%d", partitions);
        char *argv[] = {(char *)exe, "--broker", "-p", p, NULL};
        if (posix_spawn(pid, exe, &actions, NULL, argv, environ)) die("spawning the broker", exe);
        close(to_child[0]);
        close(from_child[1]);
        *keepalive = to_child[1];
        FILE *in = fdopen(from_child[0], "r");
        static char line[1024];
        if (!fgets(line, sizeof line, in) || strncmp(line, "bootstrap: ", 11)) die("the broker did not start", exe);
        line[strcspn(line, "\n")] = 0;
        return line + 11;
}

static void preload(const char *bootstrap) {
        char err[512];
        rd_kafka_conf_t *conf = rd_kafka_conf_new();
        set(conf, "bootstrap.servers", bootstrap);
        set(conf, "linger.ms", "20");
        rd_kafka_t *p = rd_kafka_new(RD_KAFKA_PRODUCER, conf, err, sizeof err);
        if (!p) die("preload producer", err);
        char *value = malloc(value_size);
        memset(value, 'x', value_size);
        memcpy(value, "{\"aps\":{\"alert\":\"hi\"},\"pad\":\"", 29 < value_size ? 29 : value_size);
        char key[65];
        for (long i = 0; i < records; i++) {
                snprintf(key, sizeof key, "%064lx", (unsigned long)(i * 0x9E3779B97F4A7C15ull));
                for (;;) {
                        rd_kafka_resp_err_t e = rd_kafka_producev(
                            p, RD_KAFKA_V_TOPIC(in_topic), RD_KAFKA_V_KEY(key, 64), RD_KAFKA_V_VALUE(value, value_size),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_HEADER("apns-topic", "com.example.app", -1),
                            RD_KAFKA_V_HEADER("apns-id", "6f1f3c2e-0000-4000-8000-000000000000", -1), RD_KAFKA_V_END);
                        if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) { rd_kafka_poll(p, 10); continue; }
                        if (e) die("preload produce", rd_kafka_err2str(e));
                        break;
                }
                rd_kafka_poll(p, 0);
        }
        if (rd_kafka_flush(p, 60000)) die("preload flush timed out", NULL);
        rd_kafka_destroy(p);
        free(value);
}

/* CPU (user + system, seconds) of each thread of this process, summed by thread name. */
static void print_threads(void) {
        DIR *d = opendir("/proc/self/task");
        struct dirent *e;
        char names[64][20];
        double cpu[64];
        int n = 0;
        long tick = sysconf(_SC_CLK_TCK);
        while (d && (e = readdir(d))) {
                if (e->d_name[0] == '.') continue;
                char path[300], buf[1024];
                snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
                FILE *f = fopen(path, "r");
                if (!f) continue;
                size_t len = fread(buf, 1, sizeof buf - 1, f);
                fclose(f);
                buf[len] = 0;
                char *open = strchr(buf, '('), *close = strrchr(buf, ')');
                if (!open || !close) continue;
                char name[20];
                snprintf(name, sizeof name, "%.*s", (int)(close - open - 1), open + 1);
                /* Strip a trailing broker id's digits and addresses: "rdk:broker2" → "rdk:broker". */
                if (!strncmp(name, "rdk:broker", 10)) name[10] = 0;
                unsigned long ut = 0, st = 0;
                char *p = close + 2;
                for (int field = 3; field < 14 && p; field++) p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
                if (p) sscanf(p, "%lu %lu", &ut, &st);
                int i;
                for (i = 0; i < n && strcmp(names[i], name); i++) {}
                if (i == n && n < 64) { snprintf(names[n], 20, "%s", name); cpu[n++] = 0; }
                if (i < 64) cpu[i] += (double)(ut + st) / tick;
        }
        if (d) closedir(d);
        fprintf(stderr, "threads:");
        for (int i = 0; i < n; i++) fprintf(stderr, " %s %.2f s;", names[i], cpu[i]);
        fprintf(stderr, "\n");
}

int main(int argc, char **argv) {
        int broker_mode = 0, worker_mode = 0;
        const char *bootstrap = NULL, *broker_exe = NULL, *group_name = NULL;
        for (int i = 1; i < argc; i++) {
                const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
                if (!strcmp(a, "--broker")) broker_mode = 1;
                else if (!strcmp(a, "--worker")) worker_mode = 1;
                else if (!strcmp(a, "-t")) show_threads = 1;
                else if (!v) die("missing value after", a);
                else if (!strcmp(a, "-n")) records = atol(v), i++;
                else if (!strcmp(a, "-s")) value_size = atol(v), i++;
                else if (!strcmp(a, "-p")) partitions = atoi(v), i++;
                else if (!strcmp(a, "-f")) max_in_flight = atol(v), i++;
                else if (!strcmp(a, "--bootstrap")) bootstrap = v, i++;
                else if (!strcmp(a, "--broker-exe")) broker_exe = v, i++;
                else if (!strcmp(a, "--group")) group_name = v, i++;
                else if (!strcmp(a, "--input")) in_topic = v, i++;
                else if (!strcmp(a, "--output")) out_topic = v, i++;
                else if (!strcmp(a, "-C") && n_consumer_props < MAX_PROPS) consumer_props[n_consumer_props++] = v, i++;
                else if (!strcmp(a, "-P") && n_producer_props < MAX_PROPS) producer_props[n_producer_props++] = v, i++;
                else if (!strcmp(a, "-X") && n_consumer_props < MAX_PROPS && n_producer_props < MAX_PROPS)
                        consumer_props[n_consumer_props++] = producer_props[n_producer_props++] = v, i++;
                else die("unknown argument", a);
        }
        if (value_size < 32 || records < 1) die("-s must be at least 32 and -n at least 1", NULL);
        if (broker_mode) return run_broker();

        if (worker_mode && (!bootstrap || !group_name)) die("--worker needs --bootstrap and --group", NULL);
        if (worker_mode) {
                struct sigaction term = {0};
                term.sa_handler = on_term;
                sigaction(SIGTERM, &term, NULL);
                sigaction(SIGINT, &term, NULL);
        }

        pid_t broker_pid = 0;
        int keepalive = -1;
        if (!bootstrap) {
                char self[4096];
                ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
                if (len <= 0) die("readlink /proc/self/exe", strerror(errno));
                self[len] = 0;
                bootstrap = start_broker(broker_exe ? broker_exe : self, &broker_pid, &keepalive);
        }
        if (!worker_mode) preload(bootstrap);

        char err[512], group[256];
        if (group_name) snprintf(group, sizeof group, "%s", group_name);
        else snprintf(group, sizeof group, "c-floor-%d", (int)getpid());
        double u0, s0, u1, s1, u2, s2, u3, s3;
        CALLGRIND_ZERO_STATS;
        double t0 = now_seconds(), t_first = 0, t_last = 0;
        cpu_seconds(&u0, &s0);

        rd_kafka_conf_t *cc = rd_kafka_conf_new();
        set(cc, "bootstrap.servers", bootstrap);
        set(cc, "group.id", group);
        set(cc, "auto.offset.reset", "earliest");
        set(cc, "partition.assignment.strategy", "cooperative-sticky");
        set(cc, "fetch.wait.max.ms", "10");
        set(cc, "session.timeout.ms", "6000");
        set(cc, "heartbeat.interval.ms", "500");
        set_all(cc, consumer_props, n_consumer_props);
        rd_kafka_conf_set_stats_cb(cc, on_stats);
        rd_kafka_t *consumer = rd_kafka_new(RD_KAFKA_CONSUMER, cc, err, sizeof err);
        if (!consumer) die("consumer", err);
        rd_kafka_poll_set_consumer(consumer);

        rd_kafka_conf_t *pc = rd_kafka_conf_new();
        set(pc, "bootstrap.servers", bootstrap);
        set(pc, "enable.idempotence", "true");
        set(pc, "acks", "all");
        set(pc, "linger.ms", "5");
        set_all(pc, producer_props, n_producer_props);
        rd_kafka_conf_set_dr_msg_cb(pc, on_delivery);
        rd_kafka_t *producer = rd_kafka_new(RD_KAFKA_PRODUCER, pc, err, sizeof err);
        if (!producer) die("producer", err);

        rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
        rd_kafka_topic_partition_list_add(topics, in_topic, RD_KAFKA_PARTITION_UA);
        rd_kafka_resp_err_t e = rd_kafka_subscribe(consumer, topics);
        if (e) die("subscribe", rd_kafka_err2str(e));
        rd_kafka_topic_partition_list_destroy(topics);

        long consumed = 0, pauses = 0;
        int paused = 0;
        double deadline = t0 + 600;
        /* The worker takes records until SIGTERM; the measured run until every record is delivered. */
        if (worker_mode) records = LONG_MAX;
        while (worker_mode ? !stopping : delivered + failed < records) {
                if (!worker_mode && now_seconds() > deadline) die("not done within 600 s", NULL);
                if (max_in_flight) {
                        long in_flight = consumed - delivered - failed;
                        if ((!paused && in_flight >= max_in_flight) || (paused && in_flight <= max_in_flight / 2)) {
                                rd_kafka_topic_partition_list_t *assigned = NULL;
                                if (!rd_kafka_assignment(consumer, &assigned)) {
                                        if (paused) rd_kafka_resume_partitions(consumer, assigned);
                                        else rd_kafka_pause_partitions(consumer, assigned), pauses++;
                                        paused = !paused;
                                        rd_kafka_topic_partition_list_destroy(assigned);
                                }
                        }
                        if (paused) { rd_kafka_poll(producer, 1); continue; }
                }
                rd_kafka_message_t *m = consumed < records ? rd_kafka_consumer_poll(consumer, 100) : NULL;
                if (m) {
                        if (m->err) {
                                if (m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                                        fprintf(stderr, "c-floor: consumer: %s\n", rd_kafka_message_errstr(m));
                                rd_kafka_message_destroy(m);
                                continue;
                        }
                        if (!consumed++) { t_first = now_seconds(); cpu_seconds(&u1, &s1); }
                        rd_kafka_headers_t *headers = NULL;
                        if (rd_kafka_message_headers(m, &headers) == RD_KAFKA_RESP_ERR_NO_ERROR)
                                headers = rd_kafka_headers_copy(headers);
                        for (;;) {
                                e = rd_kafka_producev(
                                    producer, RD_KAFKA_V_TOPIC(out_topic), RD_KAFKA_V_KEY(m->key, m->key_len),
                                    RD_KAFKA_V_VALUE(m->payload, m->len), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                    RD_KAFKA_V_HEADERS(headers), RD_KAFKA_V_END);
                                if (e == RD_KAFKA_RESP_ERR__QUEUE_FULL) { rd_kafka_poll(producer, 10); continue; }
                                if (e) die("produce", rd_kafka_err2str(e));
                                break;
                        }
                        rd_kafka_message_destroy(m);
                        rd_kafka_poll(producer, 0);
                } else {
                        rd_kafka_poll(producer, consumed < records ? 0 : 10);
                }
        }
        t_last = now_seconds();
        cpu_seconds(&u2, &s2);
        if (show_threads) print_threads();
        rd_kafka_consumer_close(consumer);
        rd_kafka_destroy(consumer);
        rd_kafka_flush(producer, 10000);
        rd_kafka_destroy(producer);
        double t_end = now_seconds();
        cpu_seconds(&u3, &s3);
        CALLGRIND_DUMP_STATS_AT("measured: join, loop, close");

        if (worker_mode) records = consumed > 0 ? consumed : 1;
        double loop = t_last - t_first, total_cpu = (u3 - u0) + (s3 - s0), loop_cpu = (u2 - u1) + (s2 - s1);
        printf("librdkafka %s: %ld records of %ld bytes, %ld failed; %.0f records/s (first to last); "
               "CPU first→last %.2f s user + %.2f s system = %.2f µs/record; "
               "whole run (join, loop, close) %.2f s wall, %.2f s user + %.2f s system = %.2f µs/record\n",
               rd_kafka_version_str(), records, value_size, failed, (records - 1) / (loop > 0 ? loop : 1e-9),
               u2 - u1, s2 - s1, loop_cpu / records * 1e6, t_end - t0, u3 - u0, s3 - s0, total_cpu / records * 1e6);
        if (max_in_flight)
                printf("intake gate: paused %ld times at %ld records in flight\n", pauses, max_in_flight);
        if (stats_count)
                printf("statistics: %ld documents, %ld bytes on average\n", stats_count, stats_bytes / stats_count);
        fflush(stdout);
        if (broker_pid) {
                /* The broker's own CPU, for reference (never part of the figures above). */
                struct rusage ru;
                close(keepalive);
                if (wait4(broker_pid, NULL, 0, &ru) == broker_pid)
                        printf("broker process (mock cluster, librdkafka of %s): %.2f s user + %.2f s system\n",
                               broker_exe ? broker_exe : "this binary", ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
                               ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6);
        }
        return failed ? 1 : 0;
}
