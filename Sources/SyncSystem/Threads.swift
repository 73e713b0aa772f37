internal import Glibc

/// Starts a detached thread named `name` (its first 15 bytes: `/proc/PID/task/TID/comm`, `ps -L`) running `body`.
public func startThread(name: String, _ body: @escaping @Sendable () -> Void) throws(SystemError) {
    final class Box: @unchecked Sendable {  // handed to the new thread once, never shared
        let name: String
        let body: @Sendable () -> Void
        init(_ name: String, _ body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
    }
    var thread = pthread_t()
    let context = Unmanaged.passRetained(Box(name, body)).toOpaque()
    let result = pthread_create(&thread, nil, { raw in
        guard let raw else { return nil }
        let box = Unmanaged<Box>.fromOpaque(raw).takeRetainedValue()
        ThreadName.setCurrent(box.name)
        box.body()
        return nil
    }, context)
    guard result == 0 else {
        Unmanaged<Box>.fromOpaque(context).release()
        throw SystemError("create the \(name) thread", code: result)
    }
    pthread_detach(thread)
}
