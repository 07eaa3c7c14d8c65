// asynccore-inspect: reads a journal's directory or a recording's file
// without changing it, and without your types.
//
//   asynccore-inspect verify PATH                every problem on a line; status 1 when any
//   asynccore-inspect list PATH [--filter NAME]  each action: number, time, its JSON on one line
//
// `state`, `diff` and `html` replay, so they need your State, Action and
// reducer: an executable of your own calls `Inspector.run` with them (see
// the "Journaling a Core" article). With `--stats` anywhere, it ends by
// writing the most memory it had resident (Linux), which shows that it
// streams a journal a record at a time.
//
// Exit status: 0 when all is well, 1 when the input has a problem (each on
// its own line on standard error), 2 for a command line or a path it cannot
// use (one line on standard error). Run without arguments, it prints its
// usage and these statuses.

import AsyncCoreJournal

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

exit(InspectorCommand(program: "asynccore-inspect").runWithoutTypes(Array(CommandLine.arguments.dropFirst())))
