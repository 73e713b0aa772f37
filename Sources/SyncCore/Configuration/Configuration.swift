// The configuration model: plain values with the defaults of syncd.conf(5)
// ("Configuration"). Parsing lives in Configuration+Parsing.swift.

/// How conflicting local and remote changes to one record are settled.
public enum ConflictPolicy: String, Sendable, CaseIterable {
    /// The remote version is kept; the local change is dropped (and reported).
    case serverWins = "server-wins"
    /// The local change is pushed over the remote version.
    case clientWins = "client-wins"
    /// The change with the later version/timestamp wins.
    case lastWriteWins = "last-write-wins"
    /// Nothing is decided automatically; `syncctl resolve` settles it.
    case manual
}

/// How a source's listing is split over several responses.
public enum PaginationMode: String, Sendable, CaseIterable {
    /// One response holds the whole collection.
    case none
    /// Follow `Link: <...>; rel="next"` headers (RFC 8288).
    case link
    /// The next page's URL is in the body, at `NextPath=` (absolute or relative).
    case body
    /// The body holds an opaque token at `CursorPath=`; the next page is `URL=` with `CursorParameter=` set to it.
    case cursor
    /// Pages by number: `URL=` with `PageParameter=` set to 2, 3, …, until a short or empty page or `TotalPath=`.
    case page
    /// Pages by offset: `URL=` with `OffsetParameter=` advanced by the records received, until a short or
    /// empty page or `TotalPath=`.
    case offset
    /// The next page's URL (absolute or relative) is in the response header `NextHeader=` (Kinto: `Next-Page`).
    case header
}

/// One extra request header of a source, from `Header=Name: value`.
public struct HTTPHeader: Equatable, Sendable {
    /// The field name as written, e.g. `Accept`.
    public var name: String
    /// The field value, trimmed.
    public var value: String

    /// Creates a header.
    public init(name: String, value: String) {
        self.name = name
        self.value = value
    }
}

/// `[Daemon]`: who the data belongs to and where it is kept.
public struct DaemonSettings: Equatable, Sendable {
    /// `Account=`: whose data this is; cache and state are kept per account.
    public var account: String
    /// `StateDirectory=`: an absolute path, or nil for `$STATE_DIRECTORY` and the built-in default.
    public var stateDirectory: String?
    /// `CacheDirectory=`: an absolute path, or nil for `$CACHE_DIRECTORY` and the built-in default.
    public var cacheDirectory: String?
    /// `RuntimeDirectory=`: an absolute path, or nil for `$RUNTIME_DIRECTORY` and the built-in default.
    public var runtimeDirectory: String?
    /// `ControlGroup=`: members may refresh, read records and change data over the control socket
    /// (everything but `Logout` and `Reload`).
    public var controlGroup: String
    /// `ReadGroup=`: members may read records (`List`, `Get`, `Watch`, `Changes`) and the cache files,
    /// which belong to this group; nil (the default) means no such group, and the files belong to `ControlGroup=`.
    public var readGroup: String?

    /// The group the cache files and folders belong to: `ReadGroup=` if set, else `ControlGroup=`.
    public var cacheFileGroup: String { readGroup ?? controlGroup }

    /// Creates daemon settings; every argument defaults to the documented default.
    public init(
        account: String = "default", stateDirectory: String? = nil, cacheDirectory: String? = nil,
        runtimeDirectory: String? = nil, controlGroup: String = "syncd", readGroup: String? = nil
    ) {
        self.account = account
        self.stateDirectory = stateDirectory
        self.cacheDirectory = cacheDirectory
        self.runtimeDirectory = runtimeDirectory
        self.controlGroup = controlGroup
        self.readGroup = readGroup
    }
}

