/// Small files of every supported format (their real leading bytes, then filler), and a few that
/// are not media, for the attachment tests.
public enum MediaSamples {
    /// One sample: its name in URLs, bytes, the `Content-Type` served, and the type expected.
    public struct Sample: Sendable, CustomStringConvertible {
        public let name: String
        public let bytes: [UInt8]
        public let contentType: String?
        public let uniformTypeIdentifier: String
        public var description: String { name }
    }

    /// `head` followed by `count` filler bytes derived from `seed` (so every sample hashes differently).
    public static func file(_ head: [UInt8], filler count: Int = 2_000, seed: UInt8 = 1) -> [UInt8] {
        head + (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ Int(seed)) }
    }

    public static func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }

    public static let jpeg = file([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x10] + ascii("JFIF") + [0], seed: 1)
    public static let gif = file(ascii("GIF89a") + [0x01, 0x00, 0x01, 0x00], seed: 2)
    public static let png = file([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A] + [0, 0, 0, 13] + ascii("IHDR"), seed: 3)
    public static let aiff = file(ascii("FORM") + [0, 0, 0x07, 0xD4] + ascii("AIFF") + ascii("COMM"), seed: 4)
    public static let wav = file(ascii("RIFF") + [0xD4, 0x07, 0, 0] + ascii("WAVE") + ascii("fmt "), seed: 5)
    public static let mp3ID3 = file(ascii("ID3") + [0x04, 0x00, 0x00, 0, 0, 0, 0], seed: 6)
    public static let mp3Frame = file([0xFF, 0xFB, 0x90, 0x64] + [UInt8](repeating: 0, count: 12), seed: 7)
    public static let m4a = file([0, 0, 0, 0x20] + ascii("ftyp") + ascii("M4A ") + [0, 0, 0, 0], seed: 8)
    public static let mpeg1 = file([0x00, 0x00, 0x01, 0xBA, 0x21, 0x00, 0x01, 0x00, 0x01, 0x80], seed: 9)
    public static let mpeg2 = file([0x00, 0x00, 0x01, 0xBA, 0x44, 0x00, 0x04, 0x00, 0x04, 0x01], seed: 10)
    public static let mp4 = file([0, 0, 0, 0x18] + ascii("ftyp") + ascii("isom") + [0, 0, 0x02, 0], seed: 11)
    public static let avi = file(ascii("RIFF") + [0xD4, 0x07, 0, 0] + ascii("AVI ") + ascii("LIST"), seed: 12)

    /// Every supported format, served with a matching `Content-Type` or a generic one.
    public static let supported: [Sample] = [
        Sample(name: "jpeg", bytes: jpeg, contentType: "image/jpeg", uniformTypeIdentifier: "public.jpeg"),
        Sample(name: "gif", bytes: gif, contentType: "image/gif", uniformTypeIdentifier: "com.compuserve.gif"),
        Sample(name: "png", bytes: png, contentType: "image/png", uniformTypeIdentifier: "public.png"),
        Sample(name: "aiff", bytes: aiff, contentType: "audio/aiff", uniformTypeIdentifier: "public.aiff-audio"),
        Sample(name: "wav", bytes: wav, contentType: "audio/wav", uniformTypeIdentifier: "com.microsoft.waveform-audio"),
        Sample(name: "mp3-id3", bytes: mp3ID3, contentType: "audio/mpeg", uniformTypeIdentifier: "public.mp3"),
        Sample(name: "mp3-frame", bytes: mp3Frame, contentType: nil, uniformTypeIdentifier: "public.mp3"),
        Sample(name: "m4a", bytes: m4a, contentType: "audio/mp4", uniformTypeIdentifier: "public.mpeg-4-audio"),
        Sample(name: "mpeg", bytes: mpeg1, contentType: "video/mpeg", uniformTypeIdentifier: "public.mpeg"),
        Sample(name: "mpeg2", bytes: mpeg2, contentType: "video/mpeg", uniformTypeIdentifier: "public.mpeg-2-video"),
        Sample(name: "mp4", bytes: mp4, contentType: "video/mp4", uniformTypeIdentifier: "public.mpeg-4"),
        Sample(name: "avi", bytes: avi, contentType: "application/octet-stream", uniformTypeIdentifier: "public.avi"),
    ]
}
