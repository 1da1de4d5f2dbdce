import Foundation
import Notifications
import Testing

@Test func validRequestIsAccepted() throws {
    let record = RequestRecord(
        key: Array(String(repeating: "AB", count: 32).utf8),
        headers: [RecordHeader(name: "APNS-Topic", value: "com.example.app")],
        value: Array(#"{"aps":{"alert":"hi","badge":0},"x":[1.0,null,{"a":"\u00e9"}]}"#.utf8),
        source: RecordSource(topic: "notifications.requests", partition: 0, offset: 7)
    )
    let request = try RequestValidator().validate(record).get()
    #expect(request.deviceToken == String(repeating: "ab", count: 32))
    #expect(request.pushType == .alert)
    #expect(String(decoding: request.payload.serialized(), as: UTF8.self) == #"{"aps":{"alert":"hi","badge":0},"x":[1.0,null,{"a":"é"}]}"#)
    #expect(request.payload.badgeEffect(profile: .modern) == .clear)
}
