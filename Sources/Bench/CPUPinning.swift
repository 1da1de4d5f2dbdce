#if canImport(Glibc)
import Glibc
#endif

/// Keeps the calling thread, and the processes it starts from then on, on the CPU it runs on now.
///
/// `bench validation` times the validator and CPython's `json.loads` in alternating slices; on a
/// shared machine one core can run at two thirds of the other's speed for minutes, and the two sides
/// then measured the cores as much as themselves (one binary's ratio 1.7× to 2.8× run to run). On
/// one core both sides meet the same neighbours.
///
/// `sched_getcpu` and `sched_setaffinity` are GNU extensions the Glibc module does not declare,
/// so they are looked up by name, as `SpawnedProcess` looks up its own.
enum CPUPinning {
    private typealias GetCPU = @convention(c) () -> Int32
    private typealias SetAffinity = @convention(c) (Int32, Int, UnsafeRawPointer) -> Int32

    private static let getCPU: GetCPU? = dlsym(nil, "sched_getcpu").map { unsafeBitCast($0, to: GetCPU.self) }
    private static let setAffinity: SetAffinity? = dlsym(nil, "sched_setaffinity").map { unsafeBitCast($0, to: SetAffinity.self) }

    /// Pins the calling thread to its current CPU; that CPU, or nil where the system cannot (then
    /// nothing changed).
    static func pinToCurrentCPU() -> Int32? {
        guard let getCPU, let setAffinity else { return nil }
        let cpu = getCPU()
        // A CPU set of 1,024 bits, glibc's `cpu_set_t`: one bit per CPU.
        var mask = [UInt8](repeating: 0, count: 128)
        guard cpu >= 0, Int(cpu) < mask.count * 8 else { return nil }
        mask[Int(cpu) / 8] = 1 << (UInt8(cpu) % 8)
        let status = mask.withUnsafeBytes { setAffinity(0, $0.count, $0.baseAddress!) }
        return status == 0 ? cpu : nil
    }
}
