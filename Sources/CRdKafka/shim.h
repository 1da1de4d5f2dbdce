#ifndef CRDKAFKA_SHIM_H
#define CRDKAFKA_SHIM_H
// librdkafka's public API and its embedded mock cluster (the embedded broker).
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>
#endif
