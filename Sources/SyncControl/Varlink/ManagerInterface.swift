/// The interfaces the control socket serves, as Varlink interface definitions
/// (https://varlink.org/Interface-Definition).
///
/// The texts use LF only and never the `any` type: the reference Python client rejects
/// both. Free-form records are `object`. Method signatures use only named types, since
/// that client's signature scanner does not handle nested parentheses.
public enum ManagerInterface {
    /// `io.syncd.Manager`.
    public static let name = "io.syncd.Manager"

    /// Every method of `io.syncd.Manager`, in the order of the description.
    public static let methods = [
        "GetStatus", "Refresh", "List", "Get", "Changes", "Watch", "Logout", "Reload",
        "Put", "Delete", "ListOutbox", "RetryOutbox", "DropOutbox", "RestoreDiscarded",
        "ListConflicts", "Resolve",
    ]

    /// Most records one `List` reply carries.
    public static let maxPageSize = 1000
    /// The largest `limit` of `Changes` (and its default).
    public static let maxChangesPage = 10_000

    /// The interface definition of `io.syncd.Manager`.
    public static let description = """
        # Control interface of syncd, the offline-first cache of remote JSON
        # collections. Anyone who can reach the socket may call GetStatus.
        # Members of the daemon's ReadGroup may also call List, Get and Watch;
        # members of its ControlGroup (default "syncd") every method but Logout
        # and Reload, which need root or the daemon's own user. Anyone else gets
        # PermissionDenied.
        # Times are RFC 3339 UTC text, e.g. "2026-11-29T10:00:00Z".
        interface io.syncd.Manager

        # The daemon as a whole.
        type DaemonStatus (
          # Version of syncd, e.g. "1.0.0".
          version: string,
          # Account whose data is cached.
          account: string,
          # Whether some watched network link is routable.
          online: bool,
          # Link state summary: "routable" (an allowed interface has carrier and a routable address), "carrier" (carrier, no routable address) or "none" (no allowed interface has carrier).
          links: string,
          # Result of the last reachability probe; null until a probe ran.
          reachable: ?bool,
          # Seconds since the daemon started.
          uptimeSec: int,
          # Why the last reload was rejected (the old configuration stays in
          # force); null once a reload succeeds.
          reloadRejected: ?string
        )

        # One configured source.
        type SourceStatus (
          # Source name from its .source file.
          name: string,
          # Collection URL (credentials are never shown).
          url: string,
          # One of "idle", "syncing", "backoff", "offline", "error".
          state: string,
          # Records in the local view.
          records: int,
          # Records with local changes the server has not confirmed yet, parked ones
          # included: the cache file's pending list.
          pending: int,
          # Of those, records with a change the server refused, waiting for a person (ListOutbox).
          parked: int,
          # Conflicts waiting for Resolve.
          conflicts: int,
          # Warnings of the latest listing that did not fail it (e.g. a next page not followed).
          warnings: []string,
          # Last refresh that replaced or confirmed the cache.
          lastSuccess: ?string,
          # Last refresh attempt.
          lastAttempt: ?string,
          # Why the last attempt failed; null after a success.
          lastError: ?string,
          # Whether the cached copy is older than the last failed attempt.
          stale: bool,
          # Failed attempts in the current retry cycle.
          attempt: int,
          # When the next retry is due; null if none is scheduled.
          nextAttempt: ?string,
          # The source's cache file (it may not exist before the first refresh).
          cacheFile: ?string,
          # The source's change sequence number: the latest change to what its
          # cache file holds (Changes, Watch); 0 before the first.
          seq: ?int,
          # Writable= of its .source file: local changes are pushed.
          writable: ?bool,
          # Pagination= of its .source file: "none", "link", "body", "cursor", "page" or "offset".
          pagination: ?string,
          # ConflictPolicy= of a writable source; null for a read-only one.
          conflictPolicy: ?string,
          # Delta= of a source that asks for changes only: "watermark" or "token";
          # absent under Delta=none.
          delta: ?string,
          # When the last delta was applied; null when none was since the last full listing.
          lastDelta: ?string,
          # When the full listing the checkpoint comes from was saved; null when no
          # checkpoint is held (the next refresh lists the whole collection).
          lastFullListing: ?string,
          # An interrupted full listing is staged: the records kept, which the
          # next refresh replays and resumes after; null when none.
          resumeAt: ?int,
          # The pages it had received.
          resumePage: ?int,
          # When it began.
          resumeBegan: ?string
        )

        # A .source file the daemon skipped because of a configuration error;
        # the other sources run.
        type FailedSource (
          # Name= of the source, or the file stem when it could not be read.
          name: string,
          # The .source file.
          file: string,
          # The first problem, "FILE:LINE: message".
          problem: string
        )

        # A queued local change.
        type OutboxEntry (
          # Sequence number, unique in the outbox; used by RetryOutbox and DropOutbox.
          seq: int,
          # Source the change belongs to.
          source: string,
          # ID of the record changed.
          id: string,
          # One of "create", "update", "delete".
          operation: string,
          # When the change was made.
          createdAt: string,
          # "queued" (will be pushed) or "parked" (the server refused it; see lastError).
          state: string,
          # Push attempts so far.
          attempts: int,
          # HTTP status of the last push attempt, if it got one.
          lastStatus: ?int,
          # Why the last push attempt failed.
          lastError: ?string,
          # true for a parked change a newer change of its record superseded:
          # kept as history, never pushed (lastError then begins "superseded
          # by a newer change; was: ").
          superseded: ?bool
        )

        # A local change a ConflictPolicy discarded (server-wins, or the older side
        # of last-write-wins), kept with the server's side for the source's
        # DiscardedRetentionSec= (default 30 days).
        type DiscardedChange (
          # The outbox entry's sequence number; used by RestoreDiscarded.
          seq: int,
          # Source the change belongs to.
          source: string,
          # ID of the record changed.
          id: string,
          # One of "create", "update", "delete".
          operation: string,
          # The record as the change had it; null for a removal.
          record: ?object,
          # Value of VersionField the change was made against, if known.
          baseVersion: ?string,
          # When the change was made.
          createdAt: string,
          # When the policy discarded it.
          discardedAt: string,
          # The conflict and the policy that settled it.
          reason: string,
          # The server's record then; null if it was not read or the server had removed it.
          server: ?object,
          # Value of VersionField on the server then, if known.
          serverVersion: ?string
        )

        # A local change that clashes with the server's version of a record.
        type Conflict (
          # Source of the record.
          source: string,
          # ID of the record.
          id: string,
          # The local version of the record; null if it was deleted locally.
          local: ?object,
          # The server's version of the record; null if the server deleted it.
          remote: ?object,
          # Value of VersionField in the local change's base, if known.
          localVersion: ?string,
          # Value of VersionField on the server, if known.
          remoteVersion: ?string,
          # When the conflict was detected.
          detectedAt: string
        )

        # The daemon's state and every source's state.
        method GetStatus() -> (daemon: DaemonStatus, sources: []SourceStatus, failed: []FailedSource)

        # Requests a refresh of one source, or of all when source is null. Without
        # wait the reply comes as soon as the request is accepted (result
        # "queued"). With wait the reply carries the outcome: result "updated"
        # (the cache was replaced) or "unchanged" (confirmed), and records; a
        # failure is the error RefreshFailed (reason names every failed source).
        # Without "more" and source null, the one reply sums up every source
        # (source null). With wait and "more", replies with continues=true report
        # progress first (state "syncing", pages, bytes, records; no result),
        # then each source's outcome is its own reply, in name order: result set,
        # and for a failed source result "failed" or "cancelled" with error. All
        # but the last outcome have continues=true; if any source failed, every
        # outcome has it and the final reply is RefreshFailed.
        method Refresh(source: ?string, wait: ?bool, full: ?bool) -> (
          source: ?string,
          state: ?string,
          pages: ?int,
          bytes: ?int,
          records: ?int,
          result: ?string,
          error: ?string
        )

        # One page of a source's records as the cache file shows them (the local
        # view: the server's listing with pending local changes applied), in the
        # file's order. offset defaults to 0, limit to 1000 and is capped at 1000.
        # total counts the local view; next is the offset of the following page,
        # null on the last page. unwritten is null while the cache file holds this
        # view; after a failed write of the file it is the number of records of
        # this view not yet written to it, and cached what the file holds. fetched
        # is false while syncd holds no listing of the source (its first refresh has
        # not succeeded yet, or its cache file was damaged and the listing is being
        # fetched again): records are then only the pending local changes.
        method List(source: string, offset: ?int, limit: ?int) -> (records: []object, total: int, next: ?int, cached: ?int, unwritten: ?int, fetched: ?bool)

        # One record of the local view by ID (IDs are passed as text, also numeric
        # ones); a record removed locally is NoSuchRecord.
        method Get(source: string, id: string) -> (record: object)

        # The records of a source changed and removed after change number since
        # (0: from the start of the log), each ID once in its latest state, in the
        # order of their latest change; seq is the source's current change number.
        # A page ends after the change that brings it to limit IDs (default and
        # cap 10000; a change's IDs are never split); next is the since that asks
        # for the rest, null on the last page. A since the log no longer reaches
        # (it keeps a source's latest 1000 changes and 50000 IDs; a listing that
        # changed more than 10000 records is logged without IDs), or greater than
        # seq (the account's data was erased since), is ChangesExpired: list the
        # source again, then follow from seq.
        method Changes(source: string, since: int, limit: ?int) -> (changed: []string, removed: []string, next: ?int, seq: int)

        # Streams cache changes; needs "more". The first replies describe every
        # source as it is (event "current"), in configuration order; then one
        # reply per change: "saved" (a refresh rewrote the cache file: a new
        # listing, or a push that settled local changes), "local" (a local change
        # was queued or settled), "logout" (the account's data was erased),
        # "stale" (a refresh failed after the last one succeeded; reason says
        # why; once per stale period) and "fresh" (the first success after
        # "stale"); and for a local change that did not go out: "parked" (the
        # server refused it), "discarded" (ConflictPolicy= dropped it; it can be
        # restored) and "conflict" (kept for resolve), with the record's id, the
        # change's outboxSeq, the httpStatus that refused it and a message.
        # Callers outside the ControlGroup get reason and message without the
        # server's words. A client ignores events it does not know. Every event
        # carries its source's current change number seq (as in Changes); "saved"
        # and "local" name the records changed and removed since the source's
        # previous event, at most 1000 IDs each: with more, or when the log no
        # longer reaches that event, they are null and truncated is true (call
        # Changes, or list the source again).
        method Watch() -> (
          source: string,
          records: int,
          pending: int,
          conflicts: int,
          savedAt: ?string,
          event: string,
          seq: ?int,
          changed: ?[]string,
          removed: ?[]string,
          truncated: ?bool,
          reason: ?string,
          id: ?string,
          outboxSeq: ?int,
          httpStatus: ?int,
          message: ?string
        )

        # Cancels in-flight work and erases the current account's cache and state.
        # Refused with PendingChanges while local changes are queued, unless
        # discardPending is true.
        method Logout(discardPending: ?bool) -> ()

        # Re-reads the configuration (like SIGHUP); replies once the reload is
        # done. A bad configuration is refused with ReloadFailed and the old one
        # stays in force.
        method Reload() -> ()

        # Queues a new or changed record of a writable source, durably; List, Get
        # and Watch show it at once, the cache file at once up to 256 KiB, else
        # within about half a second. A record without an ID gets a UUID; id is the
        # record's ID. The change is stored either way; unwritten is set when the
        # cache file could not be written (a full disk): the number of records of
        # the local view it does not hold yet (as in List).
        method Put(source: string, record: object) -> (id: string, unwritten: ?int)

        # Queues the removal of a record of a writable source (unwritten as in Put).
        method Delete(source: string, id: string) -> (unwritten: ?int)

        # The queued local changes, of one source or of all. With discarded true,
        # discarded also lists the changes a ConflictPolicy discarded, oldest
        # first (null without it).
        method ListOutbox(source: ?string, discarded: ?bool) -> (entries: []OutboxEntry, discarded: ?[]DiscardedChange)

        # Makes a parked outbox entry eligible for pushing again.
        method RetryOutbox(seq: int) -> ()

        # Removes an outbox entry without pushing it. shows: what the cache file
        # shows of its record now: "server" (the server's version), "local" (a
        # newer local change of it) or "nothing" (the server's listing does not
        # have it, as for a create the server never took).
        method DropOutbox(seq: int) -> (shows: string)

        # Queues a discarded change again, as a change made now against the
        # server's version of the record in the latest listing (a removal of a
        # record the server no longer has is InvalidParameter), and forgets the
        # discarded one. operation is what was queued ("create" when the server
        # removed the record); seq the outbox entry that holds it, null when it
        # cancelled an unsent create; unwritten as in Put.
        method RestoreDiscarded(seq: int) -> (source: string, id: string, operation: string, seq: ?int, unwritten: ?int)

        # The unresolved conflicts, of one source or of all.
        method ListConflicts(source: ?string) -> (conflicts: []Conflict)

        # Settles a conflict: keep "local" (push the local change) or "remote"
        # (drop it); unwritten as in Put.
        method Resolve(source: string, id: string, keep: string) -> (unwritten: ?int)

        # The caller may not call this method; needs says who may (the groups
        # by name), e.g. "root, the user syncd runs as, or membership in group
        # \"syncd\" (ControlGroup=)".
        error PermissionDenied (needs: ?string)

        # No source of this name is configured.
        error NoSuchSource (source: string)

        # The source has no record with this ID.
        error NoSuchRecord (source: string, id: string)

        # The source is not configured with Writable=yes.
        error NotWritable (source: string)

        # No outbox entry has this sequence number.
        error NoSuchOutboxEntry (seq: int)

        # No discarded change has this sequence number (restored already, or
        # kept longer than DiscardedRetentionSec=).
        error NoSuchDiscardedChange (seq: int)

        # A parameter has an unacceptable value.
        error InvalidParameter (parameter: string, reason: string)

        # A refresh that was waited for failed.
        error RefreshFailed (source: string, reason: string)

        # The configuration was not reloaded; the old one stays in force.
        error ReloadFailed (reason: string)

        # Logout would discard this many queued local changes.
        error PendingChanges (count: int)

        # The daemon could not read or write its state or cache.
        error StorageFailure (reason: string)

        # The connection was refused before any call: the caller's share of
        # control connections is in use (sent at once, then the socket closes).
        error TooManyConnections (reason: string)

        # The daemon is stopping: a call, a waited-for refresh or a Watch still
        # open then ends with this.
        error Stopping ()

        # A waited-for refresh was cancelled before it ended (by a logout).
        error Cancelled (reason: string)

        # Changes cannot answer from since: the log starts after it (oldest is
        # the oldest since it answers). List the source again, then call Changes
        # from the seq of that moment.
        error ChangesExpired (source: string, oldest: int)

        """

    /// The interface definition of `org.varlink.service` (https://varlink.org/Service).
    public static let serviceDescription = """
        # The Varlink Service Interface is provided by every varlink service. It
        # describes the service and the interfaces it implements.
        interface org.varlink.service

        # Get a list of all the interfaces a service provides and information
        # about the implementation.
        method GetInfo() -> (
          vendor: string,
          product: string,
          version: string,
          url: string,
          interfaces: []string
        )

        # Get the description of an interface that is implemented by this service.
        method GetInterfaceDescription(interface: string) -> (description: string)

        # The requested interface was not found.
        error InterfaceNotFound (interface: string)

        # The requested method was not found
        error MethodNotFound (method: string)

        # The interface defines the requested method, but the service does not
        # implement it.
        error MethodNotImplemented (method: string)

        # One of the passed parameters is invalid.
        error InvalidParameter (parameter: string)

        # Client is denied access
        error PermissionDenied ()

        # Method is expected to be called with 'more' set to true, but wasn't
        error ExpectedMore ()

        """

    /// The interface definition of `interface`, nil if the service has no such interface.
    public static func description(of interface: String) -> String? {
        switch interface {
        case name: return description
        case "org.varlink.service": return serviceDescription
        default: return nil
        }
    }
}
