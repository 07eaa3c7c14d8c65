// The load report's SSE fan-out: opens N server-sent event streams on one
// customer, then places an order at a time and measures how long after each
// POST the last client has the new state. Prints one line of JSON.
//
//   sse-fanout --port P [--clients 1000] [--rounds 100] [--pid SERVER_PID]

import Foundation
import NIOCore
import NIOPosix
import SSEClient
import Synchronization

struct Options {
  var port = 8080
  var clients = 1_000
  var rounds = 100
  var pid: Int32?
}

var options = Options()
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
  guard let value = arguments.popFirst(), let number = Int(value) else {
    FileHandle.standardError.write(Data("sse-fanout: \(flag) needs a number\n".utf8))
    exit(64)
  }
  switch flag {
  case "--port": options.port = number
  case "--clients": options.clients = number
  case "--rounds": options.rounds = number
  case "--pid": options.pid = Int32(number)
  default:
    FileHandle.standardError.write(Data("sse-fanout: unknown option \(flag)\n".utf8))
    exit(64)
  }
}

/// The server's resident memory, from /proc, in bytes.
func residentBytes(of pid: Int32?) -> Int? {
  guard let pid, let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
  guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }) else { return nil }
  return line.split(separator: " ").compactMap { Int($0) }.first.map { $0 * 1_024 }
}

/// How many clients have seen each round's state, and when the last did.
final class Arrivals: Sendable {
  struct State {
    var counts: [Int]
    var last: [ContinuousClock.Instant?]
    var waiter: (round: Int, continuation: CheckedContinuation<ContinuousClock.Instant, Never>)?
  }
  let clients: Int
  let state: Mutex<State>

  init(clients: Int, rounds: Int) {
    self.clients = clients
    state = Mutex(State(counts: Array(repeating: 0, count: rounds + 1), last: Array(repeating: nil, count: rounds + 1)))
  }

  func arrived(round: Int, at instant: ContinuousClock.Instant) {
    let resume: (CheckedContinuation<ContinuousClock.Instant, Never>, ContinuousClock.Instant)? = state.withLock {
      state in
      guard state.counts.indices.contains(round) else { return nil }
      state.counts[round] += 1
      guard state.counts[round] == clients else { return nil }
      state.last[round] = instant
      guard let waiter = state.waiter, waiter.round == round else { return nil }
      state.waiter = nil
      return (waiter.continuation, instant)
    }
    if let (continuation, instant) = resume { continuation.resume(returning: instant) }
  }

  /// When the last client saw `round`'s state.
  func all(_ round: Int) async -> ContinuousClock.Instant {
    await withCheckedContinuation { continuation in
      let done: ContinuousClock.Instant? = state.withLock { state in
        if let instant = state.last[round] { return instant }
        state.waiter = (round, continuation)
        return nil
      }
      if let done { continuation.resume(returning: done) }
    }
  }
}

/// Round r's state totals r cents. Its key is the last one (keys are sorted),
/// so the figure is the digits before the closing brace; read as bytes, since
/// a thousand clients read every state.
func totalCents(_ data: String) -> Int? {
  let bytes = data.utf8
  guard bytes.last == UInt8(ascii: "}") else { return nil }
  let digits = bytes.dropLast().reversed().prefix { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
  guard bytes.dropLast(digits.count + 1).reversed().starts(with: #""totalCents":"#.utf8.reversed()) else { return nil }
  return Int(String(decoding: digits.reversed(), as: UTF8.self))
}

let customer = "fanout-\(getpid())"
let arrivals = Arrivals(clients: options.clients, rounds: options.rounds)
let before = residentBytes(of: options.pid)
var streams: [HTTP.EventStream] = []
let group = MultiThreadedEventLoopGroup.singleton
for start in stride(from: 0, to: options.clients, by: 100) {
  try await withThrowingTaskGroup(of: HTTP.EventStream.self) { opening in
    for _ in start..<min(start + 100, options.clients) {
      opening.addTask {
        try await HTTP.events("/customers/\(customer)/events", port: options.port, group: group) { data in
          let now = ContinuousClock.now
          arrivals.arrived(round: totalCents(data) ?? -1, at: now)
        }
      }
    }
    for try await stream in opening { streams.append(stream) }
  }
}
_ = await arrivals.all(0)
let after = residentBytes(of: options.pid)

var samples: [Duration] = []
for round in 1...options.rounds {
  let sent = ContinuousClock.now
  let body = #"{"place":{"reference":"f-\#(round)","amountCents":1}}"#
  let response = try await HTTP.request(.POST, "/customers/\(customer)/actions", body: body, port: options.port)
  guard response.status == 200 else {
    FileHandle.standardError.write(Data("sse-fanout: POST answered \(response.status): \(response.body)".utf8))
    exit(1)
  }
  samples.append(await arrivals.all(round) - sent)
}
for stream in streams { await stream.close() }

func milliseconds(_ duration: Duration) -> Double {
  Double(duration.components.seconds) * 1e3 + Double(duration.components.attoseconds) / 1e15
}
let sorted = samples.map(milliseconds).sorted()
func percentile(_ p: Double) -> Double {
  sorted[min(sorted.count - 1, Int((p * Double(sorted.count)).rounded(.up)) - 1)]
}
var report: [String: Double] = [
  "clients": Double(options.clients), "rounds": Double(options.rounds),
  "p50_ms": percentile(0.5), "p99_ms": percentile(0.99), "max_ms": sorted.last ?? 0,
]
if let before, let after {
  report["rss_before_bytes"] = Double(before)
  report["rss_after_bytes"] = Double(after)
  report["bytes_per_client"] = Double(after - before) / Double(options.clients)
}
let line = try JSONSerialization.data(withJSONObject: report, options: [.sortedKeys])
print(String(decoding: line, as: UTF8.self))
