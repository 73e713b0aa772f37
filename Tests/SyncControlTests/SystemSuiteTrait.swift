import Testing
import Glibc

extension Trait where Self == ConditionTrait {
    /// Marks a suite that needs more than a unit test may assume: root, network namespaces, the built
    /// binaries or the reference Python client. `make test` runs it; `make check` (SYNCD_TESTS=unit)
    /// leaves it out.
    static var system: Self {
        .enabled(if: Environment.get("SYNCD_TESTS") != "unit", "needs root, namespaces, binaries or Python; make check leaves it out")
    }
}

private enum Environment {
    static func get(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }
}
