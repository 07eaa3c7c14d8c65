import AsyncCore
import AsyncCorePostgres
import Synchronization

/// What the routes ask of the state behind them: the entities, or the load
/// report's baseline dictionary.
public protocol CustomerBackend: Sendable {
  /// Takes `action` for customer `id` and returns the state it produced.
  func perform(_ action: CustomerAction, on id: String) async -> BackendOutcome
  /// The customer's state, reading every write acknowledged before.
  func state(of id: String) async -> BackendOutcome
  /// Each state of the customer from now on, starting with the current one;
  /// nil when the backend does not stream.
  func states(of id: String) async -> Result<AsyncStream<Customer>, BackendFailure>?
}

public enum BackendOutcome: Sendable, Equatable {
  case state(Customer)
  case failed(BackendFailure)
}

/// Why a backend did not answer with a state; each becomes an HTTP status.
public enum BackendFailure: Error, Sendable, Equatable {
  /// The customer's mailbox is full: try again shortly (503, Retry-After).
  case mailboxFull
  /// The server is shutting down (503).
  case shuttingDown
  /// The store failed; the message is one line (500).
  case storage(String)
  /// Another process holds the customer, and `owner` names it
  /// (`HOST:PORT`): the request is redirected there (307).
  case ownedElsewhere(owner: String)
  /// The database cannot be reached, or this process lost its hold on the
  /// customer: try again shortly (503, Retry-After). Nothing was
  /// acknowledged.
  case unavailable(String)
}

/// Customers as entities: one `Core` per customer id, activated on first
/// use and, with a store, journaled and passivated.
public struct EntitiesBackend: CustomerBackend {
  public let entities: Entities<String, Customer, CustomerAction>
  /// Dispatches each action instead of sending it: on a shared store,
  /// where an activation or an append can fail, a POST must hear of it.
  public let dispatching: Bool

  public init(_ entities: Entities<String, Customer, CustomerAction>, dispatching: Bool = false) {
    self.entities = entities
    self.dispatching = dispatching
  }

  /// Sends rather than dispatches, so that a full mailbox is a 503 at once
  /// instead of a wait; the read after it waits until the action is reduced
  /// and, in a journaled entity, appended under the store's durability.
  /// With `dispatching`, waits for room and for the append's outcome.
  public func perform(_ action: CustomerAction, on id: String) async -> BackendOutcome {
    if dispatching {
      do {
        try await entities.dispatch(action, to: id)
      } catch {
        return .failed(Self.failure(error))
      }
      return await state(of: id)
    }
    switch entities.send(action, to: id) {
    case .accepted: return await state(of: id)
    case .mailboxFull: return .failed(.mailboxFull)
    case .shutDown: return .failed(.shuttingDown)
    case let other: return .failed(.storage("not accepted: \(other)"))
    }
  }

  public func state(of id: String) async -> BackendOutcome {
    do {
      return .state(try await entities.state(of: id))
    } catch {
      return .failed(Self.failure(error))
    }
  }

  public func states(of id: String) async -> Result<AsyncStream<Customer>, BackendFailure>? {
    do {
      // Every state, not the latest: an SSE client sees each one.
      return .success(try await entities.observe(\.self, of: id, buffering: .all).asyncStream())
    } catch {
      return .failure(Self.failure(error))
    }
  }

  static func failure(_ error: CoreError) -> BackendFailure {
    switch error {
    case .shutDown, .cancelled: return .shuttingDown
    case .journal(let cause as PostgresStoreError): return failure(cause)
    default: return .storage(oneLine(error.description))
    }
  }

  static func failure(_ error: PostgresStoreError) -> BackendFailure {
    switch error {
    case .ownedElsewhere(_, let owner?): return .ownedElsewhere(owner: owner)
    case .closed: return .shuttingDown
    // Connection exceptions (08) and an operator's intervention (57P:
    // shutdown, terminated backend) pass; the rest is the store's fault.
    case .server(let code, _) where !code.hasPrefix("08") && !code.hasPrefix("57P"):
      return .storage(oneLine("\(error)"))
    case .ownedElsewhere, .unavailable, .ownershipLost, .conflict, .server: return .unavailable(oneLine("\(error)"))
    default: return .storage(oneLine("\(error)"))
    }
  }
}

/// The load report's baseline: the same routes over a dictionary behind a
/// lock, as a Hummingbird service would write it by hand. No streams.
public final class BaselineBackend: CustomerBackend {
  private let customers = Mutex<[String: Customer]>([:])

  public init() {}

  public func perform(_ action: CustomerAction, on id: String) async -> BackendOutcome {
    .state(
      customers.withLock { customers in
        var customer = customers[id, default: Customer()]
        _ = Customer.reducer.reduce(into: &customer, action: action)
        customers[id] = customer
        return customer
      })
  }

  public func state(of id: String) async -> BackendOutcome {
    .state(customers.withLock { $0[id, default: Customer()] })
  }

  public func states(of id: String) async -> Result<AsyncStream<Customer>, BackendFailure>? { nil }
}

/// `text` on one line of at most 200 bytes, for a response or a log.
func oneLine(_ text: String) -> String {
  let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
  return flat.utf8.count <= 200 ? flat : String(decoding: flat.utf8.prefix(197), as: UTF8.self) + "..."
}
