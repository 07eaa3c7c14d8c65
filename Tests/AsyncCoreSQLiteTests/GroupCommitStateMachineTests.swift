import Testing

@testable import AsyncCoreSQLite
