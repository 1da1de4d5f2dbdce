import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The HTTP endpoints of a running worker (`/metrics`, `/health/live`, `/health/ready`) on loopback.
struct OperationsEndpoint: Sendable {
    /// An HTTP answer.
    struct Answer: Sendable {
        var status: Int
        var body: String
    }

    /// The port the worker bound.
    let port: Int

    /// GETs `path`; connection failures throw.
    func get(_ path: String) async throws -> Answer {
        var request = URLRequest(url: URL(string: "http://127.0.0.1:\(port)\(path)")!)
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        return Answer(status: (response as? HTTPURLResponse)?.statusCode ?? 0, body: String(decoding: data, as: UTF8.self))
    }

    /// The samples of `/metrics`, by series (`name{labels}` exactly as exposed).
    func scrape() async throws -> PrometheusText {
        let answer = try await get("/metrics")
        guard answer.status == 200 else { throw UnexpectedStatus(path: "/metrics", status: answer.status) }
        return PrometheusText(answer.body)
    }

    /// An endpoint answered with a status the test did not expect.
    struct UnexpectedStatus: Error {
        var path: String
        var status: Int
    }
}

/// Prometheus text exposition parsed into samples: `series -> value`, where a series is the metric
/// name with its labels as exposed (`name{a="x",b="y"}`).
struct PrometheusText: Sendable {
    /// Every sample.
    let samples: [String: Double]

    init(_ text: String) {
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        self.samples = samples
    }

    /// The value of one series (0 when absent).
    subscript(_ series: String) -> Double { samples[series] ?? 0 }

    /// The series of metric `name` (without labels or with any), by series.
    func series(_ name: String) -> [String: Double] {
        samples.filter { $0.key == name || $0.key.hasPrefix(name + "{") }
    }

    /// The sum of every series of `name`.
    func sum(_ name: String) -> Double {
        series(name).values.reduce(0, +)
    }
}
