import Testing

@testable import AsyncCore

/// The second level of the core's queue, driven directly: what the drain
/// took from the mailbox beyond a slice, cut into slices with no lock held.
@Suite("Mailbox backlog")
struct MailboxBacklogTests {
  @Test("slices come out oldest first, at most the limit each, and the last one empties the backlog")
  func slicesOldestFirst() {
    var backlog = MailboxBacklog<Int>()
    var adopted = Array(0..<10)
    backlog.adopt(&adopted)
    #expect(adopted.isEmpty && backlog.count == 10)
    #expect(Self.take(4, from: &backlog) == [0, 1, 2, 3] && backlog.count == 6)
    #expect(Self.take(4, from: &backlog) == [4, 5, 6, 7] && !backlog.isEmpty)
    #expect(Self.take(4, from: &backlog) == [8, 9] && backlog.isEmpty)
  }

  @Test("adopting takes the batch's array itself, in place, and gives back the backlog's emptied one")
  func adoptSwaps() {
    var backlog = MailboxBacklog<Int>()
    var adopted = Array(0..<1_000)
    let storage = adopted.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    backlog.adopt(&adopted)
    #expect(backlog.reversed.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } == storage)
    #expect(adopted.isEmpty)
  }

  @Test("a limit below one still takes one element")
  func takesAtLeastOne() {
    var backlog = MailboxBacklog<Int>()
    var adopted = [1, 2]
    backlog.adopt(&adopted)
    #expect(Self.take(0, from: &backlog) == [1] && backlog.count == 1)
  }

  @Test("a consumed element is released at once, not kept by the backlog until the last slice")
  func consumedElementsAreReleased() {
    let tokens = LiveTokens()
    var backlog = MailboxBacklog<LiveToken>()
    var adopted = tokens.make(10)
    backlog.adopt(&adopted)
    var aliveWhileConsumed = 0
    backlog.consumeOldest(max: 4) { _ in aliveWhileConsumed = tokens.count }
    #expect(aliveWhileConsumed == 10)
    #expect(tokens.count == 6, "the 4 consumed are gone")
    backlog.consumeOldest(max: .max) { _ in }
    #expect(tokens.count == 0)
  }

  /// The elements `consumeOldest(max:)` passes, in the order passed.
  static func take(_ max: Int, from backlog: inout MailboxBacklog<Int>) -> [Int] {
    var taken: [Int] = []
    let count = backlog.consumeOldest(max: max) { taken = Array($0) }
    #expect(count == taken.count)
    return taken
  }
}
