import Foundation
import OrderServer
import SSEClient
import Synchronization
import Testing

/// Load from eight tasks, one connection per request, each placing orders
/// with references of its own on 50 customers, until the server is gone.
private final class Load: Sendable {
  let attempted = Mutex<Set<String>>([])
  let acknowledged = Mutex<[String: String]>([:])  // reference → customer
  /// Requests whose connection closed without a response: at a SIGTERM,
  /// only those the server never took (reset in its listen backlog).
  let unanswered = Mutex<Set<String>>([])
  let fired = Atomic(0)  // the run whose trigger has fired
  let round = Atomic(0)

  static let customers = (0..<50).map { "c\($0)" }

  /// Runs until every task's request fails to connect; `atAcknowledgements`
  /// is called once, when that many requests have been answered 200.
  func run(port: Int, atAcknowledgements threshold: Int, _ trigger: @escaping @Sendable () -> Void) async {
    let run = round.add(1, ordering: .relaxed).newValue
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<8 {
        group.addTask {
          var number = 0
          while true {
            number += 1
            let reference = "r\(run)t\(task)-\(number)"
            let customer = Self.customers[(task * 7 + number) % Self.customers.count]
            self.attempted.withLock { _ = $0.insert(reference) }
            let body = #"{"place":{"reference":"\#(reference)","amountCents":1}}"#
            let response: HTTP.Response
            do {
              response = try await HTTP.request(.POST, "/customers/\(customer)/actions", body: body, port: port)
            } catch is HTTP.NoResponse {
              _ = self.unanswered.withLock { $0.insert(reference) }
              return
            } catch {
              return  // refused: the server is gone
            }
            guard response.status == 200 else { continue }
            let count = self.acknowledged.withLock {
              $0[reference] = customer
              return $0.count
            }
            if count >= threshold, self.fired.exchange(run, ordering: .relaxed) != run { trigger() }
          }
        }
      }
    }
  }

  /// Reads every customer from a server on the same store and checks that
  /// each acknowledged order is there exactly once, and nothing else but
  /// what was attempted, never twice.
  func check(against server: ServerProcess, unansweredNotReduced: Bool = false) async throws {
    var seen: [String: Int] = [:]
    for customer in Self.customers {
      let response = try await HTTP.request(.GET, "/customers/\(customer)", port: server.port)
      guard response.status == 200 else { continue }
      let state = try JSONDecoder().decode(Customer.self, from: Data(response.body.utf8))
      for order in state.orders { seen[order.reference, default: 0] += 1 }
    }
    let acknowledged = self.acknowledged.withLock { $0 }
    let attempted = self.attempted.withLock { $0 }
    expectEachAcknowledgedOnce(seen: seen, acknowledged: acknowledged.keys, attempted: attempted)
    #expect(acknowledged.count >= 300)
    if unansweredNotReduced {
      // Every request the server took, it answered before it exited.
      let dropped = self.unanswered.withLock { $0 }.filter { seen[$0] != nil }
      #expect(dropped.count == 0, "reduced but never answered: \(dropped.sorted().prefix(10))")
    }
  }
}

@Suite("OrderServer: a server process under load, stopped and killed")
struct ServerProcessTests {
  @Test(
    "SIGTERM under load: requests taken are answered, SSE streams end, exit 0; a restart has every acknowledged order once"
  )
  func sigterm() async throws {
    let folder = try temporaryFolder()
    let store = "\(folder)/customers.sqlite"
    let server = try await ServerProcess.start(["--store", store])
    let (ended, endSink) = AsyncStream<Void>.makeStream()
    let stream = try await HTTP.events(
      "/customers/c0/events", port: server.port, onEvent: { _ in }, onEnd: { endSink.yield() })
    let load = Load()
    await load.run(port: server.port, atAcknowledgements: 300) { server.signal(SIGTERM) }
    var streamEnds = ended.makeAsyncIterator()
    _ = await streamEnds.next()
    await stream.close()
    #expect(await server.status == 0)
    #expect(server.printed.hasSuffix("stopped\n"))
    let restarted = try await ServerProcess.start(["--store", store])
    try await load.check(against: restarted, unansweredNotReduced: true)
    restarted.signal(SIGTERM)
    #expect(await restarted.status == 0)
  }

  @Test("kill -9 under load, three times on one store: every acknowledged order is there exactly once")
  func kill9() async throws {
    let folder = try temporaryFolder()
    let store = "\(folder)/customers.sqlite"
    let load = Load()
    for round in 1...3 {
      let server = try await ServerProcess.start(["--store", store])
      await load.run(port: server.port, atAcknowledgements: 300 * round) { server.signal(SIGKILL) }
      #expect(await server.status == -SIGKILL)
    }
    let restarted = try await ServerProcess.start(["--store", store])
    try await load.check(against: restarted)
    restarted.signal(SIGTERM)
    #expect(await restarted.status == 0)
  }
}

private func temporaryFolder() throws -> String {
  let path = FileManager.default.temporaryDirectory.appendingPathComponent("order-server-\(UUID().uuidString)").path
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}
