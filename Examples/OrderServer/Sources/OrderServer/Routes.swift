import Foundation
import Hummingbird
import NIOCore
import Prometheus
import ServiceLifecycle
import Synchronization

/// The service's routes, on any backend:
///
/// - `POST /customers/{id}/actions`: a ``CustomerAction`` as JSON; answers
///   the customer's state once the action is reduced (and, on a store,
///   appended under its durability).
/// - `GET /customers/{id}`: the state, 404 for a customer with no orders.
/// - `GET /customers/{id}/events`: server-sent events, one `data:` line of
///   JSON per state, the current one first, and a comment line every
///   heartbeat, so that a client that left is let go within one or two.
/// - `GET /metrics`: the registry's metrics in Prometheus' text format.
/// - `GET /health`: `ok`.
///
/// Every refusal is a status and one line of text saying why: a path
/// none of these is 404, a method a path does not answer is 405 with `Allow`.
public func makeRouter(
  backend: some CustomerBackend, metrics: PrometheusCollectorRegistry? = nil, maxBodyBytes: Int = 16 << 10,
  events hub: EventHub = EventHub()
) -> Router<BasicRequestContext> {
  let router = Router()
  router.add(middleware: Unrouted())
  router.post("/customers/:id/actions") { request, context -> Response in
    let id: String
    switch customerID(context) {
    case .success(let valid): id = valid
    case .failure(let refusal): return refusal.response
    }
    let body: ByteBuffer
    do {
      body = try await request.body.collect(upTo: maxBodyBytes)
    } catch {
      return Refusal(.contentTooLarge, "the body is over \(maxBodyBytes) bytes").response
    }
    let action: CustomerAction
    do {
      action = try JSONDecoder().decode(CustomerAction.self, from: Data(buffer: body))
    } catch {
      return Refusal(.badRequest, "malformed action: \(describe(error))").response
    }
    if let reason = action.invalidReason {
      return Refusal(.unprocessableContent, reason).response
    }
    return respond(to: await backend.perform(action, on: id), at: request.uri.path)
  }
  router.get("/customers/:id") { request, context -> Response in
    switch customerID(context) {
    case .failure(let refusal): return refusal.response
    case .success(let id):
      let outcome = await backend.state(of: id)
      if case .state(let customer) = outcome, customer == Customer() {
        return Refusal(.notFound, "no customer \(id)").response
      }
      return respond(to: outcome, at: request.uri.path)
    }
  }
  router.get("/customers/:id/events") { request, context -> Response in
    let id: String
    switch customerID(context) {
    case .success(let valid): id = valid
    case .failure(let refusal): return refusal.response
    }
    switch await backend.states(of: id) {
    case nil: return Refusal(.notImplemented, "this server does not stream states").response
    case .failure(let failure): return Refusal(failure, at: request.uri.path).response
    case .success(let states):
      let headers: HTTPFields = [.contentType: "text/event-stream", .cacheControl: "no-cache"]
      return Response(
        status: .ok, headers: headers,
        body: ResponseBody { writer in
          // Ending it (the client left and a write threw, or the server
          // shuts down) leaves the customer's topic.
          let (events, end) = hub.join(id, states)
          defer { end() }
          // The group's graceful shutdown ends the stream, so that the
          // server's drain does not wait for clients that never leave.
          try await withGracefulShutdownHandler {
            for await event in events { try await writer.write(event) }
          } onGracefulShutdown: {
            end()
          }
          try await writer.finish(nil)
        })
    }
  }
  router.get("/metrics") { _, _ -> Response in
    let text = metrics?.emitToString() ?? ""
    return Response(
      status: .ok, headers: [.contentType: "text/plain; version=0.0.4"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: text)))
  }
  router.get("/health") { _, _ -> Response in
    Response(
      status: .ok, headers: [.contentType: "text/plain"], body: ResponseBody(byteBuffer: ByteBuffer(string: "ok\n")))
  }
  return router
}

/// A refusal: a status and one line of text.
/// The router's bare 404 as one line, and 405 for a route's path asked
/// with another method.
private struct Unrouted<Context: RequestContext>: RouterMiddleware {
  func handle(
    _ request: Request, context: Context, next: (Request, Context) async throws -> Response
  ) async throws -> Response {
    do {
      return try await next(request, context)
    } catch let error as HTTPError where error.status == .notFound {
      let path = request.uri.path
      guard let allowed = methods(answering: path) else {
        return Refusal(.notFound, "no route \(request.method) \(path)").response
      }
      var refusal = Refusal(.methodNotAllowed, "\(path) answers \(allowed), not \(request.method)")
      refusal.headers[.allow] = allowed
      return refusal.response
    }
  }

