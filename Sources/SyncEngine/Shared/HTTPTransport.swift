import SyncRemote

/// How the engine reaches servers: the only seam between the engine and the network. `HTTPClient` (libcurl)
/// is the daemon's; tests give a transport that answers from a script.
public protocol HTTPTransport: AnyObject {
    /// Set from any thread to abort the transfer in progress; its owner may give each piece of work a flag of its own.
    var cancellation: CancellationFlag { get set }

    /// Performs `request` as `HTTPClient.perform` documents: redirects followed within the request's origin
    /// policy, `onHead` once when the final answer's body starts, `onBody` with its decoded chunks; an error
    /// thrown by either aborts the transfer and comes back as `HTTPError.rejected`.
    func perform(_ request: HTTPRequest, onHead: (HTTPResponseHead) throws -> Void,
                 onBody: (UnsafeRawBufferPointer) throws -> Void) throws(HTTPError) -> HTTPResponseHead

    /// Closes the transport's connections (an idle engine keeps none); the next request opens new ones.
    func close()
}

extension HTTPTransport {
    /// `perform` without a head callback.
    func perform(_ request: HTTPRequest, onBody: (UnsafeRawBufferPointer) throws -> Void) throws(HTTPError) -> HTTPResponseHead {
        try perform(request, onHead: { _ in }, onBody: onBody)
    }
}

extension HTTPClient: HTTPTransport {}
