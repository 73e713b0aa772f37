import Testing
@testable import SyncEngine
