"""The limits and sizes of tests/load/hostile_load.py, in one place: the verdicts' defaults (each
can be changed with an option of hostile_load.py), the good client's pace and address, and the
server's defaults the attacks check against. Standard library only."""


# ================================================================================================
# Limits and sizes, in one place
# ================================================================================================

DEFAULT_SECONDS = 8            # each attack's length (the slow-connection one holds at least 15 s)
P99_LIMIT_MS = 50              # the good client's p99 under every attack
MEMORY_LIMIT_MIB = 300         # the server's peak (VmHWM) through every attack
STREAM_LIMIT_MS = 200          # a phase change reaches every open stream within this
KILL_ABOVE_MIB = 2048          # a server past this is killed, so a runaway cannot take the machine

GOOD_ADDRESS = "127.0.0.2"
GOOD_INTERVAL_S = 0.02         # a new connection this often
GOOD_TIMEOUT_S = 2             # per socket operation; a request that times out is a failure
GOOD_PATHS = ("/api/health", "/api/stages")

PER_ADDRESS = 250              # attackers per source address, under the server's cap of 512
CONNECTIONS_PER_ADDRESS_CAP = 512   # the new server's max_connections_per_address default
HEADER_DEADLINE_S = 10.0       # the new server's header_deadline_ms default
NEW_LEARNERS_PER_HOUR = 60     # max_new_learners_per_address_per_hour, old and new
ROUND_LIMIT_S = 10             # a round of requests started before an attack's end gets this long
FD_RESERVE = 200               # descriptors kept for the test itself beyond an attack's sockets
KATEX = "/vendor/katex/katex.min.js"
STAGE = "reduction/3"
