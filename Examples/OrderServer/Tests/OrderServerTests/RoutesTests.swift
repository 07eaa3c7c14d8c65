import AsyncCore
import AsyncCoreTesting
import Dispatch
import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import NIOHTTP1
import OrderServer
import Prometheus
import SSEClient
import Synchronization
import Testing

/// A server on loopback over in-memory entities, driven by real HTTP
/// clients (Hummingbird's live test client and SSEClient's).
private func withServer(
  _ customers: Entities<String, Customer, CustomerAction> = Entities(
    initialState: { _ in Customer() }, reducer: Customer.reducer),
  metrics: PrometheusCollectorRegistry? = nil, events: EventHub = EventHub(),
  _ body: @Sendable (any TestClientProtocol, Int) async throws -> Void
) async throws {
  let app = Application(
    router: makeRouter(backend: EntitiesBackend(customers), metrics: metrics, maxBodyBytes: 1_024, events: events),
    logger: quiet)
  try await app.test(.live) { client in
    try await body(client, try #require(client.port))
  }
  await customers.shutdown()
}

/// Hummingbird's logger, without its line per server started.
private let quiet: Logger = {
  var logger = Logger(label: "order-server-tests")
  logger.logLevel = .warning
  return logger
}()

private func place(_ reference: String, _ cents: Int = 100) -> String {
  #"{"place":{"reference":"\#(reference)","amountCents":\#(cents)}}"#
}

@Suite("OrderServer: routes on loopback")
struct RoutesTests {
  @Test("POST reduces the action and answers the state; GET reads it")
  func postThenGet() async throws {
    try await withServer { _, port in
      let placed = try await HTTP.request(.POST, "/customers/ann/actions", body: place("r-1", 250), port: port)
      #expect(placed.status == 200)
      #expect(placed.header("Content-Type") == "application/json")
      #expect(placed.body == #"{"orders":[{"amountCents":250,"cancelled":false,"reference":"r-1"}],"totalCents":250}"#)
      let cancelled = try await HTTP.request(
        .POST, "/customers/ann/actions", body: #"{"cancel":{"reference":"r-1"}}"#, port: port)
      #expect(cancelled.body == #"{"orders":[{"amountCents":250,"cancelled":true,"reference":"r-1"}],"totalCents":0}"#)
      let read = try await HTTP.request(.GET, "/customers/ann", port: port)
      #expect(read.status == 200)
      #expect(read.body == cancelled.body)
    }
  }

  @Test(
    "bad input gets a 4xx and one line saying why",
    arguments: [
      ("POST", "/customers/ann/actions", #"{"place":"#, 400, "malformed action: The given data was not valid JSON."),
      ("POST", "/customers/ann/actions", #"{"refund":{"reference":"r"}}"#, 400, "malformed action: "),
      ("POST", "/customers/ann/actions", place("r", -5), 422, "amountCents must be 1 to 100000000"),
      ("POST", "/customers/a%20b/actions", place("r"), 400, "a customer id is 1 to 64 letters, digits, '-' or '_'"),
      ("POST", "/customers/ann/actions", String(repeating: "x", count: 2_000), 413, "the body is over 1024 bytes"),
      ("GET", "/customers/nobody", "", 404, "no customer nobody"),
      ("GET", "/customers/\(String(repeating: "a", count: 65))", "", 400, "a customer id is 1 to 64 letters"),
    ])
  func refusals(method: String, path: String, body: String, status: Int, reason: String) async throws {
    try await withServer { _, port in
      let response = try await HTTP.request(
        method == "POST" ? .POST : .GET, path, body: method == "POST" ? body : nil, port: port)
      #expect(response.status == status)
      #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
      #expect(response.body.hasPrefix(reason))
      #expect(response.body.filter(\.isNewline).count == 1 && response.body.hasSuffix("\n"))
      // Nothing was reduced for a refused action.
      let after = try await HTTP.request(.GET, "/customers/ann", port: port)
      #expect(after.status == 404)
    }
  }

  @Test(
    "a path no route has is 404, and a route's path asked with another method 405 with Allow, each in one line",
    arguments: [
      (HTTPMethod.GET, "/orders", 404, "no route GET /orders\n", nil),
      (.DELETE, "/customers/ann", 405, "/customers/ann answers GET, not DELETE\n", "GET"),
      (.GET, "/customers/ann/actions", 405, "/customers/ann/actions answers POST, not GET\n", "POST"),
      (.POST, "/health", 405, "/health answers GET, not POST\n", "GET"),
    ] as [(HTTPMethod, String, Int, String, String?)])
  func unrouted(method: HTTPMethod, path: String, status: Int, body: String, allow: String?) async throws {
    try await withServer { _, port in
      let response = try await HTTP.request(method, path, body: method == .POST ? "{}" : nil, port: port)
      #expect(response.status == status)
      #expect(response.body == body)
      #expect(response.header("Allow") == allow)
      #expect(response.header("Content-Type") == "text/plain; charset=utf-8")
    }
  }

  @Test("a full mailbox is a 503 with Retry-After, and the refused action is not reduced")
  func fullMailbox() async throws {
    let (reducing, reducingSink) = AsyncStream<Void>.makeStream()
    let release = DispatchSemaphore(value: 0)
    // Holds the reducer on the action "hold": with a capacity of one, the
    // mailbox is full until it is let go.
    let holding = Reduce<Customer, CustomerAction> { customer, action in
      if case .place("hold", _) = action {
        reducingSink.yield()
        release.wait()
      }
      return Customer.reducer.reduce(into: &customer, action: action)
    }
    let customers = Entities<String, Customer, CustomerAction>(
      mailboxCapacity: 1, initialState: { _ in Customer() }, reducer: holding)
    try await withServer(customers) { _, port in
      async let held = HTTP.request(.POST, "/customers/ann/actions", body: place("hold"), port: port)
      var started = reducing.makeAsyncIterator()
      _ = await started.next()
      let refused = try await HTTP.request(.POST, "/customers/ann/actions", body: place("r-2"), port: port)
      release.signal()
      #expect(refused.status == 503)
      #expect(refused.header("Retry-After") == "1")
      #expect(refused.body == "the customer's mailbox is full; retry after a second\n")
      #expect(try await held.status == 200)
      let state = try await customers.state(of: "ann")
      #expect(state.orders.map(\.reference) == ["hold"])
    }
  }

  @Test("SSE clients see every state, the current one first, in order; a late one starts from the latest")
  func everyState() async throws {
    try await withServer { _, port in
      let first = try await EventLog.open("/customers/bea/events", port: port)
      let second = try await EventLog.open("/customers/bea/events", port: port)
      #expect(try await first.wait(for: 1).count == 1)
      #expect(try await second.wait(for: 1).count == 1)
      // Sent back to back, without waiting for the events: a stream that
      // kept only the latest state would skip some.
      for number in 1...50 {
        let response = try await HTTP.request(.POST, "/customers/bea/actions", body: place("r-\(number)"), port: port)
        #expect(response.status == 200)
      }
      // Once a client has the 50th state, so has the customer's topic.
      _ = try await first.wait(for: 51)
      let late = try await EventLog.open("/customers/bea/events", port: port)
      _ = try await HTTP.request(.POST, "/customers/bea/actions", body: place("r-51"), port: port)
      for log in [first, second] {
        let states = try await log.wait(for: 52)
        #expect(states.count == 52)
        for (index, state) in states.enumerated() {
          #expect(state.orders.map(\.reference) == (0..<index).map { "r-\($0 + 1)" })
        }
      }
      let lateStates = try await late.wait(for: 2)
      #expect(lateStates.map(\.orders.count) == [50, 51])
      for log in [first, second, late] { await log.stream.close() }
    }
  }

  @Test("a client that left is let go at a heartbeat; one that stays goes on receiving states")
  func departedClient() async throws {
    let clock = ManualClock()
    let hub = EventHub(heartbeat: .seconds(15), clock: clock)
    try await withServer(events: hub) { _, port in
      let gone = try await EventLog.open("/customers/cy/events", port: port)
      let staying = try await EventLog.open("/customers/dee/events", port: port)
      #expect(try await gone.wait(for: 1).count == 1)
      #expect(try await staying.wait(for: 1).count == 1)
      await gone.stream.close()
      // Nothing else is ever written to cy's one client: only a heartbeat's
      // failed write can tell the server it left.
      await withTaskGroup(of: Void.self) { group in
        group.addTask { await hub.waitUntilIdle("cy") }
        group.addTask {
          while !Task.isCancelled, (try? await clock.waitForSleepers(atLeast: 1)) != nil {
            await clock.advance(by: .seconds(15))
          }
        }
        await group.next()
        group.cancelAll()
      }
      let response = try await HTTP.request(.POST, "/customers/dee/actions", body: place("after"), port: port)
      #expect(response.status == 200)
      #expect(try await staying.wait(for: 2).last?.orders.map(\.reference) == ["after"])
      await staying.stream.close()
    }
  }

  @Test("a client that reads nothing is ended once its backlog is full, holding only that backlog")
  func stalledClient() async {
    let hub = EventHub(backlog: 4, clock: ManualClock())
    let (states, feed) = AsyncStream<Customer>.makeStream()
    let (events, _) = hub.join("stalled", states)
    for cents in 1...10 {
      var customer = Customer()
      customer.totalCents = cents
      feed.yield(customer)
    }
    await hub.waitUntilIdle("stalled")
    var received: [String] = []
    for await event in events { received.append(String(buffer: event)) }
    #expect(received == (1...4).map { #"data: {"orders":[],"totalCents":\#($0)}"# + "\n\n" })
    feed.finish()
  }

  @Test("/metrics serves the registry's figures in Prometheus' text format; /health answers ok")
  func metricsAndHealth() async throws {
    let clock = ManualClock()
    let customers = Entities<String, Customer, CustomerAction>(
      clock: clock, initialState: { _ in Customer() }, reducer: Customer.reducer)
    let registry = PrometheusCollectorRegistry()
    try await withServer(customers, metrics: registry) { _, port in
      for name in ["a", "b", "c"] {
        _ = try await HTTP.request(.POST, "/customers/\(name)/actions", body: place("r"), port: port)
      }
      let reporter = Task {
        await customers.reportMetrics(every: .seconds(1), factory: PrometheusMetricsFactory(registry: registry))
      }
      // The first report is made at once; then it sleeps on the clock.
      try await clock.waitForSleepers(atLeast: 1)
      let metrics = try await HTTP.request(.GET, "/metrics", port: port)
      reporter.cancel()
      #expect(metrics.status == 200)
      #expect(metrics.header("Content-Type") == "text/plain; version=0.0.4")
      let lines = Set(metrics.body.split(separator: "\n").map(String.init))
      #expect(lines.contains("# TYPE asynccore_entities_active gauge"))
      #expect(lines.contains("asynccore_entities_active 3.0"))
      #expect(lines.contains("asynccore_entity_activations_total 3"))
      let health = try await HTTP.request(.GET, "/health", port: port)
      #expect(health.status == 200 && health.body == "ok\n")
    }
  }

  @Test("the baseline answers the same routes over a dictionary, and does not stream")
  func baseline() async throws {
    let app = Application(router: makeRouter(backend: BaselineBackend()), logger: quiet)
    try await app.test(.live) { client in
      let port = try #require(client.port)
      let placed = try await HTTP.request(.POST, "/customers/ann/actions", body: place("r-1", 250), port: port)
      #expect(placed.body == #"{"orders":[{"amountCents":250,"cancelled":false,"reference":"r-1"}],"totalCents":250}"#)
      #expect(try await HTTP.request(.GET, "/customers/ann", port: port).body == placed.body)
      #expect(try await HTTP.request(.GET, "/customers/ann/events", port: port).status == 501)
    }
  }
}

/// An SSE client that keeps every state it receives.
private final class EventLog: Sendable {
  let stream: HTTP.EventStream
  private let events: Events

  private final class Events: Sendable {
    let received = Mutex<[String]>([])
    let arrivals: AsyncStream<Int>
    let sink: AsyncStream<Int>.Continuation
    init() { (arrivals, sink) = AsyncStream<Int>.makeStream() }
  }

  private init(stream: HTTP.EventStream, events: Events) {
    self.stream = stream
    self.events = events
  }

  static func open(_ path: String, port: Int) async throws -> EventLog {
    let events = Events()
    let stream = try await HTTP.events(path, port: port) { data in
      events.sink.yield(
        events.received.withLock {
          $0.append(data)
          return $0.count
        })
    }
    return EventLog(stream: stream, events: events)
  }

  /// The states once `count` have arrived (more, if more did).
  func wait(for count: Int) async throws -> [Customer] {
    if events.received.withLock({ $0.count }) < count {
      for await arrived in events.arrivals where arrived >= count { break }
    }
    return try events.received.withLock { try $0.map { try JSONDecoder().decode(Customer.self, from: Data($0.utf8)) } }
  }
}
