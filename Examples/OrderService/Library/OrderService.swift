import AsyncCore
import AsyncCoreJournal
import Synchronization

/// A service in the shape swift-service-lifecycle runs: `run()` works until
/// the service is done or its task is cancelled, then returns.
///
/// ```swift
/// let service = OrderService(configuration: .init(producers: 8), console: console)
/// await withTaskGroup(of: Void.self) { group in
///   group.addTask { try? await service.run() }
///   await firstInterrupt()
///   group.cancelAll()  // graceful: every accepted order is reduced
/// }
/// print(service.report?.line ?? "")  // reduced N events (accepted N, lost 0)
/// ```
///
/// Inside, one task group holds everything the service runs:
/// - the core, tied to the group with ``Core/run()``;
/// - producers, each placing its ``OrderFeed``'s orders into the core with
///   `send`, or, on a journal, `dispatch`;
/// - two consumers, `for await` loops: one over ``Orders/summary``, every
///   figure the live summary line shows, read from one state so that a
///   count never shows beside another moment's revenue; one over the
///   largest order, which logs each new one.
///
/// Shutting down: when the producers are done (each placed its share of
/// ``Configuration/totalOrders``) the service shuts the core down
/// gracefully, and every consumer's loop ends after the final state. When
/// `run()`'s task is cancelled, the producers stop and the core shuts down
/// at once; either way, every order the core accepted (`send` returned
/// `true`) is reduced before the core stops, and the ``Report`` says so.
///
/// On a journal (``init(configuration:journal:clock:console:)``, the
/// program's `--journal PATH`), each producer's `dispatch` returns once its
/// order is on disk and reduced, and a service started again on the same
/// journal resumes the totals: each producer goes on from its feed's next
/// order after the last one the journal holds.
///
/// ```swift
/// let service = try await OrderService(
///   configuration: .init(producers: 4, acknowledges: true), journal: "orders.journal", console: console)
/// try await service.run()   // logs `ack 2 17`: producer 2's order #17 is on disk
/// ```
public final class OrderService: Sendable {
  /// How the service runs.
  public struct Configuration: Sendable {
    /// How many producers send orders at the same time (at least 1).
    public var producers: Int
    /// The pause each producer makes between two orders; `nil` sends as fast
    /// as the producer's task gets to run (it yields between orders).
    public var interval: Duration?
    /// Orders to place in all, shared among the producers, after which the
    /// service ends on its own; `nil` runs until cancelled.
    public var totalOrders: Int?
    /// How often the live summary line is drawn at most; `nil` draws it
    /// never, only the final summary.
    public var refresh: Duration?
    /// Whether each order placed is logged as `ack <producer> <sequence>`
    /// once the core accepted it: on a journal, once it is on disk and
    /// reduced, so a reader of the log knows which orders a crash cannot
    /// lose.
    public var acknowledges: Bool

    public init(
      producers: Int = 4, interval: Duration? = .milliseconds(2), totalOrders: Int? = nil,
      refresh: Duration? = .milliseconds(250), acknowledges: Bool = false
    ) {
      self.producers = producers
      self.interval = interval
      self.totalOrders = totalOrders
      self.refresh = refresh
      self.acknowledges = acknowledges
    }

    /// The orders producer `index` places in this run: its share of ``totalOrders``.
    func limit(ofProducer index: Int) -> Int? {
      totalOrders.map { $0 / producers + (index < $0 % producers ? 1 : 0) }
    }
  }

  /// What a run did.
  public struct Report: Sendable, Equatable {
    /// Orders the journal held when the run began (0 without a journal).
    public var recovered = 0
    /// Orders the core accepted in this run: `send` returned `true`, or on
    /// a journal `dispatch` returned.
    public var accepted: Int
    /// Orders the reducer counted, the recovered ones included.
    public var reduced: Int
    /// The final state.
    public var orders: Orders

    /// Recovered and accepted orders that were not reduced: 0.
    public var lost: Int { recovered + accepted - reduced }

    /// The last line the service writes: `reduced N events (accepted N, lost 0)`,
    /// or after a restart on a journal `reduced N events (recovered R, accepted A, lost 0)`.
    public var line: String {
      recovered == 0
        ? "reduced \(reduced) events (accepted \(accepted), lost \(lost))"
        : "reduced \(reduced) events (recovered \(recovered), accepted \(accepted), lost \(lost))"
    }
  }

  /// The service's core, in memory or on a journal. Tests observe it; a
  /// service would keep it private.
  public let core: Core<Orders, OrderAction>
  /// Whether the core writes its orders to a journal.
  public let isJournaled: Bool
  public let configuration: Configuration
  private let clock: any Clock<Duration>
  private let dashboard: Dashboard
  private let hasStarted = Atomic(false)
  private let lastReport = Mutex<Report?>(nil)

  /// A service that writes to `console`; producers pace themselves on `clock`.
  public convenience init(
    configuration: Configuration, clock: any Clock<Duration> = ContinuousClock(), console: Console
  ) {
    self.init(
      configuration: configuration,
      core: Core(initialState: Orders(), clock: clock, reducer: Reduce(Orders.reduce)), isJournaled: false,
      clock: clock, console: console)
  }

