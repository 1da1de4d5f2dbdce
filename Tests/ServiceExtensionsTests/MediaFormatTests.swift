import Testing
import TestSupport

@testable import ServiceExtensions

/// Recognising media formats from their first bytes and `Content-Type`, as pure values.
@Suite struct MediaFormatTests {
    @Test(arguments: MediaSamples.supported)
    func everySampleIsRecognised(sample: MediaSamples.Sample) throws {
        let declared = ContentTypeHeader(sample.contentType).kind
        let format = try #require(MediaFormat.sniff(Array(sample.bytes.prefix(MediaFormat.sniffLength)), declaredKind: declared))
        #expect(format.uniformTypeIdentifier == sample.uniformTypeIdentifier)
    }

    @Test func anMPEG4ContainerIsAudioWhenItsBrandOrContentTypeSaysSo() {
        let isom = Array(MediaSamples.mp4.prefix(16))
        #expect(MediaFormat.sniff(isom, declaredKind: nil) == .mp4)
        #expect(MediaFormat.sniff(isom, declaredKind: .video) == .mp4)
        #expect(MediaFormat.sniff(isom, declaredKind: .audio) == .m4a)
        #expect(MediaFormat.sniff(Array(MediaSamples.m4a.prefix(16)), declaredKind: nil) == .m4a)
    }

    @Test(arguments: [
        [UInt8](), [0xFF, 0xD8], Array("<!DOCTYPE html>".utf8), Array("%PDF-1.7".utf8), Array("RIFF\0\0\0\0WEBPVP8 ".utf8),
        [0, 0, 0, 0x14] + Array("ftypqt  ".utf8), [0x00, 0x00, 0x01, 0xBA, 0x00], [0xFF, 0xFF, 0x00, 0x00],
        Array("FORM\0\0\0\0ILBM".utf8),
    ])
    func otherBytesAreNotMedia(head: [UInt8]) {
        #expect(MediaFormat.sniff(head, declaredKind: nil) == nil)
    }

    @Test(arguments: [
        (String?.none, ContentTypeHeader.unspecified), ("application/octet-stream", .unspecified), ("", .unspecified),
        ("image/png", .media(.image)), ("IMAGE/JPEG; charset=binary", .media(.image)), ("audio/x-wav", .media(.audio)),
        ("video/mp4", .media(.video)), ("text/html; charset=utf-8", .other("text/html")), ("application/json", .other("application/json")),
    ])
    func contentTypesAreClassified(value: String?, expected: ContentTypeHeader) {
        #expect(ContentTypeHeader(value) == expected)
    }

    @Test func everyKindHasApplesLimit() {
        #expect(MediaKind.image.defaultMaxBytes == 10_000_000)
        #expect(MediaKind.audio.defaultMaxBytes == 5_000_000)
        #expect(MediaKind.video.defaultMaxBytes == 50_000_000)
    }
}
