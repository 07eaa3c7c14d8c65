#if Postgres
  import AsyncCore
  import NIOCore
  import Synchronization

  /// What an activation took: the connection whose session holds the
  /// entity's lock, and the entity's rows as they were once it held it.
  struct Activation: Sendable {
    let lease: Lease
    /// The snapshot (kind 1) if there is one, then the records after it.
    let rows: [(kind: Int32, sequence: Int64, body: [UInt8])]
  }

  /// The store's activations, batched: every activation waiting shares one
  /// call of the schema's activate function, one round trip.
  final class PostgresActivator: Sendable {
    typealias Reply = Result<Activation, PostgresStoreError>

    struct Request: Sendable {
      let entity: String
      let key: OwnershipKey
    }

    /// The store's record of the entities each generation holds open.
    struct Claims: Sendable {
      /// Records `entity` open under `generation`; `false` if it already is.
      let claim: @Sendable (_ entity: String, _ generation: UInt64) -> Bool
      let unclaim: @Sendable (_ entity: String, _ generation: UInt64) -> Void
    }

    private let batcher: PostgresBatcher<Request, Reply>
    private let counter = Counter()
    /// Calls of the activate function so far.
    var calls: Int { counter.value.load(ordering: .relaxed) }

    private final class Counter: Sendable {
      let value = Atomic<Int>(0)
    }

    init(session: PostgresSession, schema: PostgresSchema, owner: String, claims: Claims) {
      let counter = counter
      batcher = PostgresBatcher(refusing: .failure(.closed)) { requests in
        counter.value.add(1, ordering: .relaxed)
        return await Self.activate(requests, session: session, schema: schema, owner: owner, claims: claims)
      }
    }

    /// Takes `request`'s entity and reads it, or says why not.
    func perform(_ request: Request) async -> Reply { await batcher.perform(request) }

    func close() async { await batcher.close() }

    func closeWithoutWaiting() { batcher.closeWithoutWaiting() }

    private static func activate(
      _ requests: [Request], session: PostgresSession, schema: PostgresSchema, owner: String, claims: Claims
    ) async -> [Reply] {
      let lease: Lease
      do {
        lease = try await session.lease()
      } catch {
        return Array(repeating: .failure(error), count: requests.count)
      }
      // An entity this store already has open (or twice in the batch) is
      // refused before the server is asked.
      var replies = requests.map { request -> Reply? in
        claims.claim(request.entity, lease.generation)
          ? nil : .failure(.ownedElsewhere(entity: request.entity, owner: owner))
      }
      let asked = requests.indices.filter { replies[$0] == nil }
      guard !asked.isEmpty else { return replies.map { $0 ?? .failure(.closed) } }
      let entities = asked.map { requests[$0].entity }
      do {
        let rows = try await schema.activate(entities, keys: asked.map { requests[$0].key.value }, on: lease)
        var read: [String: [(kind: Int32, sequence: Int64, body: [UInt8])]] = [:]
        var refused: [String: String] = [:]
        for row in rows {
          if row.kind == 2 {
            refused[row.entity] = String(buffer: row.body)
          } else {
            read[row.entity, default: []].append((row.kind, row.sequence, Array(buffer: row.body)))
          }
        }
        for index in asked {
          let entity = requests[index].entity
          if let holder = refused[entity] {
            claims.unclaim(entity, lease.generation)
            replies[index] = .failure(.ownedElsewhere(entity: entity, owner: holder.isEmpty ? nil : holder))
          } else {
            replies[index] = .success(Activation(lease: lease, rows: read[entity] ?? []))
          }
        }
      } catch {
        // The function let its locks go before it failed; a lost connection
        // took them anyway. Unclaimed first: the loss counts no handover.
        for entity in entities { claims.unclaim(entity, lease.generation) }
        let failure = PostgresFailure(error)
        if case .connection = failure { await session.lost(lease.generation) }
        for index in asked { replies[index] = .failure(failure.storeError) }
      }
      return replies.map { $0 ?? .failure(.closed) }
    }
  }
#endif
