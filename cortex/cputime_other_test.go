//go:build !unix

package cortex_test

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
