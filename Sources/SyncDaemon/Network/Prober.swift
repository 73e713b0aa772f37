import Dispatch
import SyncRemote
import SyncEngine

/// Reachability probes: a `HEAD` with a short timeout on its own queue and libcurl handle, so a probe
/// never waits behind a refresh. Any HTTP answer, even an error status, means the server is reachable;
/// a probe is only a hint that schedules a refresh, never a verdict on data (syncd(8) GUARANTEES 5).
///
/// `@unchecked Sendable`: the client is used only on `queue`.
final class Prober: @unchecked Sendable {
    private let queue = DispatchQueue(label: "syncd.probe")
    private let client: HTTPClient
    static let timeout: Duration = .seconds(5)

    init() {
        client = HTTPClient()
    }

    /// Probes `urls` one after another until one answers; reports on the probe queue.
    func probe(urls: [String], completion: @escaping @Sendable (Bool) -> Void) {
        queue.async { [self] in
            // Between probes no libcurl handle is kept: libcurl stays unloaded while the daemon is idle.
            defer { client.close() }
            for url in urls {
                var request = HTTPRequest(url: url)
                request.method = "HEAD"
                request.timeout = Prober.timeout
                request.maxBytes = 1 << 16
                if let head = try? client.perform(request, onBody: { _ in }), head.status > 0 || url.hasPrefix("file:") {
                    completion(true)
                    return
                }
            }
            completion(false)
        }
    }
}

