import DispatcherService
import Logging
import Testing
import TestSupport

/// Two workers on one host with the same `http.port`: the second must say which setting to change,
/// not NIO's `bind(descriptor:ptr:bytes:)` errno.
@Suite struct OperationsServerPortTests {
    @Test func aTakenPortStopsTheServerWithASentenceNamingTheSetting() async throws {
        let logger = Logger(label: "operations-port-test")
        let bound = LockedPort()
        let first = OperationsServer(
            host: "127.0.0.1", port: 0, export: PrometheusExport(), health: WorkerHealth(livenessLimit: .seconds(60)),
            logger: logger, onListening: { bound.set($0) })
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await first.run() }
            try await eventually("the first server to listen") { bound.value != 0 }
            let second = OperationsServer(
                host: "127.0.0.1", port: bound.value, export: PrometheusExport(),
                health: WorkerHealth(livenessLimit: .seconds(60)), logger: logger)
            do {
                try await second.run()
                Issue.record("the second server ran on a taken port")
            } catch let error as OperationsServer.PortInUse {
                #expect(error.port == bound.value)
                #expect(error.description.contains("http.port \(bound.value) on 127.0.0.1 is already in use"))
                #expect(error.description.contains("NOTIFICATION_DISPATCHER_HTTP_PORT"))
            }
            group.cancelAll()
            try? await group.waitForAll()
        }
    }
}
