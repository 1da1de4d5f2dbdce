import Foundation

/// The executables the benchmarks start: this one (the bench's own helpers, `webhook` and the
/// counted passes of `validation --instructions`) and the product, `notification-dispatcher`, whose
/// `serve` is the contender, whose `broker` holds each contender's records and whose `dispatch` is
/// the soak's offline reference.
///
/// The product is looked for beside this binary: `swift build` writes every executable of the
/// package into one folder (`.build/release`), so a bench built with the product finds the build
/// it belongs to, whatever the current folder.
enum ProductBinary {
    /// The product's executable name.
    static let name = "notification-dispatcher"

    /// This executable's path, symbolic links resolved.
    static var ownPath: String { URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path }

    /// The product beside this binary.
    /// - Throws: ``BenchError`` naming where it looked and how to build it.
    static func beside() throws(BenchError) -> String {
        let path = URL(fileURLWithPath: ownPath).deletingLastPathComponent().appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw BenchError(
                "\(path) is not there: the benchmarks run the product beside this binary; build it with "
                    + "`swift build -c release --product \(name)` (or name another with --serve-binary where the subcommand takes it)")
        }
        return path
    }

    /// `given` (a subcommand's `--serve-binary`, e.g. an older build), else the product beside
    /// this binary.
    /// - Throws: ``BenchError`` when `given` is nil and no product is beside this binary.
    static func resolve(_ given: String?) throws(BenchError) -> String {
        if let given { return given }
        return try beside()
    }
}
