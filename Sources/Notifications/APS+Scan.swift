import JSON

extension APS {
    /// The rules of `check(_:)`, read off the bytes of an `aps` object at the scanner's cursor instead
    /// of a parsed tree: the same facts for a valid object.
    ///
    /// Anything `check(_:)` would refuse is `Unusual` here, without a message: the caller then runs
    /// `check(_:)` on the tree, which words the error. So only acceptance has to agree, and each
    /// branch below mirrors one of `check(_:)`.
    ///
    /// The facts go into `traits` (fresh), where the caller keeps them: returned, they were copied
    /// on the way out, and a copy of a category's string is a retain.
    static func scan(_ scanner: inout JSONScanner, into traits: inout Payload.Traits) throws(JSONScanner.Unusual) {
        var object = try scanner.openObject()
        while let key = try scanner.nextKey(&object) {
            switch PayloadKey(bytes: scanner.slice(key)) {
            case .alert:
                traits.hasAlert = true
                traits.hasAlertText = try scanAlert(&scanner, hidesViewButton: &traits.hidesViewButton)
            case .badge:
                let number = try scanInteger(&scanner)
                traits.hasBadge = true
                traits.badgeIsZero = isZero(scanner.slice(number))
                traits.badgeNumber = Payload.Traits.integer(scanner.slice(number))
            case .sound:
                try scanSound(&scanner)
                traits.hasSound = true
            case .contentAvailable:
                let number = try scanInteger(&scanner)
                traits.contentAvailable = isOne(scanner.slice(number))
            case .mutableContent:
                let number = try scanInteger(&scanner)
                traits.mutableContent = isOne(scanner.slice(number))
            case .category:
                let category = try scanner.readString()
                traits.category = scanner.string(category)
            case .threadID, .targetContentID, .filterCriteria, .attributesType, .inputPushChannel:
                _ = try scanner.readString()
            case .event:
                let event = try scanner.readString()
                guard ["start", "update", "end"].contains(scanner.string(event)) else { throw JSONScanner.Unusual() }
            case .timestamp, .staleDate, .dismissalDate, .inputPushToken:
                _ = try scanInteger(&scanner)
            case .contentState, .attributes:
                guard scanner.peek() == UInt8(ascii: "{") else { throw JSONScanner.Unusual() }
                try scanner.skipValue()
            case .contentChanged:
                switch scanner.peek() {
                case UInt8(ascii: "t"): traits.contentChanged = true
                case UInt8(ascii: "f"): break
                default: throw JSONScanner.Unusual()
                }
                try scanner.skipValue()
            case .interruptionLevel:
                // Compared as bytes; only an escaped value (rare) is decoded into a string first.
                let level = try scanner.readString()
                let named = level.isEscaped ? InterruptionLevel(rawValue: scanner.string(level)) : InterruptionLevel(utf8: scanner.slice(level.range))
                guard let interruptionLevel = named else { throw JSONScanner.Unusual() }
                traits.interruptionLevel = interruptionLevel
            case .relevanceScore:
                _ = try scanner.readNumber()
            default:
                // Unknown keys are kept and ignored.
                try scanner.skipValue()
            }
        }
    }

    /// `checkAlert`: a string, or an object of typed keys; whether it has text, and (in
    /// `hidesViewButton`) whether its `show-view` is false.
    private static func scanAlert(_ scanner: inout JSONScanner, hidesViewButton: inout Bool) throws(JSONScanner.Unusual) -> Bool {
        if scanner.peek() == UInt8(ascii: "\"") {
            // An escape always stands for at least one character, so raw emptiness is emptiness.
            let text = try scanner.readString()
            return !text.range.isEmpty
        }
        var hasText = false
        var object = try scanner.openObject()
        while let key = try scanner.nextKey(&object) {
            switch PayloadKey(bytes: scanner.slice(key)) {
            case .title, .subtitle, .body, .titleLocKey, .subtitleLocKey, .locKey:
                let text = try scanner.readString()
                if !text.range.isEmpty { hasText = true }
            case .launchImage:
                _ = try scanner.readString()
            case .titleLocArgs, .subtitleLocArgs, .locArgs:
                var array = try scanner.openArray()
                while try scanner.nextElement(&array) { _ = try scanner.readString() }
            case .showView:
                guard let first = scanner.peek(), first == UInt8(ascii: "t") || first == UInt8(ascii: "f") else {
                    throw JSONScanner.Unusual()
                }
                hidesViewButton = first == UInt8(ascii: "f")
                try scanner.skipValue()
            case .actionLocKey:
                guard let first = scanner.peek(), first == UInt8(ascii: "n") || first == UInt8(ascii: "\"") else {
                    throw JSONScanner.Unusual()
                }
                try scanner.skipValue()
            default:
                try scanner.skipValue()
            }
        }
        return hasText
    }

    /// `checkSound`: a name, or the object with `critical` (integer), `name` (string), `volume` (0 to 1).
    private static func scanSound(_ scanner: inout JSONScanner) throws(JSONScanner.Unusual) {
        if scanner.peek() == UInt8(ascii: "\"") {
            _ = try scanner.readString()
            return
        }
        var object = try scanner.openObject()
        while let key = try scanner.nextKey(&object) {
            switch PayloadKey(bytes: scanner.slice(key)) {
            case .critical: _ = try scanInteger(&scanner)
            case .name: _ = try scanner.readString()
            case .volume:
                let number = try scanner.readNumber()
                guard isVolume(scanner.slice(number.range)) else { throw JSONScanner.Unusual() }
            default: try scanner.skipValue()
            }
        }
    }

    /// Whether JSON number text is a volume, 0 to 1, as `JSONNumber.doubleValue` reads it (the tree's
    /// rule). Decided from the text when it has no sign and no exponent; otherwise through `Double`.
    static func isVolume(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        let hasSignOrExponent = text.contains { $0 == UInt8(ascii: "-") || $0 | 0x20 == UInt8(ascii: "e") }
        if !hasSignOrExponent, let first = text.first {
            switch first {
            // 0, or 0.x: at most 1 after rounding, too.
            case UInt8(ascii: "0"): return true
            // 1, or 1.0…0; 1.x with a digit above zero is above 1, unless rounding takes it to 1:
            // that and every other case of a leading 1 goes through `Double`.
            case UInt8(ascii: "1") where text.count == 1 || (text[1] == UInt8(ascii: ".") && text.dropFirst(2).allSatisfy { $0 == UInt8(ascii: "0") }):
                return true
            case UInt8(ascii: "1"): break
            // A leading 2 to 9: 2 and above (JSON has no leading zeros, and `-` was ruled out).
            default: return false
            }
        }
        let level = Double(String(decoding: text, as: UTF8.self)) ?? 0
        return level >= 0 && level <= 1
    }

    /// Reads an integer (a number without fraction or exponent), returning its text.
    private static func scanInteger(_ scanner: inout JSONScanner) throws(JSONScanner.Unusual) -> Range<Int> {
        let number = try scanner.readNumber()
        guard number.isInteger else { throw JSONScanner.Unusual() }
        return number.range
    }

    /// Whether integer text is zero: JSON integers have no leading zeros, so only `0` and `-0` are.
    private static func isZero(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        text.last == UInt8(ascii: "0") && (text.count == 1 || (text.count == 2 && text[0] == UInt8(ascii: "-")))
    }

    /// Whether integer text is exactly `1`, as `isOne` compares it.
    private static func isOne(_ text: UnsafeBufferPointer<UInt8>) -> Bool {
        text.count == 1 && text[0] == UInt8(ascii: "1")
    }
}
