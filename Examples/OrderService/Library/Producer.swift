import AsyncCore

/// One producer: sends its feed's orders into the core, one after another.
struct Producer: Sendable {
  let index: Int
  /// How many orders to place; `nil`: until cancelled.
  let limit: Int?
  let interval: Duration?

  /// Sends orders until the limit, cancellation, or the core refusing one
  /// (it has begun to shut down), and returns how many the core accepted.
  func run(into core: Core<Orders, OrderAction>, clock: any Clock<Duration>) async -> Int {
    var feed = OrderFeed(producer: index)
    var accepted = 0
    while accepted != limit, !Task.isCancelled {
      // `send` returns once the order is queued: it is reduced even if the
      // service is cancelled right after. Once shutdown has begun it
      // returns `.shutDown` and the order is not counted.
      guard core.send(.placed(feed.nextOrder())) == .accepted else { break }
      accepted += 1
      if accepted == limit { break }
      if let interval {
        do { try await clock.sleep(for: interval) } catch { break }  // cancelled
      } else {
        await Task.yield()
      }
    }
    return accepted
  }
}
