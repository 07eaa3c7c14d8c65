// The system's SQLite, for AsyncCoreSQLite and the benchmark's baseline rows.
#include <sqlite3.h>
