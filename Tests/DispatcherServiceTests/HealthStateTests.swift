import DispatcherService
import Testing

@Suite("Health state: liveness and readiness as pure values")
struct HealthStateTests {
    let start = ContinuousClock.now

    @Test("ready only once the group is joined and the producer connected, and no longer once shutdown began")
    func readiness() {
        var state = HealthState(livenessLimit: .seconds(30), start: start)
        #expect(!state.readiness().isHealthy)
        state.producerConnected()
        #expect(!state.readiness().isHealthy, "producer alone is not enough")
        state.joinedGroup()
        #expect(state.readiness() == HealthState.Verdict(isHealthy: true, reason: "ready"))
        state.shutdownBegan()
        #expect(state.readiness() == HealthState.Verdict(isHealthy: false, reason: "shutting down"))
    }

    @Test("joined but the producer not connected: not ready")
    func joinedWithoutProducer() {
        var state = HealthState(livenessLimit: .seconds(30), start: start)
        state.joinedGroup()
        #expect(state.readiness().reason == "producer not yet connected")
    }

    @Test("live while the poll loop runs within the limit; dead when it stalls past it; live again when it runs")
    func liveness() {
        var state = HealthState(livenessLimit: .seconds(30), start: start)
        #expect(state.liveness(at: start + .seconds(30)).isHealthy)
        #expect(!state.liveness(at: start + .seconds(31)).isHealthy)
        state.loopRan(at: start + .seconds(20))
        #expect(state.liveness(at: start + .seconds(49)).isHealthy)
        let stalled = state.liveness(at: start + .seconds(51))
        #expect(!stalled.isHealthy)
        #expect(stalled.reason.hasPrefix("poll loop has not run for"))
        // An earlier report never moves the last run back.
        state.loopRan(at: start + .seconds(5))
        #expect(state.lastLoop == start + .seconds(20))
    }

    @Test("a fatal Kafka error fails liveness and readiness, whatever the poll loop does")
    func fatalError() {
        var state = HealthState(livenessLimit: .seconds(30), start: start)
        state.joinedGroup()
        state.producerConnected()
        state.failed("fenced")
        state.loopRan(at: start + .seconds(1))
        #expect(state.liveness(at: start + .seconds(1)) == HealthState.Verdict(isHealthy: false, reason: "stopped by a fatal error: fenced"))
        #expect(!state.readiness().isHealthy)
        state.failed("later")
        #expect(state.fatalError == "fenced", "the first fatal error is the one reported")
    }

    @Test("a stalled partition fails readiness (naming it) but not liveness, until a check finds none")
    func stalledPartition() {
        var state = HealthState(livenessLimit: .seconds(30), start: start)
        state.joinedGroup()
        state.producerConnected()
        #expect(state.readiness().isHealthy)
        state.partitionsStalled(["notifications.requests[3]"])
        let verdict = state.readiness()
        #expect(!verdict.isHealthy)
        #expect(verdict.reason.contains("notifications.requests[3]"))
        #expect(state.liveness(at: start + .seconds(1)).isHealthy)
        state.partitionsStalled([])
        #expect(state.readiness().isHealthy)
    }
}