/// `[Network]`: how network changes are noticed.
public struct NetworkSettings: Equatable, Sendable {
    /// `WatchLinks=`: follow netlink link, address and route events.
    public var watchLinks: Bool
    /// `Interfaces=`: the interfaces that count; empty means every non-loopback interface.
    public var interfaces: [String]
    /// `ReachabilityURL=`: probed with HEAD; nil means each failing source's own URL.
    public var reachabilityURL: String?
    /// `ReachabilityIntervalSec=`: probe period while some source is failing; zero turns probing off.
    public var reachabilityInterval: Duration
    /// `DebounceSec=`: network events within this window cause one refresh.
    public var debounce: Duration

    /// Creates network settings; every argument defaults to the documented default.
    public init(
        watchLinks: Bool = true, interfaces: [String] = [], reachabilityURL: String? = nil,
        reachabilityInterval: Duration = .seconds(30), debounce: Duration = .seconds(2)
    ) {
        self.watchLinks = watchLinks
        self.interfaces = interfaces
        self.reachabilityURL = reachabilityURL
        self.reachabilityInterval = reachabilityInterval
        self.debounce = debounce
    }
}

/// `[Refresh]`: the periodic refresh while healthy.
public struct RefreshSettings: Equatable, Sendable {
    /// `IntervalSec=`: time between periodic refreshes; always positive.
    public var interval: Duration
    /// `RandomizedDelaySec=`: a random extra delay, from zero up to this, for periodic refreshes.
    public var randomizedDelay: Duration

    /// Creates refresh settings; every argument defaults to the documented default.
    public init(interval: Duration = .seconds(900), randomizedDelay: Duration = .seconds(30)) {
        self.interval = interval
        self.randomizedDelay = randomizedDelay
    }
}

/// `[Retry]`: exponential backoff after a failed refresh.
public struct RetrySettings: Equatable, Sendable {
    /// `InitialDelaySec=`: the first delay; always positive.
    public var initialDelay: Duration
    /// `MaxDelaySec=`: the cap on the delay; never below `initialDelay`.
    public var maxDelay: Duration
    /// `MaxAttempts=`: attempts per refresh cycle, at least 1; then the source rests until the next trigger.
    public var maxAttempts: Int

    /// Creates retry settings; every argument defaults to the documented default.
    public init(initialDelay: Duration = .seconds(1), maxDelay: Duration = .seconds(300), maxAttempts: Int = 8) {
        self.initialDelay = initialDelay
        self.maxDelay = maxDelay
        self.maxAttempts = maxAttempts
    }
}

