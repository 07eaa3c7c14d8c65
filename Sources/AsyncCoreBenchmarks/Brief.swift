// The project's performance brief, in the words the report prints: what the
// targets mean and what each baseline stands for. It lives here, beside the
// code that measures it, so that Benchmarks.md explains itself to a reader
// who has nothing but the repository.

enum Brief {
  /// The paragraph above the targets table.
  static let targets = """
    Each target is a ratio against a baseline measured in this same run, never an absolute figure: on \
    this kind of machine absolute numbers move by ±20% from one run to the next (by up to 2× for anything \
    that wakes many tasks), while a ratio of two figures taken in one process holds. Several targets sit at \
    a physical limit on purpose, against a baseline that does strictly less work than the core, so a miss \
    comes with its reason below the table. A figure is judged as printed: it is rounded to the digits shown \
    first, so a ratio shown as 0.80× meets "≥ 0.8 ×".
    """

  /// A baseline: the name the tables give it and why it is the limit or
  /// the naive design it stands for.
  struct Baseline {
    let name: String
    let standsFor: String
  }

  static let baselines = [
    Baseline(
      name: "raw reducer loop (the limit)",
      standsFor: """
        the reducer applied to a local variable in a plain loop, with no lock, no actor and no observer. \
        No store can reduce faster, so it shows how much of every other figure is the store's own machinery.
        """),
    Baseline(
      name: "Mutex store (0 or 1 callback)",
      standsFor: """
        the state behind a `Synchronization.Mutex`, each action reduced under the lock and every callback \
        called in line with the new state. It is the fastest a thread-safe store can be once it gives up \
        `await` and isolation altogether: one uncontended lock per action, and no task is ever woken. \
        Fire-and-forget `send`, which also takes a lock and returns at once, is judged against it.
        """),
    Baseline(
      name: "plain actor (1 or 8 producers; one AsyncStream per observer)",
      standsFor: """
        the design Swift code reaches for first: an `actor` that reduces in `dispatch(_:)`, called with \
        `await` from tasks outside it, handing each observer its own `AsyncStream` (newest value only, or \
        unbounded to deliver every state) and yielding every new state into every stream. Without observers \
        it is the cost of the actor hop itself (about 0.13 µs), so `await dispatch` is judged against it. \
        With observers it is the naive design to beat: an `AsyncStream` yield costs 0.4–0.7 µs on Linux even \
        when no consumer is waiting, and every action wakes every observer, so 100 observers bring it down \
        to a few thousand actions per second.
        """),
    Baseline(
      name: "shared latest-value cell",
      standsFor: """
        the fastest `for await` design the project knows: one cell holding the newest state and its \
        version, shared by every observer. Publishing takes one lock, stores the state and resumes the \
        parked consumers in a tight loop; a consumer that was busy reads the newest version when it comes \
        back and skips the states in between. What is left is the task wake-up (0.3–0.4 µs per observer), \
        the floor for any design in which each observer is a task running `for await`. It offers none of \
        what a core's observer has (its own selector, deduplication and buffering policy), which is why \
        matching it is a stretch.
        """),
    Baseline(
      name: "bare task-group children",
      standsFor: """
        children added to a discarding task group, each doing nothing: the structure a core runs its \
        effects in, without what the core adds (cancellation ids, the count of effects in flight, \
        follow-up actions). The limit for effects started and finished per second.
        """),
    Baseline(
      name: "raw selector loop",
      standsFor: """
        the same selector closure as the core's 1,000 observers, called for each of them in a plain loop \
        and compared with the last value each one saw: the least an observer whose props did not change \
        can cost.
        """),
    Baseline(
      name: "raw `write` + `fdatasync` (per record, or one sequential write)",
      standsFor: """
        the journal's own frames of the same encoded records, written with plain system calls into a file \
        set up as a segment is: one `write` and one `fdatasync` per record (what one durable action costs \
        the disk), or all of them in one `write` with one `fdatasync` at the end (the disk's sequential \
        limit). No codec, no core: the physical floor a journal stands on, and this machine's disk figure.
        """),
    Baseline(
      name: "SQLite WAL, `synchronous=FULL` (1 or 16 rows per transaction)",
      standsFor: """
        the system's libsqlite3 committing rows of the same size as a journal record into a table with an \
        integer primary key, through prepared statements, in WAL mode with every commit synced: what a \
        mature embedded database charges for a durable write, one row at a time and 16 at once. A durable \
        core that does less than SQLite has no reason to be slower.
        """),
    Baseline(
      name: "binary codec, buffered sequential `write`s, one final `fdatasync`",
      standsFor: """
        the workload's actions encoded with the benchmark's binary codec and framed as the journal frames \
        them, in a plain loop, written in 64 KiB `write`s with one `fdatasync` at the end: the least a core \
        under `.interval` durability with that codec can cost, with no queue, no batch and no reducer.
        """),
    Baseline(
      name: "decode + reduce in a plain loop",
      standsFor: """
        a journal's encoded records, already in memory, decoded with the same codec and reduced one by one \
        into a local state: the least recovery can cost once the file is read, since every record must be \
        decoded and reduced.
        """),
    Baseline(
      name: "`read(2)` in 1 MiB chunks + CRC-32C",
      standsFor: """
        a journal's segment files read front to back in 1 MiB chunks, with the journal's own CRC-32C computed \
        over every byte: no framing, no record, no output. Every verify must read and checksum every byte, so \
        this is the least one can cost.
        """),
  ]

  /// The workload, for the Method section.
  static let workload = """
    Every contender runs the same workload: a counter reducer the optimiser may not inline or remove, over \
    a 48-byte state.
    """
}
