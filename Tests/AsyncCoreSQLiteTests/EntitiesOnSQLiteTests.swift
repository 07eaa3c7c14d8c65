import AsyncCore
import AsyncCoreJournal
import AsyncCoreSQLite
import AsyncCoreTestSupport
import Testing

/// A registry of entities on a SQLite store, in this process: what is
/// stored survives the registry, and constant passivation loses nothing.
@Suite("Entities on a SQLite store")
struct EntitiesOnSQLiteTests {
  func makeCarts(_ store: CartStore, maxActive: Int? = nil) -> Entities<String, Cart, CartAction> {
    Entities(
      store: store, passivation: Passivation(idleAfter: nil, maxActive: maxActive), initialState: { _ in Cart() },
      reducer: cartReducer)
  }

  @Test("a registry's entities, stored at its shutdown, are what the next registry on the file activates")
  func survivesTheRegistry() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let first = makeCarts(try CartStore(path: scratch.database, durability: .everyAction))
    try await first.dispatch(.add("tea"), to: "ada")
    first.send(.add("milk"), to: "ada")
    try await first.dispatch(.add("jam"), to: "bob")
    await first.shutdown()

    let second = makeCarts(try CartStore(path: scratch.database, durability: .everyAction))
    #expect(try await second.state(of: "ada").items == ["tea", "milk"])
    #expect(try await second.state(of: "bob").items == ["jam"])
    #expect(try await second.state(of: "cy").items == [])
    await second.shutdown()
  }

  @Test(
    "a registry dropped without shutdown: its acknowledged actions are in the records"
  )
  func recoversTheTail() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database, durability: .everyAction)
    do {
      let carts = makeCarts(store)
      try await carts.dispatch(.add("tea"), to: "ada")
      try await carts.dispatch(.add("milk"), to: "ada")
      // No shutdown: the entity's records are all the store has of it.
      try await carts.withCore("ada") { core in try await core.sync() }
    }
    let journal = try await store.journal(for: "ada")
    let (state, actions) = try await recovered(journal)
    #expect(state == nil)
    #expect(actions == [.add("tea"), .add("milk")])
    await journal.close()
  }

  @Test(
    "sends raced against constant passivation on SQLite: each action once, in order")
  func raceOnSQLite() async throws {
    let scratch = try Scratch()
    defer { scratch.remove() }
    let store = try CartStore(path: scratch.database, durability: .operatingSystem, snapshotEvery: 5)
    let carts = makeCarts(store, maxActive: 2)
    let ids = (0..<8).map { "customer \($0)" }
    try await withThrowingTaskGroup(of: Void.self) { group in
      for sender in 0..<4 {
        group.addTask {
          for i in 0..<100 {
            let id = ids[(sender * 7 + i * 3) % ids.count]
            if i.isMultiple(of: 2) {
              try await carts.dispatch(.add("\(sender)-\(i)"), to: id)
            } else {
              #expect(carts.send(.add("\(sender)-\(i)"), to: id) == .accepted)
            }
          }
        }
      }
      try await group.waitForAll()
    }
    #expect(carts.metrics.passivations > 0)
    await carts.shutdown()
    let reopened = makeCarts(try CartStore(path: scratch.database, durability: .operatingSystem))
    var all: [String] = []
    for id in ids {
      let items = try await reopened.state(of: id).items
      for sender in 0..<4 {
        let mine = items.filter { $0.hasPrefix("\(sender)-") }.map { Int($0.split(separator: "-")[1])! }
        #expect(mine == mine.sorted(), "\(id): sender \(sender) out of order")
      }
      all += items
    }
    #expect(all.count == 400)
    #expect(Set(all).count == 400)
    await reopened.shutdown()
  }
}
