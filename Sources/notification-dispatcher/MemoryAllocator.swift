#if canImport(Glibc)
import Glibc
#endif

/// Which `malloc` the process runs on.
///
/// The binary links jemalloc on Linux (Package.swift says why); this reads it back at run time,
/// so that `--version` says what runs, and a build or a container that lost the library (glibc's
/// `malloc` then serves, at about 8 % more CPU per record) shows it.
enum MemoryAllocator {
    /// `jemalloc 5.3.0`, or `glibc` when no jemalloc answers (the C library's `malloc`, unless
    /// another allocator was preloaded).
    static let name: String = {
        #if canImport(Glibc)
        // RTLD_DEFAULT: the symbol as the process resolves it, whichever library defines it.
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "mallctl") else { return "glibc" }
        typealias MallocControl = @convention(c) (
            UnsafePointer<CChar>, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?, UnsafeMutableRawPointer?, Int
        ) -> Int32
        let mallctl = unsafeBitCast(symbol, to: MallocControl.self)
        var version: UnsafePointer<CChar>? = nil
        var length = MemoryLayout<UnsafePointer<CChar>?>.size
        guard mallctl("version", &version, &length, nil, 0) == 0, let version else { return "jemalloc" }
        // "5.3.0-0-g54eaed1d…": the release, without the commit that built it.
        let release = String(cString: version).split(separator: "-").first.map(String.init) ?? ""
        return release.isEmpty ? "jemalloc" : "jemalloc \(release)"
        #else
        return "the system's malloc"
        #endif
    }()
}
