internal import Glibc
import SyncEngine

/// The process environment without Foundation.
public enum ProcessEnvironment {
    /// Every `KEY=value` pair of `environ`.
    public static func all() -> [(String, String)] {
        var pairs: [(String, String)] = []
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                pairs.append((String(text[..<equals]), String(text[text.index(after: equals)...])))
            }
            pointer += 1
        }
        return pairs
    }
}
