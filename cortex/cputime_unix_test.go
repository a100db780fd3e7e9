//go:build unix

package cortex_test

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time (user and system) the process has used: steadier
// than wall time on a machine other jobs share.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
