// Package datadir guards a data directory against a second process. Lock
// takes an exclusive advisory lock on LockFile inside the directory and
// records who holds it (pid, command, addresses, start time), so a second
// process is refused with an error that names the holder. The kernel
// releases the lock when the holder exits, however it exits: a stale file
// never blocks a start.
package datadir
