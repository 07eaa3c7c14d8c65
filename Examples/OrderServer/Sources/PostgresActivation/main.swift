// The load report's activation figure: the first read of a passive
// customer from PostgreSQL (its lock, then its rows, decoded, and a core
// made), against a raw SELECT of the same rows through postgres-nio,
// decoded. Each customer has 10 orders and was passivated (its snapshot).
// Prints one line of JSON.
//
//   pg-activation --postgres postgres://USER@HOST:PORT/DB [--customers 2000]

import AsyncCore
import AsyncCorePostgres
import Foundation
import Logging
import OrderServer
import PostgresNIO

var url: PostgresURL?
var count = 2_000
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
  switch (flag, arguments.popFirst()) {
  case ("--postgres", let text?): url = try? PostgresURL(text)
  case ("--customers", let text?) where Int(text).map({ $0 > 0 }) == true: count = Int(text)!
  default:
    FileHandle.standardError.write(Data("pg-activation: usage: --postgres URL [--customers N]\n".utf8))
    exit(64)
  }
}
guard let url else {
  FileHandle.standardError.write(Data("pg-activation: --postgres postgres://USER@HOST:PORT/DB is required\n".utf8))
  exit(64)
}

let configuration = url.configuration
let customerCount = count
// Off the main actor, where each hop would cost several microseconds.
let figures = try await Task.detached { try await measure(configuration, customers: customerCount) }.value
print(figures)

typealias Store = PostgresEntityStore<String, Customer, CustomerAction>

func measure(_ configuration: PostgresConnection.Configuration, customers count: Int) async throws -> String {
  let logger = Logger(label: "pg-activation")
  let namespace = "act" + String(UInt64.random(in: 0...UInt64.max), radix: 36)
  let ids = (0..<count).map { "a\($0)" }
  func registry(owner: String) async throws -> Entities<String, Customer, CustomerAction> {
    let store = try await Store(configuration: configuration, owner: owner, namespace: namespace, logger: logger)
    return Entities(store: store, initialState: { _ in Customer() }, reducer: Customer.reducer)
  }

  // Each customer gets 10 orders; the shutdown passivates every one.
  let setup = try await registry(owner: "pg-activation-setup")
  try await withThrowingTaskGroup(of: Void.self) { group in
    for slice in 0..<32 {
      group.addTask {
        for id in stride(from: slice, to: ids.count, by: 32).map({ ids[$0] }) {
          for order in 0..<10 {
            try await setup.dispatch(.place(reference: "o\(order)", amountCents: 100), to: id)
          }
        }
      }
    }
    try await group.waitForAll()
  }
  await setup.shutdown()

  let customers = try await registry(owner: "pg-activation")
  let connection = try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger)
  let decoder = JSONDecoder()
  let encoder = JSONEncoder()

  /// The rows activation reads, in the statement the store uses, decoded.
  func raw(_ id: String) async throws -> Customer {
    let entity = String(decoding: try encoder.encode(id), as: UTF8.self)
    let rows = try await connection.query(
      """
      SELECT 1 AS kind, sequence, body FROM \(unescaped: namespace)_snapshots WHERE entity = \(entity)
      UNION ALL
      SELECT 0, r.sequence, r.body FROM \(unescaped: namespace)_records r WHERE r.entity = \(entity)
        AND r.sequence > coalesce((SELECT sequence FROM \(unescaped: namespace)_snapshots WHERE entity = \(entity)), 0)
      ORDER BY kind DESC, sequence
      """, logger: logger)
    var customer = Customer()
    for try await (kind, _, body) in rows.decode((Int32, Int64, ByteBuffer).self) {
      if kind == 1 {
        customer = try decoder.decode(Customer.self, from: Data(buffer: body))
      } else {
        let action = try decoder.decode(CustomerAction.self, from: Data(buffer: body))
        _ = Customer.reducer.reduce(into: &customer, action: action)
      }
    }
    return customer
  }

  let clock = ContinuousClock()
  var activations: [Duration] = []
  var raws: [Duration] = []
  for (index, id) in ids.enumerated() {
    // Alternated, so that neither always reads the rows second.
    for step in index.isMultiple(of: 2) ? [0, 1] : [1, 0] {
      let start = clock.now
      let customer = step == 0 ? try await raw(id) : try await customers.state(of: id)
      let elapsed = start.duration(to: clock.now)
      guard customer.orders.count == 10 else {
        throw Failure(description: "\(id) has \(customer.orders.count) orders, not 10")
      }
      if step == 0 { raws.append(elapsed) } else { activations.append(elapsed) }
    }
  }
  await customers.shutdown()
  for suffix in ["records", "snapshots", "meta"] {
    try await connection.query("DROP TABLE \(unescaped: namespace)_\(unescaped: suffix)", logger: logger)
  }
  try await connection.close()
  return """
    {"customers":\(count),"activation_p50_us":\(microseconds(activations, 0.5)),\
    "activation_p99_us":\(microseconds(activations, 0.99)),"raw_p50_us":\(microseconds(raws, 0.5)),\
    "raw_p99_us":\(microseconds(raws, 0.99))}
    """
}

struct Failure: Error, CustomStringConvertible {
  var description: String
}

/// The `fraction` percentile of `values`, in microseconds.
func microseconds(_ values: [Duration], _ fraction: Double) -> Double {
  let sorted = values.sorted()
  let duration = sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]
  return Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}