  private func methods(answering path: String) -> String? {
    let parts = Array(path.split(separator: "/", omittingEmptySubsequences: false).dropFirst())
    if parts == ["metrics"] || parts == ["health"] { return "GET" }
    guard parts.count == 2 || parts.count == 3, parts[0] == "customers", !parts[1].isEmpty else { return nil }
    switch parts.count == 2 ? "" : parts[2] {
    case "", "events": return "GET"
    case "actions": return "POST"
    default: return nil
    }
  }
}

struct Refusal: Error {
  var status: HTTPResponse.Status
  var reason: String
  var headers: HTTPFields = [:]

  init(_ status: HTTPResponse.Status, _ reason: String) {
    self.status = status
    self.reason = reason
  }

  /// `failure` answering a request for `path`.
  init(_ failure: BackendFailure, at path: String) {
    switch failure {
    case .mailboxFull:
      self.init(.serviceUnavailable, "the customer's mailbox is full; retry after a second")
      headers[.retryAfter] = "1"
    case .shuttingDown:
      self.init(.serviceUnavailable, "the server is shutting down")
    case .storage(let message):
      self.init(.internalServerError, "storage failed: \(message)")
    case .ownedElsewhere(let owner):
      // 307 keeps a POST a POST, with its body.
      self.init(.temporaryRedirect, "the customer is active at \(owner)")
      headers[.location] = "http://\(owner)\(path)"
    case .unavailable(let message):
      self.init(.serviceUnavailable, "the database is unavailable; retry after a second: \(message)")
      headers[.retryAfter] = "1"
    }
  }

  var response: Response {
    var fields = headers
    fields[.contentType] = "text/plain; charset=utf-8"
    return Response(
      status: status, headers: fields, body: ResponseBody(byteBuffer: ByteBuffer(string: oneLine(reason) + "\n")))
  }
}

/// A customer id from the path: 1 to 64 ASCII letters, digits, `-` or `_`.
private func customerID(_ context: BasicRequestContext) -> Result<String, Refusal> {
  let id = context.parameters.get("id") ?? ""
  let allowed = id.utf8.allSatisfy { byte in
    (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
      || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: "-")
      || byte == UInt8(ascii: "_")
  }
  guard allowed, (1...64).contains(id.utf8.count) else {
    return .failure(Refusal(.badRequest, "a customer id is 1 to 64 letters, digits, '-' or '_'"))
  }
  return .success(id)
}

private func respond(to outcome: BackendOutcome, at path: String) -> Response {
  switch outcome {
  case .failed(let failure): return Refusal(failure, at: path).response
  case .state(let customer):
    return Response(
      status: .ok, headers: [.contentType: "application/json"],
      body: ResponseBody(byteBuffer: ByteBuffer(string: json(customer))))
  }
}

/// One observer per streamed customer, however many clients stream it:
/// each state is encoded once and its bytes go to every client's stream.
/// A thousand clients of one customer cost the core one observer.
///
/// A client that reads slower than states change is ended once `backlog`
/// events wait for it, so a stalled client holds a bounded buffer.
///
/// A client that leaves is noticed only when a write to it fails, so each
/// topic also sends every client a comment line each `heartbeat`: a client
/// gone from a customer that never changes does not hold its stream, its
/// connection and the entity's observer forever.
public final class EventHub: Sendable {
  private struct Topic {
    var generation: Int
    var clients: [Int: AsyncStream<ByteBuffer>.Continuation] = [:]
    var last: ByteBuffer?
    var tasks: [Task<Void, Never>] = []
  }
  private struct Topics {
    var next = 0
    var byID: [String: Topic] = [:]
    /// Callers of `waitUntilIdle(_:)`, by customer.
    var idleWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
  }
  private let topics = Mutex(Topics())
  private let heartbeat: Duration
  private let backlog: Int
  private let clock: any Clock<Duration>
  private static let comment = ByteBuffer(string: ":\n\n")

  /// A hub whose topics send a comment line to every client each
  /// `heartbeat` on `clock`, and end a client that has `backlog` events
  /// not yet written (it reconnects, and gets the latest state first).
  public init(
    heartbeat: Duration = .seconds(15), backlog: Int = 256, clock: any Clock<Duration> = ContinuousClock()
  ) {
    if heartbeat <= .zero { fatalError("an EventHub's heartbeat must be positive, not \(heartbeat)") }
    if backlog < 1 { fatalError("an EventHub's backlog must be at least 1, not \(backlog)") }
    self.heartbeat = heartbeat
    self.backlog = backlog
    self.clock = clock
  }

  /// Returns once `id` has no client left (at once if it has none).
  public func waitUntilIdle(_ id: String) async {
    await withCheckedContinuation { continuation in
      let idle = topics.withLock { topics in
        guard topics.byID[id] != nil else { return true }
        topics.idleWaiters[id, default: []].append(continuation)
        return false
      }
      if idle { continuation.resume() }
    }
  }

