import AsyncCore
import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Two counters: `.first` adds to `a` and returns `.send(.second)`, which
/// adds to `b`. A journal holds both, each as reduced.
struct Echoes: Codable, Sendable, Equatable {
  var a = 0
  var b = 0
}

enum EchoAction: Codable, Sendable, Equatable {
  case first
  case second
}

let echoReducer = Reduce<Echoes, EchoAction> { state, action in
  switch action {
  case .first:
    state.a += 1
    return .send(.second)
  case .second:
    state.b += 1
    return .none
  }
}

/// `echo-journal DIR N`: a durable core dispatches `.first` N times and
/// prints `state <json>`.
func echoJournal(_ directory: String, count: Int) async {
  do {
    let journal = try FileJournal<Echoes, EchoAction>(directory: directory, durability: .operatingSystem)
    let core = try await Core(initialState: Echoes(), journal: journal, reducer: echoReducer)
    for _ in 0..<count { try await core.dispatch(.first) }
    say("state \(echoLine(await core.state))")
    await core.shutdown()
  } catch {
    fail("\(error)")
  }
}

/// `echo-recover DIR`: a durable core opened on the journal prints
/// `recovered <json>`.
func echoRecover(_ directory: String) async {
  do {
    let journal = try FileJournal<Echoes, EchoAction>(directory: directory, durability: .operatingSystem)
    let core = try await Core(initialState: Echoes(), journal: journal, reducer: echoReducer)
    say("recovered \(echoLine(await core.state))")
    await core.shutdown()
  } catch {
    fail("\(error)")
  }
}

func echoLine(_ state: Echoes) -> String {
  do {
    return String(decoding: try JSONJournalCodec().encode(state), as: UTF8.self)
  } catch {
    fail("encoding the state: \(error)")
  }
}

/// `echo-inspect ARGUMENTS…`: the inspector with these types.
func echoInspect(_ arguments: [String]) -> Never {
  exit(Inspector.run(arguments, initialState: Echoes(), reducer: echoReducer))
}
