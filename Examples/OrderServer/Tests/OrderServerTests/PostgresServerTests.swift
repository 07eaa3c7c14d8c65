import Foundation
import NIOHTTP1
import OrderServer
import PostgresNIO
import SSEClient
import Synchronization
import Testing

/// Orders placed from several tasks through a balancer over the servers,
/// each with a reference of its own, and what became of each.
private final class ClusterLoad: Sendable {
  let customers: [String]
  let balanced: Balanced
  let dead = Mutex<Set<Int>>([])
  let attempted = Mutex<Set<String>>([])
  let acknowledged = Mutex<[String: String]>([:])  // reference → customer
  /// Each customer's server at its last 200.
  let owners = Mutex<[String: Int]>([:])
  /// Every server that answered 200 for each customer.
  let servedBy = Mutex<[String: Set<Int>]>([:])
  let statuses = Mutex<[Int: Int]>([:])  // status → count, nil answers as 0
  let unavailable = Mutex<[HTTP.Response]>([])
  private let events: AsyncStream<Int>.Continuation
  /// Each answer's status as it comes (0 for none), for a test to act on.
  let answers: AsyncStream<Int>
  private let round = Atomic(0)

  init(customers: Int, ports: [Int]) {
    self.customers = (0..<customers).map { "c\($0)" }
    balanced = Balanced(ports: ports)
    (answers, events) = AsyncStream.makeStream()
  }

  /// `tasks` tasks place orders until `until` returns true (asked after
  /// each answer, with the number acknowledged so far).
  func run(tasks: Int, redirects: Int = 1, until: @escaping @Sendable (Int) -> Bool) async {
    let run = round.add(1, ordering: .relaxed).newValue
    await withTaskGroup(of: Void.self) { group in
      for task in 0..<tasks {
        group.addTask {
          var number = 0
          while true {
            number += 1
            let reference = "r\(run)t\(task)-\(number)"
            let customer = self.customers[(task * 7 + number) % self.customers.count]
            self.attempted.withLock { _ = $0.insert(reference) }
            let body = #"{"place":{"reference":"\#(reference)","amountCents":1}}"#
            let answer = await self.balanced.request(
              .POST, "/customers/\(customer)/actions", body: body, first: Int.random(in: 0..<self.balanced.ports.count),
              redirects: redirects,
              dead: self.dead)
            let status = answer?.response.status ?? 0
            self.statuses.withLock { $0[status, default: 0] += 1 }
            if status == 503, let response = answer?.response { self.unavailable.withLock { $0.append(response) } }
            var count = self.acknowledged.withLock { $0.count }
            if let answer, status == 200 {
              count = self.acknowledged.withLock {
                $0[reference] = customer
                return $0.count
              }
              self.owners.withLock { $0[customer] = answer.port }
              self.servedBy.withLock { _ = $0[customer, default: []].insert(answer.port) }
            }
            self.events.yield(status)
            if until(count) { return }
          }
        }
      }
    }
  }

  /// Reads every customer through the balancer and checks that each
  /// acknowledged order is there exactly once and nothing else but what
  /// was attempted; and that each customer's history on the server, its
  /// snapshot's number and then its records', has no gap and no duplicate.
  func check(_ cluster: Cluster) async throws {
    var seen: [String: Int] = [:]
    for customer in customers {
      guard
        let answer = await balanced.request(.GET, "/customers/\(customer)", first: 0, redirects: 2, dead: dead)
      else {
        Issue.record("no server answered for \(customer)")
        continue
      }
      if answer.response.status == 404 { continue }
      try #require(answer.response.status == 200, "\(customer): \(answer.response.status) \(answer.response.body)")
      let state = try JSONDecoder().decode(Customer.self, from: Data(answer.response.body.utf8))
      for order in state.orders { seen[order.reference, default: 0] += 1 }
    }
    let acknowledged = self.acknowledged.withLock { $0 }
    let attempted = self.attempted.withLock { $0 }
    expectEachAcknowledgedOnce(seen: seen, acknowledged: acknowledged.keys, attempted: attempted)
    let histories = try await cluster.sequences()
    #expect(!histories.isEmpty)
    for (entity, sequences) in histories {
      let expected = Array(sequences[0]...(sequences[0] + Int64(sequences.count) - 1))
      #expect(sequences == expected, "\(entity)'s history has a gap or a duplicate: \(sequences.prefix(20))")
    }
  }
}