/// One `[Source]`: a remote JSON collection mirrored into the cache.
public struct SourceConfiguration: Equatable, Sendable {
    /// `Name=`: `[A-Za-z0-9_.-]{1,64}`; defaults to the file stem.
    public var name: String
    /// `URL=`: an http, https or file URL, checked but kept as written.
    public var url: String
    /// `IDField=`: the member holding each record's ID (a string or an integer).
    public var idField: String
    /// `VersionField=`: the member holding a record's version, used for conflicts; nil if unset.
    public var versionField: String?
    /// `RecordsPath=` as reference tokens (RFC 6901, unescaped); `[]` means the document itself.
    public var recordsPath: [String]
    /// `RecordsPath=` as written, for messages.
    public var recordsPathText: String
    /// `Pagination=`.
    public var pagination: PaginationMode
    /// `Header=` lines, in order.
    public var headers: [HTTPHeader]
    /// `BearerTokenCredential=`: a file name inside `$CREDENTIALS_DIRECTORY`; nil for no token.
    public var bearerTokenCredential: String?
    /// `TimeoutSec=`: the limit for one request; always positive.
    public var timeout: Duration
    /// `MaxBytes=`: a larger response is rejected; always positive.
    public var maxBytes: Int64
    /// `MaxRecordBytes=`: a listing with a larger record is refused; from 1 to `maxServableRecordBytes`.
    public var maxRecordBytes: Int64 = SourceConfiguration.maxServableRecordBytes
    /// `AllowEmpty=`: whether an empty listing may replace a non-empty cache.
    public var allowEmpty: Bool
    /// `Writable=`: whether local changes are queued and pushed.
    public var writable: Bool
    /// `ConflictPolicy=`.
    public var conflictPolicy: ConflictPolicy
    /// `ItemURL=`: a template with `{id}` for one record's URL; nil derives it from `URL=` (see `ItemURL`).
    public var itemURLTemplate: String?
    /// `ClientIDField=`: a member in which the server keeps the client's ID of a created record; nil if unset.
    public var clientIDField: String?
    /// `SendClientID=`: whether a create's body carries the record's ID (`IDField=`); false lets the server
    /// assign it (docs/local-changes.md, "Server-assigned IDs").
    public var sendClientID = true
    /// `LostCreateWaitSec=` as set; nil when unset (see `lostCreateWait`).
    public var lostCreateWaitSetting: Duration? = nil
    /// How long after a create's request began whose answer was lost syncd waits before it may send it again
    /// when the listing does not show it: the server may still be working on the first request
    /// (docs/local-changes.md, "No duplicate creates"). `LostCreateWaitSec=`, by default twice `TimeoutSec=`
    /// and at least a minute.
    public var lostCreateWait: Duration { lostCreateWaitSetting ?? max(timeout * 2, .seconds(60)) }
    /// `DiscardedRetentionSec=`: how long a change a `ConflictPolicy=` discarded stays listed and restorable
    /// (docs/local-changes.md, "Discarded changes"); default 30 days, always positive.
    public var discardedRetention: Duration = .seconds(30 * 86_400)
    /// `NextPath=` as reference tokens: where `Pagination=body` finds the next page's URL (default `/next`).
    public var nextPath: [String] = ["next"]
    /// `NextPath=` as written, for messages.
    public var nextPathText: String = "/next"
    /// `CursorPath=` as reference tokens: where `Pagination=cursor` finds the next token; empty if unset.
    public var cursorPath: [String] = []
    /// `CursorPath=` as written, for messages.
    public var cursorPathText: String = ""
    /// `CursorParameter=`: the query parameter that carries the cursor (default `cursor`).
    public var cursorParameter: String = "cursor"
    /// `PageParameter=`: the query parameter of `Pagination=page` (default `page`).
    public var pageParameter: String = "page"
    /// `LimitParameter=`: the query parameter holding the page size of `Pagination=offset` (default `limit`).
    public var limitParameter: String = "limit"
    /// `OffsetParameter=`: the query parameter of `Pagination=offset` (default `offset`).
    public var offsetParameter: String = "offset"
    /// `TotalPath=` as reference tokens: where each page holds the collection's record count; empty if unset.
    public var totalPath: [String] = []
    /// `TotalPath=` as written, for messages.
    public var totalPathText: String = ""
    /// `HasMorePath=` as reference tokens: where a page says whether more follow (`false` = last); empty if unset.
    public var hasMorePath: [String] = []
    /// `HasMorePath=` as written, for messages.
    public var hasMorePathText: String = ""
    /// `NextHeader=`: the response header holding the next page's URL with `Pagination=header` (default `Next-Page`).
    public var nextHeader: String = "Next-Page"
    /// `RecordEnvelope=` as reference tokens: where one record sits in a single-record body (the item GET, the
    /// answers to POST and PUT), and how a write's body is wrapped; `[]` means the record is the whole body.
    public var recordEnvelope: [String] = []
    /// `RecordEnvelope=` as written, for messages.
    public var recordEnvelopeText: String = ""
    /// `MaxPages=`: more pages than this fail the refresh (default 10,000).
    public var maxPages: Int = 10_000
    /// `ListingTimeoutSec=`: the deadline for a whole refresh, its push and all pages of its listing together
    /// (default 10 min).
    public var listingTimeout: Duration = .seconds(600)
    /// `StagePagesAfterSec=`: a full listing's pages are staged for resuming once it has run this long (default
    /// 1 s; 0: from its first page); the pages before are held, at most `ListingResume.heldBeforeStaging` bytes
    /// (syncd.conf(5), "RESUMING A FIRST SYNC").
    public var stagePagesAfter: Duration = .seconds(1)
    /// `Delta=` and its keys: how refreshes after the first ask for changes only (syncd.conf(5), "Incremental pull").
    public var delta = DeltaSettings()
    /// `AllowedOrigins=`: origins besides `URL=`'s that pages and redirects may lead to (never given the token).
    public var allowedOrigins: [URLOrigin] = []
    /// Where the `[Source]` section began.
    public var location: SourceLocation

