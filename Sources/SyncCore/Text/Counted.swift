/// "1 record", "2 records": a count with its noun, for log lines and messages (English plural by `s`).
public func counted(_ count: Int, _ noun: String) -> String {
    "\(count) \(noun)\(count == 1 ? "" : "s")"
}
