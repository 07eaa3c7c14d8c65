// The system's SQLite, for the benchmark's baseline rows only.
#include <sqlite3.h>
