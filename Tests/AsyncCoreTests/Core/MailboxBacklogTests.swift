import Testing

@testable import AsyncCore

/// The second level of the core's queue, driven directly: what the drain
/// took from the mailbox beyond a slice, cut into slices with no lock held.
@Suite("Mailbox backlog")
struct MailboxBacklogTests {
  @Test("slices come out oldest first, at most the limit each, and the last one empties the backlog")
  func slicesOldestFirst() {
    var backlog = MailboxBacklog<Int>()
    var adopted: [Int?] = Array(0..<10)
    backlog.adopt(&adopted)
    #expect(adopted.isEmpty && backlog.count == 10)
    var batch: [Int?] = []
    backlog.take(max: 4, into: &batch)
    #expect(batch == [0, 1, 2, 3] && backlog.count == 6)
    batch.removeAll()
    backlog.take(max: 4, into: &batch)
    #expect(batch == [4, 5, 6, 7] && !backlog.isEmpty)
    batch.removeAll()
    backlog.take(max: 4, into: &batch)
    #expect(batch == [8, 9] && backlog.isEmpty)
    #expect(backlog.slots.isEmpty && backlog.head == 0, "emptied: the adopted array is let go")
  }

  @Test("adopting takes the batch's array itself, and gives back the backlog's emptied one")
  func adoptSwaps() {
    var backlog = MailboxBacklog<Int>()
    var adopted: [Int?] = Array(0..<1_000)
    let storage = adopted.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) }
    backlog.adopt(&adopted)
    #expect(backlog.slots.withUnsafeBufferPointer { UnsafeRawPointer($0.baseAddress) } == storage)
    #expect(adopted.isEmpty)
  }

  @Test("a limit below one still takes one element")
  func takesAtLeastOne() {
    var backlog = MailboxBacklog<Int>()
    var adopted: [Int?] = [1, 2]
    backlog.adopt(&adopted)
    var batch: [Int?] = []
    backlog.take(max: 0, into: &batch)
    #expect(batch == [1] && backlog.count == 1)
  }

  @Test("a taken element is released with its batch, not kept by the backlog until the last slice")
  func takenElementsAreReleased() {
    let tokens = LiveTokens()
    var backlog = MailboxBacklog<LiveToken>()
    var adopted: [LiveToken?] = tokens.make(10)
    backlog.adopt(&adopted)
    var batch: [LiveToken?] = []
    backlog.take(max: 4, into: &batch)
    #expect(tokens.count == 10)
    batch.removeAll()
    #expect(tokens.count == 6, "the 4 taken are gone with their batch")
    backlog.take(max: .max, into: &batch)
    batch.removeAll()
    #expect(tokens.count == 0)
  }
}
