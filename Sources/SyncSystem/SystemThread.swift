internal import Glibc
import Synchronization

/// A thread of its own, started with `pthread_create(3)`: the one place syncd starts one. The body runs once;
/// a `name` (its first 15 bytes) is set first (`ThreadName`), so that `ps -L` tells the threads apart.
/// Started `detached`, nothing waits for it; started joinable, `join()` waits for the body to return.
public final class SystemThread: Sendable {
    private let thread: pthread_t
    private let joined = Mutex(false)

    private init(_ thread: pthread_t) { self.thread = thread }

    /// Starts a thread running `body` that nothing joins (it ends with its body).
    /// Throws when the system refuses a thread (`EAGAIN`: the process or user limit).
    public static func detached(name: String? = nil, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
        let thread = try create(name: name, body)
        pthread_detach(thread)
    }

    /// Starts a thread running `body` that `join()` waits for; joined at most once.
    public static func joinable(name: String? = nil, _ body: @escaping @Sendable () -> Void) throws(SystemError) -> SystemThread {
        SystemThread(try create(name: name, body))
    }

    /// Waits for the body to return. Only the first call waits (`pthread_join` may be called once); any later
    /// one returns at once, even while the first still waits.
    public func join() {
        let first = joined.withLock { done in
            defer { done = true }
            return !done
        }
        if first { pthread_join(thread, nil) }
    }

    private static func create(name: String?, _ body: @escaping @Sendable () -> Void) throws(SystemError) -> pthread_t {
        final class Start {  // handed to the new thread once, never shared
            let name: String?
            let body: @Sendable () -> Void
            init(_ name: String?, _ body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
        }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Start(name, body)).toOpaque()
        let result = pthread_create(&thread, nil, { raw in
            guard let raw else { return nil }
            let start = Unmanaged<Start>.fromOpaque(raw).takeRetainedValue()
            if let name = start.name { ThreadName.setCurrent(name) }
            start.body()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            throw SystemError("create the \(name ?? "worker") thread", code: result)
        }
        return thread
    }
}
