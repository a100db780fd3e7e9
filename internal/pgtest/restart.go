package pgtest

import (
	"os"
	"testing"

	"github.com/clawledger/clawledger/internal/testenv"
)

// The variables naming a test server that tests may stop and start (a
// server restart mid-ingest), and the command that does it (CTL stop,
// CTL start); scripts/test-services.sh sets both.
const (
	RestartableEnv = "CLAWLEDGER_TEST_POSTGRES_RESTARTABLE"
	CtlEnv         = "CLAWLEDGER_TEST_POSTGRES_CTL"
)

// Restartable returns the test server a test may stop and start and the
// command that does it, held for the test alone: go test runs packages at
// once, and a test of another package that restarts the server waits
// until this one ends (an advisory lock on a file beside the command,
// which the OS drops however the test process ends). It skips the test
// when no such server is set.
func Restartable(t testing.TB) (dsn, ctl string) {
	t.Helper()
	dsn, ctl = os.Getenv(RestartableEnv), os.Getenv(CtlEnv)
	if dsn == "" || ctl == "" {
		testenv.NoService(t, RestartableEnv+" and "+CtlEnv+" are not set: run scripts/test-services.sh go test ./... "+
			"(it starts a server the tests may stop and start)")
	}
	f, err := os.OpenFile(ctl+".lock", os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatalf("lock the restartable test server: %v", err)
	}
	if err := lockFile(f); err != nil {
		f.Close()
		t.Fatalf("lock the restartable test server: %v", err)
	}
	t.Cleanup(func() { f.Close() }) // closing the file lets the lock go
	return dsn, ctl
}
