import AsyncCore

/// One producer: places its feed's orders into the core, one after another.
struct Producer: Sendable {
  let index: Int
  /// How many orders to place; `nil`: until cancelled.
  let limit: Int?
  let interval: Duration?
  /// The sequence of its last order placed before (in the journal): the
  /// feed goes on from the next.
  var after = 0

  /// Places orders until the limit, cancellation, or the core refusing one
  /// (it has begun to shut down, or the journal failed), calling
  /// `acknowledge` after each accepted one; returns how many the core
  /// accepted, and the journal's error if that is why it stopped.
  func run(
    into core: Core<Orders, OrderAction>, clock: any Clock<Duration>,
    acknowledge: (@Sendable (Order) async -> Void)? = nil
  ) async -> (accepted: Int, failure: CoreError?) {
    var feed = OrderFeed(producer: index)
    for _ in 0..<after { _ = feed.nextOrder() }
    var accepted = 0
    while accepted != limit, !Task.isCancelled {
      // Returns once reduced (on a journal, once on disk too). Once
      // shutdown has begun it throws `.shutDown`; the order is not counted.
      let order = feed.nextOrder()
      do {
        try await core.dispatch(.placed(order))
      } catch .shutDown {
        break
      } catch {
        return (accepted, error)
      }
      accepted += 1
      await acknowledge?(order)
      if accepted == limit { break }
      if let interval {
        do { try await clock.sleep(for: interval) } catch { break }  // cancelled
      } else {
        await Task.yield()
      }
    }
    return (accepted, nil)
  }
}