  /// A service whose orders go to the journal in `directory` (made if
  /// missing), resuming the totals it holds.
  ///
  /// The same core type as in memory, made on a `FileJournal`: each order
  /// is on disk before `dispatch` returns (the journal's default
  /// every-action durability), so what the producers acknowledge survives
  /// a `kill -9`.
  ///
  /// - Throws: `JournalError` if the journal cannot be opened (held by
  ///   another process, written for other types); `CoreError.journal` if
  ///   what it holds cannot be recovered.
  public convenience init(
    configuration: Configuration, journal directory: String, clock: any Clock<Duration> = ContinuousClock(),
    console: Console
  ) async throws {
    let journal = try FileJournal<Orders, OrderAction>(directory: directory)
    let core = try await Core(initialState: Orders(), journal: journal, clock: clock, reducer: Reduce(Orders.reduce))
    self.init(configuration: configuration, core: core, isJournaled: true, clock: clock, console: console)
  }

  private init(
    configuration: Configuration, core: Core<Orders, OrderAction>, isJournaled: Bool, clock: any Clock<Duration>,
    console: Console
  ) {
    // Not `precondition`, whose message -O builds drop.
    if configuration.producers < 1 { fatalError("an OrderService needs at least one producer") }
    if let total = configuration.totalOrders, total < 0 { fatalError("totalOrders cannot be negative: \(total)") }
    self.configuration = configuration
    self.clock = clock
    self.core = core
    self.isJournaled = isJournaled
    self.dashboard = Dashboard(console: console, refresh: configuration.refresh)
  }

  /// What the run did, once `run()` has returned; `nil` before.
  public var report: Report? { lastReport.withLock { $0 } }

  /// Writes `line` to the console above the live summary line.
  public func log(_ line: String) async {
    await dashboard.log(line)
  }

  /// What one child task of the run's group did.
  private enum ChildTaskResult: Sendable {
    case core(CoreError?)
    case consumer
    case producer(accepted: Int, failure: CoreError?)
  }

  /// Runs the service until its producers are done or the calling task is
  /// cancelled, then writes the final summary and its ``Report/line``.
  ///
  /// - Throws: ``CoreError/alreadyRunning`` if it was called before: a
  ///   service runs once.
  public func run() async throws(CoreError) {
    guard hasStarted.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else {
      throw .alreadyRunning
    }
    let core = core
    let dashboard = dashboard
    // On a journal: what it held. Each producer goes on after its last
    // order there, so a restarted service places no order twice.
    let recovered = isJournaled ? await core.state : Orders()
    if recovered.reduced > 0 {
      let through = recovered.lastSequence.sorted { $0.key < $1.key }.map { "producer \($0.key) through #\($0.value)" }
      await dashboard.log(
        "resumed \(recovered.reduced) orders from the journal: \(through.joined(separator: ", "))")
    }
    // Registered before the first order, so each loop begins with the
    // empty state; `.latest`: a loop busy drawing skips to the newest value.
    // One value for the whole line: four observers would each see their
    // figure at a different moment.
    let summaries = await core.observe(\.summary)
    let largestOrders = await core.observe(\.largest)

    // With `acknowledges`: each order the core accepted, logged after its
    // `place` returned (on a journal: on disk).
    let acknowledge: (@Sendable (Order) async -> Void)?
    if configuration.acknowledges {
      acknowledge = { (order: Order) in await dashboard.log("ack \(order.producer) \(order.sequence)") }
    } else {
      acknowledge = nil
    }

    let (accepted, coreError) = await withTaskGroup(of: ChildTaskResult.self) { group in
      group.addTask {
        // Cancelled with the group: shuts the core down at once, reducing
        // what it accepted first.
        do throws(CoreError) {
          try await core.run()
          return .core(nil)
        } catch {
          return .core(error)
        }
      }
      group.addTask {
        for await summary in summaries { await dashboard.update(summary: summary) }
        return .consumer
      }
      group.addTask {
        for await order in largestOrders { await dashboard.update(largest: order) }
        return .consumer
      }
      for index in 0..<configuration.producers {
        let producer = Producer(
          index: index, limit: configuration.limit(ofProducer: index), interval: configuration.interval,
          after: recovered.lastSequence[index] ?? 0)
        group.addTask {
          let placed = await producer.run(into: core, clock: self.clock, acknowledge: acknowledge)
          return ChildTaskResult.producer(accepted: placed.accepted, failure: placed.failure)
        }
      }

      var accepted = 0
      var producersLeft = configuration.producers
      var coreError: CoreError?
      for await result in group {
        switch result {
        case .producer(let count, let failure):
          accepted += count
          if let failure { await dashboard.log("producer stopped: \(failure)") }
          producersLeft -= 1
          // No more orders: shut down gracefully. The consumers' loops end
          // after the final state, and `core.run()` returns.
          if producersLeft == 0 { await core.shutdown() }
        case .core(let error):
          coreError = error
        case .consumer:
          break
        }
      }
      return (accepted, coreError)
    }
    if let coreError { throw coreError }

    // The core has stopped: this is the state with every accepted order.
    let orders = await core.state
    let report = Report(recovered: recovered.reduced, accepted: accepted, reduced: orders.reduced, orders: orders)
    lastReport.withLock { $0 = report }
    await dashboard.finish(Self.summary(of: orders))
    await dashboard.finish(report.line)
  }

  /// The summary line of `orders`:
  /// `12,345 orders · $3,086,014.57 · EU 4,100 AM 4,200 AP 4,045 · largest $499.98`.
  public static func summary(of orders: Orders) -> String {
    summary(orders.summary)
  }

  /// The summary line of `summary`, what the summary's consumer saw.
  public static func summary(_ summary: OrderSummary) -> String {
    let byRegion = Region.allCases.map { "\($0.code) \(Money.grouped(summary.regions[$0]))" }.joined(separator: " ")
    return "\(Money.grouped(summary.orders)) orders · \(Money.format(summary.revenueCents)) · \(byRegion)"
      + " · largest \(summary.largest.map { Money.format($0.cents) } ?? "-")"
  }
}
