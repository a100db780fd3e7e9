package sqlite

import "testing"

// TestReadPoolSize: the read pool lets a server's short reads run beside
// its long ones rather than queue for one of four connections.
func TestReadPoolSize(t *testing.T) {
	db, _ := openStateDir(t)
	if n := db.r.Stats().MaxOpenConnections; n < 8 {
		t.Errorf("the read pool has %d connections", n)
	}
}
