// The probe's inspector modes (Tests/AsyncCoreJournalTests/InspectTests.swift):
// a small to-do list written as a journal or as a recording, and an
// inspector built with `Inspector.run` on the same types, as a user's own
// executable would be. main.swift dispatches to them.
import AsyncCore
import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

struct Todo: Codable, Sendable, Equatable {
  var title: String
  var isDone = false
}

struct Todos: Codable, Sendable, Equatable {
  var items: [Todo] = []
  var filter = "all"
}

enum TodoAction: Codable, Sendable, Equatable {
  case add(String)
  case toggle(Int)
  case setFilter(String)
  case clearDone
}

let todoReducer = Reduce<Todos, TodoAction> { state, action in
  switch action {
  case .add(let title):
    state.items.append(Todo(title: title))
  case .toggle(let index):
    if state.items.indices.contains(index) { state.items[index].isDone.toggle() }
  case .setFilter(let filter):
    state.filter = filter
  case .clearDone:
    state.items.removeAll { $0.isDone }
  }
}

/// Action `number` (from 1) of the scripted session the modes write: adds,
/// with a toggle every 4th, a filter change every 10th and a clear every 25th.
/// Actions 1…4 are add, add, add, toggle(2): the fourth marks the third done.
func todoAction(_ number: Int) -> TodoAction {
  if number % 25 == 0 { return .clearDone }
  if number % 10 == 0 { return .setFilter(number % 20 == 0 ? "all" : "done") }
  if number % 4 == 0 { return .toggle((number / 4 + 1) % 3) }
  return .add("task \(number)")
}

/// `todos-journal DIR N SNAPSHOT`: a journaled core dispatches the first N
/// actions, with a snapshot every SNAPSHOT records (0: none), then shuts down.
func todosJournal(_ directory: String, count: Int, snapshotEvery: Int) async {
  do {
    let journal = try FileJournal<Todos, TodoAction>(
      directory: directory, snapshotEvery: snapshotEvery == 0 ? nil : snapshotEvery)
    let core = try await Core(initialState: Todos(), journal: journal, reducer: todoReducer)
    for number in 1...count { try await core.dispatch(todoAction(number)) }
    await core.shutdown()
    say("wrote \(count)")
  } catch {
    fail("\(error)")
  }
}

/// `todos-report FILE N`: a core records the first N actions and writes the
/// recording to FILE.
func todosReport(_ file: String, count: Int) async {
  let core = Core(initialState: Todos(), reducer: todoReducer)
  let recorder = await core.record(last: 1_000)
  do {
    for number in 1...count { try await core.dispatch(todoAction(number)) }
    try await recorder.recording().write(to: file)
    say("wrote \(count)")
  } catch {
    fail("\(error)")
  }
}

/// `inspect ARGUMENTS…`: the inspector with these types.
func todosInspect(_ arguments: [String]) -> Never {
  exit(Inspector.run(arguments, initialState: Todos(), reducer: todoReducer))
}
