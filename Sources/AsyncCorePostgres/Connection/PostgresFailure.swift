#if Postgres
  import PostgresNIO

  /// What a failed statement means to the store.
  enum PostgresFailure: Sendable, Equatable {
    /// The connection is gone (or going): with it, its session's locks.
    case connection(String)
    /// A unique key refused a row: another writer took the sequence number.
    case uniqueViolation
    /// The server refused the statement for another reason.
    case server(code: String, message: String)

    init(_ error: any Error) {
      guard let error = error as? PSQLError else {
        self = .connection(Self.describe(error))
        return
      }
      guard error.code == .server, let code = error.serverInfo?[.sqlState] else {
        self = .connection(Self.describe(error))
        return
      }
      let message = error.serverInfo?[.message] ?? ""
      // 08: connection exceptions; 57P: the server shuts down or restarts;
      // 53: out of resources (too many connections).
      if code.hasPrefix("08") || code.hasPrefix("57P") || code.hasPrefix("53") {
        self = .connection("\(message) (SQLSTATE \(code))")
      } else if code == "23505" {
        self = .uniqueViolation
      } else {
        self = .server(code: code, message: message)
      }
    }

    /// The store's error for a statement that was not a journal's write.
    var storeError: PostgresStoreError {
      switch self {
      case .connection(let message): .unavailable(message: message)
      case .uniqueViolation: .server(code: "23505", message: "unique violation")
      case .server(let code, let message): .server(code: code, message: message)
      }
    }

    /// An error in words: the server's message where it sent one.
    static func describe(_ error: any Error) -> String {
      guard let error = error as? PSQLError else { return String(describing: error) }
      if let message = error.serverInfo?[.message] { return message }
      if let underlying = error.underlying { return "\(error.code): \(underlying)" }
      return "\(error.code)"
    }
  }
#endif
