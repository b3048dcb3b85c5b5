// The only system calls FerryCompression makes.
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

enum System {
    /// The number of processors currently online (`sysconf(_SC_NPROCESSORS_ONLN)`), at least 1.
    static var activeProcessorCount: Int {
        max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN))))
    }
}
