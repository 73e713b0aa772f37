internal import Glibc

/// The wall clock, for timestamps shown to people.
public func currentTimestamp() -> Timestamp {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Timestamp(secondsSinceEpoch: Int64(now.tv_sec))
}