@Suite(
  "OrderServer on PostgreSQL: three processes, kill -9, racing owners, a restarted server, a cut connection",
  .serialized,
  .enabled(if: SharedPostgres.isAvailable, Comment(rawValue: SharedPostgres.skipped)))
struct PostgresServerTests {
  @Test("a customer active in one process is redirected to it from another (307, Location names the owner)")
  func redirects() async throws {
    let cluster = Cluster()
    let a = try await cluster.start()
    let b = try await cluster.start()
    let body = #"{"place":{"reference":"r-1","amountCents":5}}"#
    #expect(try await HTTP.request(.POST, "/customers/ann/actions", body: body, port: a.port).status == 200)
    let refused = try await HTTP.request(.POST, "/customers/ann/actions", body: body, port: b.port)
    #expect(refused.status == 307)
    #expect(refused.header("Location") == "http://127.0.0.1:\(a.port)/customers/ann/actions")
    #expect(refused.body == "the customer is active at 127.0.0.1:\(a.port)\n")
    let read = try await HTTP.request(.GET, "/customers/ann", port: b.port)
    #expect(read.status == 307)
    #expect(read.header("Location") == "http://127.0.0.1:\(a.port)/customers/ann")
    // After A's shutdown (ann stored and let go), B takes ann, with A's order.
    #expect(await a.terminate() == 0)
    let taken = try await HTTP.request(.GET, "/customers/ann", port: b.port)
    #expect(taken.status == 200)
    #expect(try references(taken) == ["r-1"])
    #expect(await b.terminate() == 0)
    try await cluster.drop()
  }

  @Test(
    "kill -9 of one of three processes mid-load: the others take its customers, each with exactly its acknowledged orders"
  )
  func handoverAfterKill() async throws {
    let cluster = Cluster()
    var servers: [ServerProcess] = []
    for _ in 0..<3 { servers.append(try await cluster.start()) }
    let victim = servers[0]
    let load = ClusterLoad(customers: 30, ports: servers.map(\.port))
    await load.run(tasks: 6) { acknowledged in acknowledged >= 300 }
    let lost = Set(load.owners.withLock { $0.filter { $0.value == victim.port }.map(\.key) })
    #expect(!lost.isEmpty, "the victim held no customer")
    let killed = Atomic(false)
    await load.run(tasks: 6) { acknowledged in
      if acknowledged >= 400, !killed.exchange(true, ordering: .relaxed) { victim.signal(SIGKILL) }
      return acknowledged >= 900
    }
    #expect(await victim.status == -SIGKILL)
    // Every customer the victim held answered 200 from another process.
    let owners = load.owners.withLock { $0 }
    for customer in lost {
      #expect(owners[customer] != victim.port, "\(customer) was not taken over")
    }
    try await load.check(cluster)
    for server in servers.dropFirst() {
      #expect(await server.terminate() == 0)
    }
    try await cluster.drop()
  }

  @Test(
    "never two owners: three processes racing to activate 30 customers, each holding two at most, history unforked",
    arguments: [false, true])
  func neverTwoOwners(followingRedirects: Bool) async throws {
    let cluster = Cluster()
    var servers: [ServerProcess] = []
    for _ in 0..<3 { servers.append(try await cluster.start(["--max-active", "2"])) }
    let load = ClusterLoad(customers: 30, ports: servers.map(\.port))
    await load.run(tasks: 8, redirects: followingRedirects ? 1 : 0) { acknowledged in acknowledged >= 600 }
    // The customers moved between the processes: each was let go by one
    // and taken by another, while the others raced for it.
    let moved = load.servedBy.withLock { $0.values.filter { $0.count > 1 }.count }
    #expect(moved > 0, "\(load.statuses.withLock { $0 })")
    try await load.check(cluster)
    for server in servers {
      #expect(await server.terminate() == 0)
    }
    #expect(try await cluster.sequences().count == 30)
    try await cluster.drop()
  }

