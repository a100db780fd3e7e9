//go:build !unix

package pgtest

import "os"

// lockFile: scripts/test-services.sh, which starts a restartable server,
// runs on unix only.
func lockFile(*os.File) error { return nil }
