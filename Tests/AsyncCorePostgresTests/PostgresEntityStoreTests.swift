#if Postgres
  import AsyncCore
  import AsyncCoreJournal
  import AsyncCorePostgres
  import AsyncCoreTestSupport
  import PostgresNIO
  import Testing

  @Suite(
    "PostgreSQL store: journals, ownership, fencing",
    .enabled(if: PostgresServer.isAvailable || PostgresServer.isRequired, Comment(rawValue: PostgresServer.skipped)),
    .timeLimit(.minutes(5)))
  struct PostgresEntityStoreTests {
    func makeCarts(_ store: CartStore, maxActive: Int? = nil) -> Entities<String, Cart, CartAction> {
      Entities(
        store: store, passivation: Passivation(idleAfter: nil, maxActive: maxActive), initialState: { _ in Cart() },
        reducer: cartReducer)
    }

    @Test("a registry's entities, stored at its shutdown (records and snapshots), are what the next store reads")
    func roundTrip() async throws {
      let namespace = Namespace()
      let first = makeCarts(try await namespace.store(snapshotEvery: 2))
      try await first.dispatch(.add("tea"), to: "ada")
      try await first.dispatch(.add("milk"), to: "ada")
      try await first.dispatch(.add("jam"), to: "ada")
      try await first.dispatch(.add("jam"), to: "bob")
      await first.shutdown()

      let second = makeCarts(try await namespace.store())
      #expect(try await second.state(of: "ada").items == ["tea", "milk", "jam"])
      #expect(try await second.state(of: "bob").items == ["jam"])
      #expect(try await second.state(of: "cy").items == [])
      await second.shutdown()
      try await namespace.drop()
    }

    @Test("an entity another store holds is refused at once, naming its owner; once let go, it is taken")
    func ownedElsewhere() async throws {
      let namespace = Namespace()
      let a = try await namespace.store(owner: "node-a")
      let b = try await namespace.store(owner: "node-b")
      let held = try await a.journal(for: "ada")
      await #expect(throws: PostgresStoreError.ownedElsewhere(entity: #""ada""#, owner: "node-a")) {
        _ = try await b.journal(for: "ada")
      }
      // The same store twice: refused too, naming itself.
      await #expect(throws: PostgresStoreError.ownedElsewhere(entity: #""ada""#, owner: "node-a")) {
        _ = try await a.journal(for: "ada")
      }
      #expect(a.ownership?.owned == 1)
      #expect(b.ownership?.ownedElsewhere == 1)
      await held.close()
      #expect(a.ownership?.owned == 0)
      let taken = try await b.journal(for: "ada")
      #expect(b.ownership?.owned == 1)
      await taken.close()
      await a.close()
      await b.close()
      try await namespace.drop()
    }

    @Test(
      "a registry's dispatch to an entity another registry holds fails with ownedElsewhere; after its shutdown it succeeds"
    )
    func registriesShareEntities() async throws {
      let namespace = Namespace()
      let first = makeCarts(try await namespace.store(owner: "node-a"))
      let second = makeCarts(try await namespace.store(owner: "node-b"))
      try await first.dispatch(.add("tea"), to: "ada")
      await #expect {
        _ = try await second.dispatch(.add("milk"), to: "ada")
      } throws: { error in
        guard case .journal(let cause) = error as? CoreError else { return false }
        return cause as? PostgresStoreError == .ownedElsewhere(entity: #""ada""#, owner: "node-a")
      }
      // The registries report their stores' ownership.
      #expect(
        first.metrics.ownership == EntityOwnershipMetrics(owned: 1, ownedElsewhere: 0, handovers: 0, fencingRefusals: 0)
      )
      #expect(second.metrics.ownership?.ownedElsewhere == 1)
      await first.shutdown()
      try await second.dispatch(.add("milk"), to: "ada")
      #expect(try await second.state(of: "ada").items == ["tea", "milk"])
      #expect(second.metrics.ownership?.owned == 1)
      await second.shutdown()
      try await namespace.drop()
    }

    @Test(
      "an append of a sequence number another writer took fails with conflict; the history is kept, other entities commit"
    )
    func fencing() async throws {
      let namespace = Namespace()
      let store = try await namespace.store(owner: "node-a")
      let ada = try await store.journal(for: "ada")
      let bob = try await store.journal(for: "bob")
      let other = try await PostgresServer.connect()
      let records = store.tables.records
      try await other.query(
        "INSERT INTO \(unescaped: records) (entity, sequence, body) VALUES ('\"ada\"', 1, '\\x00'::bytea)",
        logger: PostgresServer.logger)
      let adaRecord = try ada.encode(.add("tea"))
      let bobRecord = try bob.encode(.add("jam"))
      let adaAppend = Task { try await ada.append([adaRecord]) }
      let bobAppend = Task { try await bob.append([bobRecord]) }
      await #expect(throws: PostgresStoreError.conflict(entity: #""ada""#, sequence: 1)) { try await adaAppend.value }
      _ = try await bobAppend.value
      #expect(store.ownership?.fencingRefusals == 1)
      let rows = try await other.query(
        "SELECT entity, sequence, length(body) FROM \(unescaped: records) ORDER BY entity",
        logger: PostgresServer.logger)
      var found: [String] = []
      for try await (entity, sequence, length) in rows.decode((String, Int64, Int32).self) {
        found.append("\(entity) \(sequence) \(length)")
      }
      #expect(found == [#""ada" 1 1"#, #""bob" 1 \#(bobRecord.count)"#])
      try await other.close()
      await ada.close()
      await bob.close()
      await store.close()
      try await namespace.drop()
    }

    @Test(
      "a store whose connection is killed (pg_terminate_backend) stops writing for its entities; another takes them")
    func connectionKilled() async throws {
      let namespace = Namespace()
      let owner = "node-a-" + namespace.name
      let a = try await namespace.store(owner: owner)
      let carts = makeCarts(a)
      try await carts.dispatch(.add("tea"), to: "ada")
      #expect(a.ownership?.owned == 1)

      let admin = try await PostgresServer.connect()
      let killed = try await admin.query(
        "SELECT pg_terminate_backend(pid, 60000) FROM pg_stat_activity WHERE application_name = \(owner)",
        logger: PostgresServer.logger)
      var count = 0
      for try await terminated in killed.decode(Bool.self) {
        #expect(terminated)
        count += 1
      }
      #expect(count == 1)

      await #expect {
        _ = try await carts.dispatch(.add("milk"), to: "ada")
      } throws: { error in
        guard case .journal(let cause) = error as? CoreError else { return false }
        return cause as? PostgresStoreError == .ownershipLost(entity: #""ada""#)
      }
      #expect(a.ownership?.handovers == 1)
      #expect(a.ownership?.owned == 0)

      // Another store takes the entity, with exactly what was acknowledged.
      let b = try await namespace.store(owner: "node-b")
      let other = makeCarts(b)
      #expect(try await other.state(of: "ada").items == ["tea"])
      await other.shutdown()
      // The first registry activates it anew on a new connection.
      try await carts.dispatch(.add("jam"), to: "ada")
      #expect(try await carts.state(of: "ada").items == ["tea", "jam"])
      await carts.shutdown()
      try await admin.close()
      try await namespace.drop()
    }

    @Test("an observer of an entity whose connection is killed sees its stream end; a new observer follows it")
    func observerAfterConnectionKilled() async throws {
      let namespace = Namespace()
      let owner = "node-a-" + namespace.name
      let a = try await namespace.store(owner: owner)
      let carts = makeCarts(a)
      try await carts.dispatch(.add("tea"), to: "ada")
      let stream = try await carts.observe(\.items, of: "ada")
      let watcher = Task {
        var seen: [[String]] = []
        for await items in stream { seen.append(items) }
        return seen
      }
      let admin = try await PostgresServer.connect()
      _ = try await admin.query(
        "SELECT pg_terminate_backend(pid, 60000) FROM pg_stat_activity WHERE application_name = \(owner)",
        logger: PostgresServer.logger
      ).collect()
      await #expect(throws: CoreError.self) { try await carts.dispatch(.add("milk"), to: "ada") }
      let seen = await watcher.value
      #expect(seen.first == ["tea"])
      try await carts.dispatch(.add("jam"), to: "ada")
      var next = try await carts.observe(\.items, of: "ada").makeAsyncIterator()
      #expect(await next.next() == ["tea", "jam"])
      await carts.shutdown()
      try await admin.close()
      try await namespace.drop()
    }

    @Test("durability maps to synchronous_commit: on under .everyAction, off otherwise, and sync() commits with it on")
    func durability() async throws {
      let namespace = Namespace()
      let every = try await namespace.store(durability: .everyAction)
      #expect(try await every.synchronousCommit() == "on")
      #expect(every.syncInterval == nil)
      await every.close()
      let interval = try await namespace.store(durability: .interval(.milliseconds(10)))
      #expect(try await interval.synchronousCommit() == "off")
      #expect(interval.syncInterval == .milliseconds(10))
      let journal = try await interval.journal(for: "ada")
      _ = try await journal.append([try journal.encode(.add("tea"))])
      try await interval.sync()
      await journal.close()
      #expect(interval.commits == 1)
      await interval.close()
      try await namespace.drop()
    }

    @Test(
      "a commit the server refuses for one entity (a check) fails that entity alone: the others sharing it are stored")
    func refusedWriteStaysWithItsEntity() async throws {
      let namespace = Namespace()
      let store = try await namespace.store(owner: "node-a")
      let other = try await PostgresServer.connect()
      try await other.query(
        "ALTER TABLE \(unescaped: store.tables.records) ADD CONSTRAINT poison CHECK (entity <> '\"poison\"')",
        logger: PostgresServer.logger)
      let ids = ["poison"] + (0..<12).map { "id\($0)" }
      var journals: [String: any CoreJournal<Cart, CartAction>] = [:]
      for id in ids { journals[id] = try await store.journal(for: id) }
      let outcomes = await withTaskGroup(of: (String, PostgresStoreError?).self) { group in
        for (id, journal) in journals {
          let record = try? journal.encode(.add("tea"))
          group.addTask {
            do {
              _ = try await journal.append([record ?? []])
              return (id, nil)
            } catch {
              return (id, error as? PostgresStoreError)
            }
          }
        }
        var outcomes: [String: PostgresStoreError?] = [:]
        for await (id, error) in group { outcomes[id] = error }
        return outcomes
      }
      guard case .server(let code, _)?? = outcomes["poison"] else {
        Issue.record("the refused entity's append: \(String(describing: outcomes["poison"]))")
        return
      }
      #expect(code == "23514")
      #expect(ids.dropFirst().filter { outcomes[$0] != .some(nil) } == [])
      let stored = try await other.query(
        "SELECT count(*)::int8 FROM \(unescaped: store.tables.records)", logger: PostgresServer.logger)
      for try await count in stored.decode(Int64.self) { #expect(count == 12) }
      for journal in journals.values { await journal.close() }
      await store.close()
      try await other.close()
      try await namespace.drop()
    }

    @Test("an id whose JSON is longer than maximumKeyBytes is refused with encodingFailed; one that fits is kept")
    func longIDs() async throws {
      let namespace = Namespace()
      let store = try await namespace.store(owner: "node-a")
      let fits = String(repeating: "x", count: CartStore.maximumKeyBytes - 2)
      let carts = makeCarts(store)
      try await carts.dispatch(.add("tea"), to: fits)
      #expect(try await carts.state(of: fits).items == ["tea"])
      await #expect {
        _ = try await store.journal(for: fits + "x")
      } throws: { error in
        guard case .encodingFailed(let description) = error as? PostgresStoreError else { return false }
        return description.contains("\(CartStore.maximumKeyBytes + 1) bytes")
      }
      await carts.shutdown()
      try await namespace.drop()
    }

    @Test("sync() on a closed store throws closed, under every durability")
    func syncAfterClose() async throws {
      let namespace = Namespace()
      for durability in [JournalDurability.everyAction, .interval(.milliseconds(10)), .operatingSystem] {
        let store = try await namespace.store(durability: durability)
        try await store.sync()
        await store.close()
        await #expect(throws: PostgresStoreError.closed) { try await store.sync() }
      }
      try await namespace.drop()
    }

    @Test("an activation cancelled while it waits (pg_cancel_backend) lets its lock go: another store takes the entity")
    func cancelledActivationLetsGo() async throws {
      let namespace = Namespace()
      let owner = "node-a-" + namespace.name
      let a = try await namespace.store(owner: owner)
      let blocker = try await PostgresServer.connect()
      _ = try await blocker.query("BEGIN", logger: PostgresServer.logger).collect()
      _ = try await blocker.query(
        "LOCK TABLE \(unescaped: a.tables.records) IN ACCESS EXCLUSIVE MODE", logger: PostgresServer.logger
      ).collect()
      let activation = Task { try await a.journal(for: "ada") }
      let admin = try await PostgresServer.connect()
      var cancelled = false
      while !cancelled {
        // The server's own signal: the store's session waits on the table's lock.
        let rows = try await admin.query(
          """
          SELECT pg_cancel_backend(pid) FROM pg_stat_activity
          WHERE application_name = \(owner) AND wait_event_type = 'Lock'
          """, logger: PostgresServer.logger
        ).collect()
        cancelled = try rows.contains { try $0.decode(Bool.self) }
      }
      await #expect {
        _ = try await activation.value
      } throws: { error in
        guard case .server(let code, _) = error as? PostgresStoreError else { return false }
        return code == "57014"
      }
      _ = try await blocker.query("ROLLBACK", logger: PostgresServer.logger).collect()
      let b = try await namespace.store(owner: "node-b")
      let journal = try await b.journal(for: "ada")
      await journal.close()
      await b.close()
      await a.close()
      try await blocker.close()
      try await admin.close()
      try await namespace.drop()
    }

    @Test("the store's session reads at read committed though its configuration asks serializable")
    func readCommitted() async throws {
      let namespace = Namespace()
      var configuration = try PostgresServer.configuration()
      configuration.options.additionalStartupParameters.append(("default_transaction_isolation", "serializable"))
      let store = try await CartStore(configuration: configuration, owner: "node-a", namespace: namespace.name)
      #expect(try await store.transactionIsolation() == "read committed")
      await store.close()
      try await namespace.drop()
    }

    @Test("tables written with another schema version are refused with incompatible")
    func incompatible() async throws {
      let namespace = Namespace()
      try await namespace.store(schemaVersion: 1).close()
      await #expect {
        _ = try await namespace.store(schemaVersion: 2)
      } throws: { error in
        guard case .incompatible(let expected, let found) = error as? PostgresStoreError else { return false }
        return expected.hasSuffix("schema 2") && found.hasSuffix("schema 1")
      }
      try await namespace.drop()
    }

    @Test("records with a gap are refused with damaged, naming the first missing one")
    func damaged() async throws {
      let namespace = Namespace()
      let store = try await namespace.store()
      let other = try await PostgresServer.connect()
      let records = store.tables.records
      try await other.query(
        "INSERT INTO \(unescaped: records) (entity, sequence, body) VALUES ('\"cy\"', 1, '\\x00'), ('\"cy\"', 3, '\\x00')",
        logger: PostgresServer.logger)
      await #expect(throws: PostgresStoreError.damaged(entity: #""cy""#, sequence: 2)) {
        _ = try await store.journal(for: "cy")
      }
      // Refused, not held: the lock was let go.
      #expect(store.ownership?.owned == 0)
      try await other.close()
      await store.close()
      try await namespace.drop()
    }

    @Test("40 activations started together share calls of the activate function; each reads its own entity")
    func activationsShareACall() async throws {
      let namespace = Namespace()
      let store = try await namespace.store(owner: "node-a")
      let carts = makeCarts(store)
      let ids = (0..<40).map { "id\($0)" }
      for id in ids { try await carts.dispatch(.add(id), to: id) }
      await carts.shutdown()
      let reader = try await namespace.store(owner: "node-b")
      let read = try await withThrowingTaskGroup(of: (String, [String]).self) { group in
        for id in ids {
          group.addTask {
            let journal = try await reader.journal(for: id)
            let state = try await journal.recoverState()
            let actions = try await journal.recoverActions() ?? []
            await journal.close()
            return (id, (state?.items ?? []) + actions.map { if case .add(let item) = $0 { item } else { "?" } })
          }
        }
        var read: [String: [String]] = [:]
        for try await (id, items) in group { read[id] = items }
        return read
      }
      #expect(ids.filter { read[$0] != [$0] } == [])
      #expect(reader.activationCalls < ids.count)
      await reader.close()
      try await namespace.drop()
    }

    @Test("two stores racing to open the same 40 entities: each entity is opened by exactly one")
    func raceToOpen() async throws {
      let namespace = Namespace()
      let a = try await namespace.store(owner: "node-a")
      let b = try await namespace.store(owner: "node-b")
      let ids = (0..<40).map { "id\($0)" }
      let opened = try await withThrowingTaskGroup(of: (String, String, (any CoreJournal<Cart, CartAction>)?).self) {
        group in
        for id in ids {
          for (name, store) in [("a", a), ("b", b)] {
            group.addTask {
              do {
                return (id, name, try await store.journal(for: id))
              } catch PostgresStoreError.ownedElsewhere {
                return (id, name, nil)
              }
            }
          }
        }
        var opened: [(String, String, (any CoreJournal<Cart, CartAction>)?)] = []
        for try await result in group { opened.append(result) }
        return opened
      }
      for id in ids {
        #expect(opened.filter { $0.0 == id && $0.2 != nil }.count == 1, "\(id)")
      }
      #expect((a.ownership?.owned ?? 0) + (b.ownership?.owned ?? 0) == 40)
      for (_, _, journal) in opened { await journal?.close() }
      await a.close()
      await b.close()
      try await namespace.drop()
    }

    @Test("two registries on one namespace, churning activations: every acknowledged action is stored once, in order")
    func registriesRacing() async throws {
      let namespace = Namespace()
      let registries = [
        makeCarts(try await namespace.store(owner: "node-a"), maxActive: 3),
        makeCarts(try await namespace.store(owner: "node-b"), maxActive: 3),
      ]
      let ids = (0..<8).map { "id\($0)" }
      let acknowledged = await withTaskGroup(of: [String: [String]].self) { group in
        for (index, carts) in registries.enumerated() {
          for task in 0..<3 {
            group.addTask {
              var done: [String: [String]] = [:]
              for step in 0..<60 {
                let id = ids[(step * 3 + task) % ids.count]
                let item = "r\(index)t\(task)s\(step)"
                if (try? await carts.dispatch(.add(item), to: id)) != nil { done[id, default: []].append(item) }
              }
              return done
            }
          }
        }
        var all: [String: [String]] = [:]
        for await done in group { all.merge(done) { $0 + $1 } }
        return all
      }
      for carts in registries { await carts.shutdown() }
      #expect(acknowledged.values.reduce(0) { $0 + $1.count } > 0)
      let reader = makeCarts(try await namespace.store(owner: "reader"))
      for id in ids {
        let items = try await reader.state(of: id).items
        #expect(Set(items) == Set(acknowledged[id] ?? []), "\(id)")
        #expect(items.count == (acknowledged[id] ?? []).count, "\(id): no duplicate")
        // Each task's items in the order it sent them.
        for prefix in Set(items.map { $0.prefix(4) }) {
          let mine = items.filter { $0.hasPrefix(prefix) }
          let steps = mine.map { Int($0.split(separator: "s").last!)! }
          #expect(steps == steps.sorted(), "\(id) \(prefix)")
        }
      }
      await reader.shutdown()
      try await namespace.drop()
    }
  }

  @Suite("PostgreSQL store: no server")
  struct PostgresUnavailableTests {
    @Test("an owner that application_name cannot keep (64 bytes, not ASCII, empty) stops the program with a message")
    func ownerStopsWithAMessage() async throws {
      let long = await #expect(processExitsWith: .failure, observing: [\.standardErrorContent]) {
        let configuration = PostgresConnection.Configuration(
          unixSocketPath: "/nonexistent/.s.PGSQL.5432", username: "postgres", password: nil, database: nil)
        _ = try? await CartStore(configuration: configuration, owner: String(repeating: "a", count: 64))
      }
      let longError = String(decoding: try #require(long).standardErrorContent, as: UTF8.self)
      #expect(longError.contains("1 to 63 printable ASCII characters"))
      await #expect(processExitsWith: .failure) {
        let configuration = PostgresConnection.Configuration(
          unixSocketPath: "/nonexistent/.s.PGSQL.5432", username: "postgres", password: nil, database: nil)
        _ = try? await CartStore(configuration: configuration, owner: "nœud:8080")
      }
      await #expect(processExitsWith: .failure) {
        let configuration = PostgresConnection.Configuration(
          unixSocketPath: "/nonexistent/.s.PGSQL.5432", username: "postgres", password: nil, database: nil)
        _ = try? await CartStore(configuration: configuration, owner: "")
      }
    }

    @Test("a store whose server cannot be reached fails with unavailable")
    func unavailable() async throws {
      let configuration = PostgresConnection.Configuration(
        unixSocketPath: "/nonexistent/.s.PGSQL.5432", username: "postgres", password: nil, database: nil)
      await #expect {
        _ = try await CartStore(configuration: configuration, owner: "node-a")
      } throws: { error in
        guard case .unavailable = error as? PostgresStoreError else { return false }
        return true
      }
    }
  }
#endif