  @Test("PostgreSQL stopped mid-load: POSTs get 503 with Retry-After while it is down, succeed after, nothing lost")
  func postgresRestarted() async throws {
    let cluster = Cluster()
    let server = try await cluster.start()
    let load = ClusterLoad(customers: 10, ports: [server.port])
    await load.run(tasks: 4) { acknowledged in acknowledged >= 100 }
    try await SharedPostgres.control("stop")
    // Some 503s while it is down; then it starts on its port, and the load
    // goes on until 100 more are acknowledged.
    let before = load.acknowledged.withLock { $0.count }
    let down = Atomic(0)
    let loading = Task {
      await load.run(tasks: 4) { acknowledged in acknowledged >= before + 100 }
    }
    for await status in load.answers where status == 503 {
      if down.add(1, ordering: .relaxed).newValue == 20 { break }
    }
    let acknowledgedWhileDown = load.acknowledged.withLock { $0.count } - before
    try await SharedPostgres.control("start")
    await loading.value
    #expect(acknowledgedWhileDown <= 4, "acknowledged while the server was down: \(acknowledgedWhileDown)")
    let refusals = load.unavailable.withLock { $0 }
    #expect(!refusals.isEmpty)
    for refusal in refusals.prefix(5) {
      #expect(refusal.header("Retry-After") == "1")
      #expect(
        refusal.body.hasPrefix("the database is unavailable; retry after a second: ")
          || refusal.body == "the customer's mailbox is full; retry after a second\n", "\(refusal.body)")
    }
    try await load.check(cluster)
    #expect(await server.terminate() == 0)
    try await cluster.drop()
  }

  @Test(
    "a process cut off from the database (pg_terminate_backend) stops acknowledging: its next POST is refused, the customer moves on"
  )
  func connectionTerminated() async throws {
    let cluster = Cluster()
    let a = try await cluster.start()
    let b = try await cluster.start()
    func place(_ reference: String, at server: ServerProcess) async throws -> HTTP.Response {
      try await HTTP.request(
        .POST, "/customers/ann/actions", body: #"{"place":{"reference":"\#(reference)","amountCents":5}}"#,
        port: server.port)
    }
    #expect(try await place("r-1", at: a).status == 200)
    let admin = try await SharedPostgres.connect()
    let rows = try await admin.query(
      """
      SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 60000))::int
      FROM (SELECT pid FROM pg_stat_activity WHERE application_name = \("127.0.0.1:\(a.port)") OFFSET 0) AS a
      """, logger: SharedPostgres.logger)
    var terminated = 0
    for try await count in rows.decode(Int.self) { terminated = count }
    #expect(terminated >= 1)
    try await admin.close()
    // A's hold on ann is gone with its session: B takes ann, with r-1.
    let taken = try await place("r-2", at: b)
    #expect(taken.status == 200, "\(taken.status) \(taken.body)")
    #expect(try references(taken) == ["r-1", "r-2"])
    // A never acknowledges for ann again: its append fails (503), then it
    // finds B the owner (307).
    var answers: [Int] = []
    for attempt in 0..<20 {
      let answer = try await place("a-\(attempt)", at: a)
      answers.append(answer.status)
      if answer.status == 307 {
        #expect(answer.header("Location") == "http://127.0.0.1:\(b.port)/customers/ann/actions")
        break
      }
    }
    #expect(!answers.contains(200), "\(answers)")
    #expect(answers.last == 307, "\(answers)")
    let state = try await HTTP.request(.GET, "/customers/ann", port: b.port)
    #expect(try references(state) == ["r-1", "r-2"])
    for server in [a, b] {
      #expect(await server.terminate() == 0)
    }
    try await cluster.drop()
  }
}

/// The references of the orders in a customer's state, as a response carries it.
private func references(_ response: HTTP.Response) throws -> [String] {
  try JSONDecoder().decode(Customer.self, from: Data(response.body.utf8)).orders.map(\.reference)
}