  /// The events of `id` for one client: the latest state first, then every
  /// state after it. `states` feeds the customer's topic if it has none yet;
  /// otherwise it is dropped, and its observer with it.
  /// `end` finishes the client's stream from anywhere.
  public func join(
    _ id: String, _ states: AsyncStream<Customer>
  ) -> (events: AsyncStream<ByteBuffer>, end: @Sendable () -> Void) {
    let (events, client) = AsyncStream<ByteBuffer>.makeStream(bufferingPolicy: .bufferingOldest(backlog))
    let key = topics.withLock { topics in
      topics.next += 1
      let key = topics.next
      if topics.byID[id] == nil {
        var topic = Topic(generation: key)
        topic.tasks = [Task { await self.publish(id, key, states) }, Task { await self.beat(id, key) }]
        topics.byID[id] = topic
      }
      topics.byID[id]!.clients[key] = client
      if let last = topics.byID[id]!.last { client.yield(last) }
      return key
    }
    client.onTermination = { _ in self.leave(id, key) }
    return (events, { client.finish() })
  }

  private func publish(_ id: String, _ generation: Int, _ states: AsyncStream<Customer>) async {
    for await customer in states {
      let event = ByteBuffer(string: "data: \(json(customer))\n\n")
      let behind = topics.withLock { topics -> [AsyncStream<ByteBuffer>.Continuation] in
        guard topics.byID[id]?.generation == generation else { return [] }
        topics.byID[id]!.last = event
        return Self.yield(event, to: topics.byID[id]!.clients.values)
      }
      for client in behind { client.finish() }
    }
    // The registry shut down, or the topic was cancelled: its clients end.
    let (topic, waiters) = topics.withLock { topics -> (Topic?, [CheckedContinuation<Void, Never>]) in
      guard topics.byID[id]?.generation == generation else { return (nil, []) }
      return Self.remove(id, from: &topics)
    }
    for client in topic.map({ Array($0.clients.values) }) ?? [] { client.finish() }
    Self.release(topic, waiters)
  }

  /// Yields `event` to each client; returns those whose backlog is full,
  /// to be finished outside the lock (finishing one calls `leave`).
  private static func yield(
    _ event: ByteBuffer, to clients: some Sequence<AsyncStream<ByteBuffer>.Continuation>
  ) -> [AsyncStream<ByteBuffer>.Continuation] {
    clients.filter { client in
      if case .dropped = client.yield(event) { return true }
      return false
    }
  }

  private func beat(_ id: String, _ generation: Int) async {
    while (try? await clock.sleep(for: heartbeat)) != nil {
      let behind = topics.withLock { topics -> [AsyncStream<ByteBuffer>.Continuation] in
        guard topics.byID[id]?.generation == generation else { return [] }
        return Self.yield(Self.comment, to: topics.byID[id]!.clients.values)
      }
      for client in behind { client.finish() }
    }
  }

  private func leave(_ id: String, _ key: Int) {
    let (topic, waiters) = topics.withLock { topics -> (Topic?, [CheckedContinuation<Void, Never>]) in
      guard topics.byID[id]?.clients.removeValue(forKey: key) != nil, topics.byID[id]!.clients.isEmpty else {
        return (nil, [])
      }
      return Self.remove(id, from: &topics)
    }
    Self.release(topic, waiters)
  }

  private static func remove(
    _ id: String, from topics: inout Topics
  ) -> (Topic?, [CheckedContinuation<Void, Never>]) {
    (topics.byID.removeValue(forKey: id), topics.idleWaiters.removeValue(forKey: id) ?? [])
  }

  /// Outside the lock: stops a removed topic's tasks, resumes its waiters.
  private static func release(_ topic: Topic?, _ waiters: [CheckedContinuation<Void, Never>]) {
    for task in topic?.tasks ?? [] { task.cancel() }
    for waiter in waiters { waiter.resume() }
  }
}

/// The state as one line of JSON, keys sorted.
func json(_ customer: Customer) -> String {
  let encoder = JSONEncoder()
  encoder.outputFormatting = [.sortedKeys]
  // Safety: Customer holds strings, integers and booleans, which always encode.
  return String(decoding: try! encoder.encode(customer), as: UTF8.self)
}

/// A decoding error in a line, without Foundation's coding-path dump.
private func describe(_ error: any Error) -> String {
  switch error {
  case DecodingError.dataCorrupted(let context): return context.debugDescription
  case DecodingError.keyNotFound(let key, _): return "no \"\(key.stringValue)\""
  case DecodingError.typeMismatch(_, let context), DecodingError.valueNotFound(_, let context):
    let path = context.codingPath.map(\.stringValue).joined(separator: ".")
    return "\(path.isEmpty ? "the body" : path): \(context.debugDescription)"
  default: return "\(error)"
  }
}
