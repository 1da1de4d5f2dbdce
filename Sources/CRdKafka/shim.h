#ifndef CRDKAFKA_SHIM_H
#define CRDKAFKA_SHIM_H
// librdkafka's public API and its embedded mock cluster (the embedded broker).
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

// rd_kafka_mock_broker_push_request_error_rtts is variadic, which Swift does not import: this
// pushes one error code (RD_KAFKA_RESP_ERR_NO_ERROR: the request succeeds) and the time its
// response is held back, for the next request of `api_key` that broker `broker_id` receives.
static inline rd_kafka_resp_err_t crdkafka_mock_broker_push_request_error_rtt(
    rd_kafka_mock_cluster_t *mcluster, int32_t broker_id, int16_t api_key, rd_kafka_resp_err_t error, int rtt_ms) {
    return rd_kafka_mock_broker_push_request_error_rtts(mcluster, broker_id, api_key, 1, error, rtt_ms);
}
#endif
