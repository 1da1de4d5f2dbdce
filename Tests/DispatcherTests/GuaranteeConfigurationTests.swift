import Dispatcher
import Testing

/// `dispatch.guarantee`: its default, the file and the environment, malformed values refused with
/// their key path, and the transactional properties the worker reserves.
@Suite("Delivery guarantee configuration")
struct GuaranteeConfigurationTests {
    @Test func atLeastOnceByDefault() throws {
        #expect(try Configuration(yaml: "", environment: [:]).dispatch.guarantee == .atLeastOnce)
    }

    @Test func exactlyOnceFromTheFileOrTheEnvironment() throws {
        #expect(try Configuration(yaml: "dispatch: {guarantee: exactly-once}", environment: [:]).dispatch.guarantee == .exactlyOnce)
        let fromEnvironment = try Configuration(
            yaml: "dispatch: {guarantee: at-least-once}",
            environment: ["NOTIFICATION_DISPATCHER_DISPATCH_GUARANTEE": "exactly-once"])
        #expect(fromEnvironment.dispatch.guarantee == .exactlyOnce)
    }

    @Test(arguments: ["exactly_once", "once", "", "true"])
    func malformedValueNamesTheKeyPath(value: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            try Configuration(yaml: "", environment: ["NOTIFICATION_DISPATCHER_DISPATCH_GUARANTEE": value])
        }
        #expect(error?.path == "NOTIFICATION_DISPATCHER_DISPATCH_GUARANTEE (dispatch.guarantee)")
        let inFile = #expect(throws: ConfigurationError.self) {
            try Configuration(yaml: "dispatch: {guarantee: \"\(value)\"}", environment: [:])
        }
        #expect(inFile?.path == "dispatch.guarantee")
    }

    @Test(arguments: ["transactional.id", "transaction.timeout.ms", "isolation.level"])
    func transactionalPropertiesAreReserved(property: String) throws {
        let error = #expect(throws: ConfigurationError.self) {
            try Configuration(yaml: "kafka: {properties: {\(property): x}}", environment: [:])
        }
        #expect(error?.path == "kafka.properties[\"\(property)\"]")
    }
}
