/// A media format an attachment may have (the ones Apple's `UNNotificationAttachment` supports),
/// recognised from the file's first bytes and the server's `Content-Type`.
enum MediaFormat: String, Sendable, Hashable, CaseIterable {
    case jpeg, gif, png
    case aiff, wav, mp3, m4a
    case mpeg, mpeg2, mp4, avi

    /// How many leading bytes `sniff` needs to decide (fewer are fine when the body is shorter).
    static let sniffLength = 16

    /// The kind, which decides the size limit.
    var kind: MediaKind {
        switch self {
        case .jpeg, .gif, .png: .image
        case .aiff, .wav, .mp3, .m4a: .audio
        case .mpeg, .mpeg2, .mp4, .avi: .video
        }
    }

    /// The uniform type identifier put in the attachment's `type`.
    var uniformTypeIdentifier: String {
        switch self {
        case .jpeg: "public.jpeg"
        case .gif: "com.compuserve.gif"
        case .png: "public.png"
        case .aiff: "public.aiff-audio"
        case .wav: "com.microsoft.waveform-audio"
        case .mp3: "public.mp3"
        case .m4a: "public.mpeg-4-audio"
        case .mpeg: "public.mpeg"
        case .mpeg2: "public.mpeg-2-video"
        case .mp4: "public.mpeg-4"
        case .avi: "public.avi"
        }
    }

    /// The file name extension of stored files (the device decides the type by it too).
    var fileExtension: String {
        switch self {
        case .jpeg: "jpg"
        case .gif: "gif"
        case .png: "png"
        case .aiff: "aiff"
        case .wav: "wav"
        case .mp3: "mp3"
        case .m4a: "m4a"
        case .mpeg: "mpg"
        case .mpeg2: "m2v"
        case .mp4: "mp4"
        case .avi: "avi"
        }
    }

    /// The format `head` (the body's first bytes) shows, using the kind `Content-Type` names to tell
    /// MPEG-4 audio from video when the container's brand does not; nil when it is none of ours.
    static func sniff(_ head: [UInt8], declaredKind: MediaKind?) -> MediaFormat? {
        func starts(_ magic: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + magic.count && head[offset..<(offset + magic.count)].elementsEqual(magic)
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("FORM".utf8)), starts(Array("AIFF".utf8), at: 8) || starts(Array("AIFC".utf8), at: 8) {
            return .aiff
        }
        if starts(Array("RIFF".utf8)) {
            if starts(Array("WAVE".utf8), at: 8) { return .wav }
            if starts(Array("AVI ".utf8), at: 8) { return .avi }
            return nil
        }
        if starts(Array("ID3".utf8)) { return .mp3 }
        // An MPEG-1/2 audio frame header: 11 sync bits, then a layer field of 01 (Layer III).
        if head.count >= 2, head[0] == 0xFF, head[1] & 0xE0 == 0xE0, (head[1] >> 1) & 0x03 == 0x01 { return .mp3 }
        if starts([0x00, 0x00, 0x01, 0xBA]) {
            // A program stream pack header: `01` after the start code marks MPEG-2, `0010` MPEG-1.
            guard head.count > 4 else { return nil }
            if head[4] & 0xC0 == 0x40 { return .mpeg2 }
            if head[4] & 0xF0 == 0x20 { return .mpeg }
            return nil
        }
        if starts([0x00, 0x00, 0x01, 0xB3]) { return .mpeg }
        if starts(Array("ftyp".utf8), at: 4), head.count >= 12 {
            let brand = String(decoding: head[8..<12], as: UTF8.self)
            switch brand {
            case "M4A ", "M4B ": return .m4a
            case "qt  ": return nil  // QuickTime movies are not among the attachment formats.
            default: return declaredKind == .audio ? .m4a : .mp4
            }
        }
        return nil
    }
}
