#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A task executor with one thread of its own that runs every job it is
/// given in a tight loop: the instrument of the executor experiment
/// (Sources/AsyncCoreBenchmarks/ExecutorBenchmarks.swift). Consumers opt in with
/// `Task(executorPreference:)`.
///
/// It is not AsyncCore API: the experiment did not meet its keep-criterion
/// (see the report's executor table). A target of its own, so the benchmark
/// and the profile (Sources/AsyncCoreProfile/ExecutorWorkloads.swift, for the
/// per-wake instruction counts) run the same executor.
///
/// The worker takes all queued jobs under the lock at once (the two arrays
/// swap, so neither side reallocates) and runs them with no lock held; it
/// sleeps on a condition only when the queue is empty, and an enqueue
/// signals only a sleeping worker. After `shutdown()` the jobs already
/// queued still run and later ones go to the global executor: a job is
/// never dropped (its task would never resume).
///
/// Safety of `@unchecked Sendable`: `jobs`, `isWorkerWaiting` and `isStopped`
/// are read and written only with `mutex` held; the pthread objects are
/// allocated once, never moved, and freed in `deinit`, which runs only after
/// the worker thread, which holds a strong reference until it ends, has
/// ended.
package final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
  private var jobs: [UnownedJob] = []
  private var isWorkerWaiting = false
  private var isStopped = false
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let condition: UnsafeMutablePointer<pthread_cond_t>

  /// Starts the thread.
  package init() {
    mutex = .allocate(capacity: 1)
    condition = .allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
    pthread_cond_init(condition, nil)
    jobs.reserveCapacity(1_024)
    startThread(running: self)
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deallocate()
    mutex.deallocate()
  }

  package func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    pthread_mutex_lock(mutex)
    let isRefused = isStopped
    if !isRefused { jobs.append(job) }
    let wakesWorker = !isRefused && isWorkerWaiting
    if wakesWorker { isWorkerWaiting = false }
    pthread_mutex_unlock(mutex)
    if wakesWorker { pthread_cond_signal(condition) }
    if isRefused { globalConcurrentExecutor.enqueue(job) }
  }

  package func asUnownedTaskExecutor() -> UnownedTaskExecutor {
    UnownedTaskExecutor(ordinary: self)
  }

  /// Ends the thread once the jobs queued until now have run.
  package func shutdown() {
    pthread_mutex_lock(mutex)
    isStopped = true
    let wakesWorker = isWorkerWaiting
    isWorkerWaiting = false
    pthread_mutex_unlock(mutex)
    if wakesWorker { pthread_cond_signal(condition) }
  }

  /// The worker thread's loop.
  fileprivate func work() {
    var batch: [UnownedJob] = []
    batch.reserveCapacity(1_024)
    let executor = asUnownedTaskExecutor()
    while true {
      pthread_mutex_lock(mutex)
      while jobs.isEmpty && !isStopped {
        isWorkerWaiting = true
        pthread_cond_wait(condition, mutex)
      }
      swap(&jobs, &batch)
      pthread_mutex_unlock(mutex)
      if batch.isEmpty { return }  // stopped and drained
      for job in batch { job.runSynchronously(on: executor) }
      batch.removeAll(keepingCapacity: true)
    }
  }
}

/// Starts a detached thread that runs `executor.work()`, retaining it until
/// that returns.
private func startThread(running executor: DedicatedThreadExecutor) {
  let context = Unmanaged.passRetained(executor).toOpaque()
  #if canImport(Darwin)
    var thread: pthread_t?
  #else
    var thread = pthread_t()
  #endif
  let result = pthread_create(
    &thread, nil,
    { context in
      #if canImport(Darwin)
        let executor = Unmanaged<DedicatedThreadExecutor>.fromOpaque(context).takeRetainedValue()
      #else
        // Safety of `!`: the context is the pointer passed below, never nil.
        let executor = Unmanaged<DedicatedThreadExecutor>.fromOpaque(context!).takeRetainedValue()
      #endif
      executor.work()
      return nil
    }, context)
  guard result == 0 else { fatalError("Could not start the executor's thread: pthread_create returned \(result)") }
  #if canImport(Darwin)
    if let thread { pthread_detach(thread) }
  #else
    pthread_detach(thread)
  #endif
}