    /// The rule for this source's item URLs.
    public var itemURL: ItemURL { ItemURL(collectionURL: url, template: itemURLTemplate) }

    /// Where this source's requests may go and where its token may be sent.
    public var originPolicy: OriginPolicy { OriginPolicy(configuredURL: url, extraOrigins: allowedOrigins) }

    /// The largest record syncd serves, the default and the maximum of `MaxRecordBytes=`: 32 MiB. `syncctl get`
    /// and the control calls `Get` and `List` return a record whole, in one reply of at most 64 MiB
    /// (docs/control-api.md), which leaves room for the reply's own bytes and escapes.
    public static let maxServableRecordBytes: Int64 = 32 << 20

    /// The default for `MaxBytes=`: 256 MiB.
    public static let defaultMaxBytes: Int64 = 256 * 1024 * 1024

    /// Creates a source; every argument but the name, URL and location defaults to the documented default.
    public init(
        name: String, url: String, idField: String = "id", versionField: String? = nil,
        recordsPath: [String] = [], recordsPathText: String = "", pagination: PaginationMode = .none,
        headers: [HTTPHeader] = [], bearerTokenCredential: String? = nil, timeout: Duration = .seconds(30),
        maxBytes: Int64 = SourceConfiguration.defaultMaxBytes, allowEmpty: Bool = false, writable: Bool = false,
        conflictPolicy: ConflictPolicy = .serverWins, location: SourceLocation
    ) {
        self.name = name
        self.url = url
        self.idField = idField
        self.versionField = versionField
        self.recordsPath = recordsPath
        self.recordsPathText = recordsPathText
        self.pagination = pagination
        self.headers = headers
        self.bearerTokenCredential = bearerTokenCredential
        self.timeout = timeout
        self.maxBytes = maxBytes
        self.allowEmpty = allowEmpty
        self.writable = writable
        self.conflictPolicy = conflictPolicy
        self.location = location
    }

    /// The name a source gets from its file when it has no `Name=`: the file
    /// name without directory and without its last extension
    /// (`/etc/syncd/sources.d/posts.source` → `posts`).
    public static func defaultName(forFile path: String) -> String {
        let fileName = path.split(separator: "/").last.map(String.init) ?? path
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return fileName }
        return String(fileName[..<dot])
    }
}

/// The whole configuration: `syncd.conf`, its drop-ins and the sources.
public struct Configuration: Equatable, Sendable {
    /// `[Daemon]`.
    public var daemon: DaemonSettings
    /// `[Network]`.
    public var network: NetworkSettings
    /// `[Refresh]`.
    public var refresh: RefreshSettings
    /// `[Retry]`.
    public var retry: RetrySettings
    /// The sources, sorted by name.
    public var sources: [SourceConfiguration]

    /// Creates a configuration; every argument defaults to the documented default.
    public init(
        daemon: DaemonSettings = DaemonSettings(), network: NetworkSettings = NetworkSettings(),
        refresh: RefreshSettings = RefreshSettings(), retry: RetrySettings = RetrySettings(),
        sources: [SourceConfiguration] = []
    ) {
        self.daemon = daemon
        self.network = network
        self.refresh = refresh
        self.retry = retry
        self.sources = sources
    }

    /// Every setting at its default, and no sources: what an empty or missing directory gives.
    public static let defaults = Configuration()

    /// The source with this name, if any.
    public func source(named name: String) -> SourceConfiguration? {
        sources.first { $0.name == name }
    }
}
