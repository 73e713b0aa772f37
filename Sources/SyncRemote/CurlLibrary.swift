internal import CCurl
internal import CShim
import Synchronization

/// libcurl, loaded with `dlopen` while something uses it and unloaded when the last user is done
/// (docs/architecture.md, "libcurl on demand"): an idle daemon does not keep libcurl and the ~30 libraries it
/// brings mapped (about 10 MiB resident, docs/benchmarks.md "Daemon memory").
///
/// Every `HTTPClient` with a connection handle and every URL parse holds a reference; the first reference
/// opens the library and runs `curl_global_init`, the last one's release runs `curl_global_cleanup` and
/// `dlclose`. The count is process-wide for one library name (`shared`) and protected by a mutex.
///
/// A library that `lingers` (the daemon's) stays loaded after its last user until `unloadIfIdle` is called
/// with no use since a given `releases` count: refreshes that follow each other closely (a reconnect's burst, a
/// delta after a push) load it once, not each, and the idle daemon still has it unmapped (about 7 ms of
/// `dlopen`, relocation and `dlclose` per load here; docs/benchmarks.md, "Incremental pull").
final class CurlLibrary: Sendable {
    /// The library every client and URL parse uses.
    static let shared = CurlLibrary(name: "libcurl.so.4")

    /// What `dlopen` is given: a soname, or a path (tests load a copy of their own).
    let name: String
    private let state = Mutex<State>(State())

    private struct State {
        var api: LoadedAPI?
        var references = 0
        /// The last release keeps the library loaded (`lingers`).
        var lingers = false
        /// Releases so far: a use between two looks changes it.
        var releases: UInt64 = 0
    }

    /// Where the library stands, for `unloadIfIdle`.
    enum Use: Equatable {
        /// Not loaded.
        case unloaded
        /// Loaded and held, or used since the count the caller gave.
        case inUse(releases: UInt64)
        /// Loaded, held by no one, not used since the count the caller gave.
        case idle(releases: UInt64)
    }

    /// The table of an opened copy (`cshim_curl`): written once by `cshim_curl_open`, then only read, from any thread.
    private struct LoadedAPI: @unchecked Sendable { let pointer: OpaquePointer }

    init(name: String) { self.name = name }

    /// Takes a reference, loading the library first when there was none; balance with `release()`.
    func acquire() throws(HTTPError) -> OpaquePointer {
        let result: Result<LoadedAPI, HTTPError> = state.withLock { state in
            if let api = state.api {
                state.references += 1
                return .success(api)
            }
            var error = [CChar](repeating: 0, count: 512)
            guard let api = cshim_curl_open(name, &error, error.count) else {
                let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                return .failure(.transport(code: Int32(CURLE_FAILED_INIT.rawValue),
                                           message: "Failed to load libcurl (\(name)): \(reason); install the libcurl4 package"))
            }
            state.api = LoadedAPI(pointer: api)
            state.references = 1
            return .success(LoadedAPI(pointer: api))
        }
        return try result.get().pointer
    }

    /// Gives a reference back; the last one unloads the library, unless it `lingers`.
    func release() {
        state.withLock { state in
            precondition(state.references > 0, "CurlLibrary.release() without acquire()")
            state.references -= 1
            state.releases &+= 1
            guard state.references == 0, !state.lingers else { return }
            Self.unload(&state)
        }
    }

    /// Whether the last release keeps the library loaded; turned off, an unused library is unloaded at once.
    func setLingering(_ lingers: Bool) {
        state.withLock { state in
            state.lingers = lingers
            if !lingers, state.references == 0 { Self.unload(&state) }
        }
    }

    /// Where the library stands against `releases` (the count an earlier look returned; nil: any use counts).
    func use(since releases: UInt64? = nil) -> Use {
        state.withLock { state in Self.use(of: state, since: releases) }
    }

    /// Unloads the library when it is `idle` since `releases` (the count a look `quietPeriod` ago returned), and
    /// says where it stood: `.idle` means it was unloaded now.
    func unloadIfIdle(since releases: UInt64) -> Use {
        state.withLock { state in
            let use = Self.use(of: state, since: releases)
            if case .idle = use { Self.unload(&state) }
            return use
        }
    }

    private static func use(of state: State, since releases: UInt64?) -> Use {
        guard state.api != nil else { return .unloaded }
        if state.references > 0 || (releases.map { $0 != state.releases } ?? false) { return .inUse(releases: state.releases) }
        return .idle(releases: state.releases)
    }

    private static func unload(_ state: inout State) {
        guard let api = state.api else { return }
        state.api = nil
        cshim_curl_close(api.pointer)
    }

    /// Runs `body` with the library loaded (a reference held for its duration).
    func using<T>(_ body: (OpaquePointer) throws(HTTPError) -> T) throws(HTTPError) -> T {
        let api = try acquire()
        defer { release() }
        return try body(api)
    }

    /// Runs `body` while the library is not loaded, holding the lock so that no transfer loads it meanwhile
    /// (no `dlopen` maps and relocates a library while `body` runs); nil without running it when it is loaded.
    func whileUnloaded<T>(_ body: () -> T) -> T? {
        state.withLock { state in state.api == nil ? body() : nil }
    }

    /// The number of references held (tests).
    var references: Int { state.withLock { $0.references } }
}
