import AsyncCorePostgres
import Foundation
import PostgresNIO

/// A PostgreSQL server from `postgres://USER[:PASSWORD]@HOST[:PORT][/DATABASE]`
/// (the form `scripts/postgres start` prints), without TLS: the example
/// runs on loopback. USER, PASSWORD and DATABASE are percent-encoded (`%40`
/// for `@`); a query (`?sslmode=...`) is refused, not read.
public struct PostgresURL: Sendable, Equatable {
  public var user: String
  public var password: String?
  public var host: String
  public var port = 5432
  public var database: String?

  public init(user: String, password: String?, host: String, port: Int, database: String?) {
    self.user = user
    self.password = password
    self.host = host
    self.port = port
    self.database = database
  }

  /// Parses `text`, refusing it in one line when it is not that form.
  public init(_ text: String) throws(UsageError) {
    let refusal = UsageError("--postgres takes postgres://USER[:PASSWORD]@HOST[:PORT][/DATABASE], not \(text)")
    let scheme = "postgres://"
    guard text.hasPrefix(scheme), let at = text.lastIndex(of: "@") else { throw refusal }
    let credentials = text[text.index(text.startIndex, offsetBy: scheme.count)..<at]
      .split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
    let rest = text[text.index(after: at)...].split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    let address = rest[0].split(separator: ":", omittingEmptySubsequences: false)
    guard let name = credentials.first, !name.isEmpty, let host = address.first, !host.isEmpty, address.count <= 2,
      !text.contains(where: { $0 == "?" || $0 == "#" || $0.isWhitespace })
    else { throw refusal }
    func decoded(_ part: Substring) throws(UsageError) -> String {
      guard let decoded = String(part).removingPercentEncoding else { throw refusal }
      return decoded
    }
    user = try decoded(name)
    password = credentials.count > 1 ? try decoded(credentials[1]) : nil
    self.host = String(host)
    if address.count == 2 {
      guard let port = Int(address[1]), (1...65_535).contains(port) else { throw refusal }
      self.port = port
    }
    guard rest.count < 2 || !rest[1].contains("/") else { throw refusal }
    database = rest.count > 1 && !rest[1].isEmpty ? try decoded(rest[1]) : nil
  }

  /// postgres-nio's configuration for it.
  public var configuration: PostgresConnection.Configuration {
    PostgresConnection.Configuration(
      host: host, port: port, username: user, password: password, database: database, tls: .disable)
  }
}
